//! Result files: `flows.csv`, `summary.json`, `scenario.toml`, their rows and columns (written
//! through [`crate::files`]).
use std::borrow::Borrow;

use anyhow::Result;
use repsim::engine::time::to_us;
use repsim::metrics::reorder::flow_row;
use repsim::metrics::{FlowRow, RunSummary};
use repsim::sim::FinishedFlow;
use serde::Serialize;

use crate::files::json_bytes;
use crate::series::{f6, Table};

/// Columns of `flows.csv`: the fixed ones, then `class` (traffic classes), `tag` (tagged
/// workloads) and `workload` (scenarios naming their workloads) where they apply.
const FLOWS: &[&str] = &[
    "lb",
    "id",
    "src",
    "dst",
    "bytes",
    "start",
    "finish",
    "fct_us",
    "retransmissions",
    "class",
    "tag",
    "workload",
];

/// Columns of `pfc.csv`.
pub const PFC: &[&str] = &[
    "lb",
    "link",
    "from",
    "to",
    "pauses_sent",
    "resumes_sent",
    "pauses_received",
    "paused_us",
    "max_headroom_bytes",
    "headroom_bytes",
];

/// Appends run `lb`'s rows of `pfc.csv` (one per link that saw a PFC frame: the paused
/// node's egress port towards the pausing switch) to `table`; nothing when PFC is off.
pub fn pfc_rows(table: &mut Table, sim: &repsim::Simulation, lb: &str) -> Result<()> {
    let Some(links) = sim.pfc_links() else {
        return Ok(());
    };
    let topo = sim.topology();
    for l in links {
        table.push(&[
            lb.to_string(),
            l.link.to_string(),
            topo.node_name(l.from),
            topo.node_name(l.to),
            l.pauses_sent.to_string(),
            l.resumes_sent.to_string(),
            l.pauses_received.to_string(),
            f6(l.paused_us),
            l.max_headroom.to_string(),
            l.headroom.to_string(),
        ])?;
    }
    Ok(())
}

/// Columns of `elephants.csv`: elephant flows per link and interval (`[metrics] elephants`'s
/// count for every scheme, else Reunion's own).
pub const ELEPHANTS: &[&str] = &["lb", "time_us", "link", "from", "to", "elephants"];

/// Appends run `lb`'s rows of `elephants.csv` (one per link and interval with elephants, at
/// the interval's end); nothing for runs that do not count elephants. Says whether it added any.
pub fn elephant_rows(table: &mut Table, sim: &repsim::Simulation, lb: &str) -> Result<bool> {
    let topo = sim.topology();
    let samples = sim.elephant_link_samples();
    for s in &samples {
        let link = &topo.links[s.link as usize];
        table.push(&[
            lb.to_string(),
            f6(to_us(s.time)),
            s.link.to_string(),
            topo.node_name(link.from),
            topo.node_name(link.to),
            s.elephants.to_string(),
        ])?;
    }
    Ok(!samples.is_empty())
}

/// `flows.csv`: one row per flow and load balancer; a trailing `class` column only when some
/// flows ran in a traffic class other than `main`, a `tag` column only when the workload
/// tagged some flows, and a `workload` column only when the scenario names its workloads.
pub fn flows_csv(rows: &[FlowRow]) -> Result<Vec<u8>> {
    let shape = FlowShape::of(rows);
    let mut table = Table::new("flows", &shape.columns());
    for r in rows {
        table.push(&flow_record(r, shape.mixed, shape.tagged))?;
    }
    table.into_csv()
}

/// Which optional columns `flows.csv` has for a set of rows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FlowShape {
    /// `class`: some flow ran in a traffic class other than `main`.
    pub mixed: bool,
    /// `tag`: the workload tagged some flow.
    pub tagged: bool,
    /// The reorder columns: a `[metrics] reorder` run.
    pub reorder: bool,
    /// `workload`: the scenario names its workloads.
    pub labelled: bool,
}

impl FlowShape {
    /// The shape of `rows` (owned or borrowing their strings), in one pass.
    pub fn of<R, S>(rows: impl IntoIterator<Item = R>) -> Self
    where
        R: Borrow<FlowRow<S>>,
        S: AsRef<str>,
    {
        rows.into_iter().fold(Self::default(), |shape, r| {
            let r = r.borrow();
            FlowShape {
                mixed: shape.mixed || r.class.as_ref() != "main",
                tagged: shape.tagged || r.tag != 0,
                reorder: shape.reorder || r.reorder.is_some(),
                labelled: shape.labelled || r.workload.is_some(),
            }
        })
    }

    /// The columns, in the file's order.
    pub fn columns(self) -> Vec<&'static str> {
        flow_columns(self.mixed, self.tagged, self.labelled, self.reorder)
    }
}

/// The trailing columns of `flows.csv` in `[metrics] reorder` runs (receiver reordering, see
/// `repsim::metrics::reorder`); streamed trace runs leave them out.
const REORDER: &[&str] = &[
    "out_of_order_fraction",
    "reorder_mean_packets",
    "reorder_max_packets",
    "reorder_mean_bytes",
    "reorder_max_bytes",
];

/// The columns of `flows.csv`, with or without `class`, `tag`, `workload` and the reorder
/// columns.
pub fn flow_columns(mixed: bool, tagged: bool, labelled: bool, reorder: bool) -> Vec<&'static str> {
    let mut columns = FLOWS[..FLOWS.len() - 3].to_vec();
    if mixed {
        columns.push("class");
    }
    if tagged {
        columns.push("tag");
    }
    if labelled {
        columns.push("workload");
    }
    if reorder {
        columns.extend_from_slice(REORDER);
    }
    columns
}

/// One row of `flows.csv` (columns as [`flow_columns`]).
pub fn flow_record(r: &FlowRow, mixed: bool, tagged: bool) -> Vec<String> {
    let opt = |v: Option<f64>| v.map(f6).unwrap_or_default();
    {
        let mut rec = vec![
            r.lb.clone(),
            r.id.to_string(),
            r.src.to_string(),
            r.dst.to_string(),
            r.bytes.to_string(),
            f6(r.start_us),
            opt(r.finish_us),
            opt(r.fct_us),
            r.retransmissions.to_string(),
        ];
        if mixed {
            rec.push(r.class.to_string());
        }
        if tagged {
            rec.push(r.tag.to_string());
        }
        // The workload column: present on every row of a scenario naming its workloads.
        if let Some(w) = &r.workload {
            rec.push(w.clone());
        }
        // Reorder columns: present on every row of a `[metrics] reorder` run.
        if let Some(v) = r.reorder {
            rec.extend([
                f6(v.out_of_order_fraction),
                f6(v.mean_packets),
                v.max_packets.to_string(),
                f6(v.mean_bytes),
                v.max_bytes.to_string(),
            ]);
        }
        rec
    }
}

/// The `flows.csv` row of a flow streamed out of run `lb` (finished, in traffic class
/// `class`, of the workload labelled `workload` if the scenario names them), with its reorder
/// columns if `reorder`.
pub fn finished_row(
    lb: &str,
    f: &FinishedFlow,
    class: &str,
    workload: Option<&str>,
    reorder: bool,
) -> FlowRow {
    FlowRow {
        lb: lb.to_string(),
        id: f.spec.id,
        src: f.spec.src,
        dst: f.spec.dst,
        bytes: f.spec.bytes,
        start_us: to_us(f.started_at),
        finish_us: Some(to_us(f.finish)),
        fct_us: Some(to_us(f.finish - f.started_at)),
        retransmissions: f.stats.retransmissions,
        class: class.to_string(),
        workload: workload.map(str::to_string),
        tag: f.spec.tag,
        reorder: reorder.then(|| flow_row(&f.stats.reorder, f.stats.max_reorder)),
    }
}

/// `slowdown.csv`: FCT slowdown per load balancer and flow-size bucket (the `all` row last).
pub fn slowdown_csv(runs: &[RunSummary]) -> Result<Vec<u8>> {
    let mut table = Table::new(
        "slowdown",
        &[
            "lb",
            "bucket",
            "min_bytes",
            "max_bytes",
            "flows",
            "mean",
            "p50",
            "p99",
            "p999",
        ],
    );
    for r in runs {
        for b in &r.slowdown {
            table.push(&[
                r.lb.clone(),
                b.bucket.clone(),
                b.min_bytes.to_string(),
                b.max_bytes.map(|m| m.to_string()).unwrap_or_default(),
                b.flows.to_string(),
                f6(b.mean),
                f6(b.p50),
                f6(b.p99),
                f6(b.p999),
            ])?;
        }
    }
    table.into_csv()
}

/// `collectives.csv`: per load balancer, iteration and step of a collective workload, when
/// its first flow started and its last finished; then each iteration's completion (`step` =
/// `all`). Unfinished steps have no end.
pub fn collectives_csv(rows: &[FlowRow]) -> Result<Vec<u8>> {
    use repsim::workload::collective::step_of;
    use std::collections::BTreeMap;
    let mut table = Table::new(
        "collectives",
        &[
            "lb",
            "iteration",
            "step",
            "flows",
            "start",
            "finish",
            "duration_us",
        ],
    );
    /// Flows of a step, its first start and its last finish (`None` if one is unfinished).
    type Span = (usize, f64, Option<f64>);
    // Keyed by (load balancer in order of appearance, iteration, step).
    let mut lbs: Vec<&str> = Vec::new();
    let mut steps: BTreeMap<(usize, u32, u32), Span> = BTreeMap::new();
    for r in rows {
        let lb = match lbs.iter().position(|l| *l == r.lb) {
            Some(i) => i,
            None => {
                lbs.push(&r.lb);
                lbs.len() - 1
            }
        };
        let (it, step) = step_of(r.tag);
        for key in [(lb, it, step), (lb, it, u32::MAX)] {
            let e = steps.entry(key).or_insert((0, f64::MAX, Some(0.0)));
            e.0 += 1;
            e.1 = e.1.min(r.start_us);
            e.2 = match (e.2, r.finish_us) {
                (Some(a), Some(b)) => Some(a.max(b)),
                _ => None,
            };
        }
    }
    for ((lb, it, step), (flows, start, end)) in steps {
        table.push(&[
            lbs[lb].to_string(),
            it.to_string(),
            if step == u32::MAX {
                "all".into()
            } else {
                step.to_string()
            },
            flows.to_string(),
            f6(start),
            end.map(f6).unwrap_or_default(),
            end.map(|e| f6(e - start)).unwrap_or_default(),
        ])?;
    }
    table.into_csv()
}

/// `summary.json`: `{"runs": [...]}`.
/// `incomplete`: why a resource limit stopped the command (absent for a complete run).
pub fn summary_json(runs: &[RunSummary], incomplete: Option<&str>) -> Result<Vec<u8>> {
    #[derive(Serialize)]
    struct Summary<'a> {
        #[serde(skip_serializing_if = "Option::is_none")]
        incomplete: Option<&'a str>,
        runs: &'a [RunSummary],
    }
    json_bytes(&Summary { incomplete, runs })
}

/// Column name of a summary field given as a dotted path: a field nested in a time keeps the
/// unit last (`fct_us.p99` is `fct_p99_us`); other nesting joins with `_`.
pub fn column(field: &str) -> String {
    match field.split_once('.') {
        Some((parent, child)) => match parent.strip_suffix("_us") {
            Some(stem) => format!("{stem}_{}_us", child.replace('.', "_")),
            None => field.replace('.', "_"),
        },
        None => field.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(class: &'static str, fct: Option<f64>) -> FlowRow {
        FlowRow {
            lb: "reps".into(),
            id: 1,
            src: 0,
            dst: 3,
            bytes: 4096,
            start_us: 0.5,
            finish_us: fct.map(|f| f + 0.5),
            fct_us: fct,
            retransmissions: 2,
            class: class.to_string(),
            workload: None,
            tag: 0,
            reorder: None,
        }
    }

    #[test]
    fn flows_csv_has_reorder_columns_only_when_measured() {
        let mut r = row("main", Some(10.0));
        r.reorder = Some(repsim::metrics::reorder::FlowReorder {
            out_of_order_fraction: 0.25,
            mean_packets: 1.5,
            max_packets: 3,
            mean_bytes: 6000.0,
            max_bytes: 12_000,
        });
        let text = String::from_utf8(flows_csv(&[r]).unwrap()).unwrap();
        assert_eq!(
            text,
            "lb,id,src,dst,bytes,start,finish,fct_us,retransmissions,out_of_order_fraction,\
             reorder_mean_packets,reorder_max_packets,reorder_mean_bytes,reorder_max_bytes\n\
             reps,1,0,3,4096,0.500000,10.500000,10.000000,2,0.250000,1.500000,3,6000.000000,12000\n"
        );
    }

    #[test]
    fn flows_csv_has_a_class_column_only_with_mixed_traffic() {
        let plain = String::from_utf8(flows_csv(&[row("main", Some(10.0))]).unwrap()).unwrap();
        assert_eq!(
            plain,
            "lb,id,src,dst,bytes,start,finish,fct_us,retransmissions\n\
             reps,1,0,3,4096,0.500000,10.500000,10.000000,2\n"
        );
        let mixed = flows_csv(&[row("main", Some(10.0)), row("background", None)]).unwrap();
        let mixed = String::from_utf8(mixed).unwrap();
        assert_eq!(
            mixed,
            "lb,id,src,dst,bytes,start,finish,fct_us,retransmissions,class\n\
             reps,1,0,3,4096,0.500000,10.500000,10.000000,2,main\n\
             reps,1,0,3,4096,0.500000,,,2,background\n"
        );
        let mut tagged = row("main", Some(10.0));
        tagged.tag = 7;
        let tagged = String::from_utf8(flows_csv(&[tagged]).unwrap()).unwrap();
        assert_eq!(
            tagged,
            "lb,id,src,dst,bytes,start,finish,fct_us,retransmissions,tag\n\
             reps,1,0,3,4096,0.500000,10.500000,10.000000,2,7\n"
        );
    }
}
