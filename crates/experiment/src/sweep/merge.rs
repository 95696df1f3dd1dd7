//! `sweep.csv`: one row per point and load balancer, the axis values as columns, read from the
//! points' `summary.json`. Only simulated quantities go in (no wall times), so the file is the
//! same whether a sweep ran at once, resumed after a kill, or ran as a Slurm array.
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use super::spec::Sweep;
use crate::files::{json_bytes, write_atomic};
use crate::output::column;
use crate::series::MARKER;

/// Name of the manifest a sweep writes into its output directory (read by `merge`).
pub const MANIFEST: &str = "sweep.json";

/// Directory of point `index` under `out`.
pub fn point_dir(out: &Path, index: usize) -> PathBuf {
    out.join("points").join(format!("{index:04}"))
}

/// Writes the manifest (the expanded sweep) into `out`.
pub fn write_manifest(sweep: &Sweep, out: &Path) -> Result<()> {
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    write_atomic(&out.join(MANIFEST), &json_bytes(sweep)?)
}

/// Reads the manifest of the sweep in `out`.
pub fn read_manifest(out: &Path) -> Result<Sweep> {
    let path = out.join(MANIFEST);
    let bytes = std::fs::read(&path).with_context(|| {
        format!(
            "reading {} (is {} a sweep's output directory?)",
            path.display(),
            out.display()
        )
    })?;
    serde_json::from_slice(&bytes).with_context(|| format!("parsing {}", path.display()))
}

/// Summary fields copied into `sweep.csv` (`fct_us.*` nested), in column order.
const FIELDS: &[&str] = &[
    "seed",
    "flows_total",
    "flows_completed",
    "fct_us.min",
    "fct_us.mean",
    "fct_us.p50",
    "fct_us.p99",
    "fct_us.max",
    "drops",
    "trims",
    "ecn_marks",
    "retransmissions",
    "timeouts",
    "ack_overhead",
    "events",
    "sim_time_us",
];

/// Derived columns after the summary fields: a collective's completion (the `all` row of the
/// point's `collectives.csv`; empty when unfinished or not a collective), with mixed traffic
/// the max FCT of the foreground (`main`) and `background` classes, and with `[metrics]
/// elephants` the elephant collisions (see [`elephant_collisions`]), and with `[metrics]
/// reorder` the receivers' reordering: the fraction of data packets that arrived out of order
/// and the mean, p99 and max of the bytes held above the cumulative point ([`REORDER`]).
const DERIVED: &[&str] = &[
    "collective_us",
    "fct_max_main_us",
    "fct_max_background_us",
    "elephant_collisions",
    "out_of_order_fraction",
    "reorder_mean_bytes",
    "reorder_p99_bytes",
    "reorder_max_bytes",
];

/// Where the reorder columns come from in a run's summary (`reorder` entry).
const REORDER: &[&str] = &[
    "out_of_order_fraction",
    "buffer_bytes.mean",
    "buffer_bytes.p99",
    "buffer_bytes.max",
];

/// Of the (link, period) samples of `lb` in `elephants.csv` text (links that carried an
/// elephant in a period) from the second half of the sampled time, the share that carried two
/// or more: collisions left after the schemes have had time to converge (Reunion Fig. 3; the
/// ideal is 0). `None` without samples.
pub fn elephant_collisions(text: &str, lb: &str) -> Option<f64> {
    // Columns: lb,time_us,link,from,to,elephants.
    let samples: Vec<(f64, u32)> = text
        .lines()
        .skip(1)
        .filter_map(|line| {
            let f: Vec<&str> = line.split(',').collect();
            if f.len() != 6 || f[0] != lb {
                return None;
            }
            Some((f[1].parse().ok()?, f[5].parse().ok()?))
        })
        .collect();
    let last = samples.iter().map(|s| s.0).fold(f64::NAN, f64::max);
    let (late, collided) = samples
        .iter()
        .filter(|s| s.0 > last / 2.0)
        .fold((0usize, 0usize), |(n, c), s| {
            (n + 1, c + (s.1 >= 2) as usize)
        });
    (late > 0).then(|| collided as f64 / late as f64)
}

/// The derived columns of run `run` (load balancer `lb`) of the point in `dir`.
fn derived(dir: &Path, run: &serde_json::Value, lb: &str) -> Vec<String> {
    let collective = std::fs::read_to_string(dir.join("collectives.csv"))
        .ok()
        .and_then(|text| {
            // Columns: lb,iteration,step,flows,start,finish,duration_us; the longest
            // iteration counts (one per run in the figures).
            let mut ends = text.lines().skip(1).filter_map(|line| {
                let f: Vec<&str> = line.split(',').collect();
                (f.len() == 7 && f[0] == lb && f[2] == "all").then(|| f[6].to_string())
            });
            let first = ends.next()?;
            Some(ends.fold(first, |a, b| {
                if a.is_empty() || b.is_empty() {
                    String::new()
                } else if b.parse::<f64>().ok() > a.parse::<f64>().ok() {
                    b
                } else {
                    a
                }
            }))
        })
        .unwrap_or_default();
    let class_max = |name: &str| {
        run["classes"]
            .as_array()
            .and_then(|cs| cs.iter().find(|c| c["class"].as_str() == Some(name)))
            .map(|c| match &c["fct_us"]["max"] {
                serde_json::Value::Null => String::new(),
                v => v.to_string(),
            })
            .unwrap_or_default()
    };
    let collisions = std::fs::read_to_string(dir.join("elephants.csv"))
        .ok()
        .and_then(|text| elephant_collisions(&text, lb))
        .map(|v| v.to_string())
        .unwrap_or_default();
    let mut cells = vec![
        collective,
        class_max("main"),
        class_max("background"),
        collisions,
    ];
    cells.extend(REORDER.iter().map(|path| {
        match path.split('.').fold(&run["reorder"], |v, part| &v[part]) {
            serde_json::Value::Null => String::new(),
            v => v.to_string(),
        }
    }));
    cells
}

/// A CSV cell: quoted when it holds a comma, quote or newline.
fn cell(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Builds `sweep.csv` from the finished points; fails naming the points that are not finished.
pub fn sweep_csv(sweep: &Sweep, out: &Path) -> Result<String> {
    sweeps_csv(&[(sweep, out)])
}

/// One `sweep.csv` for several sweeps over the same points, each run into its own directory
/// (a figure panel's one sweep per load balancer): for every point, the rows of each sweep in
/// turn, so that the file reads exactly as one sweep of all their load balancers would write it.
pub fn sweeps_csv(parts: &[(&Sweep, &Path)]) -> Result<String> {
    let Some(&(first, _)) = parts.first() else {
        bail!("no sweep to write a sweep.csv for");
    };
    for (sweep, out) in parts {
        if sweep.columns != first.columns || sweep.points.len() != first.points.len() {
            bail!(
                "{}: not the same points as {}",
                out.display(),
                first.file.display()
            );
        }
        let missing: Vec<usize> = sweep
            .points
            .iter()
            .filter(|p| !point_dir(out, p.index).join(MARKER).exists())
            .map(|p| p.index)
            .collect();
        if !missing.is_empty() {
            bail!(
                "{} of {} points are not finished (no {MARKER}): {:?}; run them first (repsim sweep FILE, or --point I)",
                missing.len(),
                sweep.points.len(),
                missing
            );
        }
    }
    // `lb` and `seed` are result columns already (each row's load balancer and seed).
    let axis_columns: Vec<&String> = first
        .columns
        .iter()
        .filter(|c| *c != "lb" && *c != "seed")
        .collect();
    let mut header = vec!["point".to_string()];
    header.extend(axis_columns.iter().map(|c| cell(c)));
    header.push("lb".into());
    header.extend(FIELDS.iter().map(|f| column(f)));
    header.extend(DERIVED.iter().map(|c| c.to_string()));
    let mut csv = header.join(",") + "\n";
    for p in &first.points {
        for (_, out) in parts {
            let dir = point_dir(out, p.index);
            let path = dir.join("summary.json");
            let bytes =
                std::fs::read(&path).with_context(|| format!("reading {}", path.display()))?;
            let summary: serde_json::Value = serde_json::from_slice(&bytes)
                .with_context(|| format!("parsing {}", path.display()))?;
            let runs = summary["runs"].as_array().cloned().unwrap_or_default();
            for run in runs {
                let mut row = vec![p.index.to_string()];
                for c in &axis_columns {
                    let label = p
                        .values
                        .iter()
                        .find(|a| &&a.key == c)
                        .map(|a| a.label.as_str());
                    row.push(cell(label.unwrap_or("")));
                }
                row.push(cell(run["lb"].as_str().unwrap_or("")));
                for f in FIELDS {
                    let v = f.split('.').fold(&run, |v, part| &v[part]);
                    row.push(match v {
                        serde_json::Value::Null => String::new(),
                        serde_json::Value::String(s) => cell(s),
                        other => other.to_string(),
                    });
                }
                let lb = run["lb"].as_str().unwrap_or("");
                row.extend(derived(&dir, &run, lb));
                csv += &(row.join(",") + "\n");
            }
        }
    }
    Ok(csv)
}

/// Writes `sweep.csv` into `out`; returns its path.
pub fn write_sweep_csv(sweep: &Sweep, out: &Path) -> Result<PathBuf> {
    let csv = sweep_csv(sweep, out)?;
    let path = out.join("sweep.csv");
    write_atomic(&path, csv.as_bytes())?;
    Ok(path)
}

/// `repsim sweep merge DIR`.
pub fn merge(out: &Path) -> Result<()> {
    let sweep = read_manifest(out)?;
    let path = write_sweep_csv(&sweep, out)?;
    println!("{}", path.display());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::elephant_collisions;

    #[test]
    fn collisions_count_the_second_half_of_one_load_balancers_samples() {
        let text = "lb,time_us,link,from,to,elephants\n\
                    a,100.000000,1,leaf0,spine0,3\n\
                    a,200.000000,1,leaf0,spine0,2\n\
                    a,300.000000,1,leaf0,spine0,1\n\
                    a,400.000000,2,leaf0,spine1,2\n\
                    a,400.000000,3,leaf0,spine2,1\n\
                    b,400.000000,1,leaf0,spine0,5\n";
        // a's last sample is at 400 us: 300 and 400 us count, one of three carries two.
        assert_eq!(elephant_collisions(text, "a"), Some(1.0 / 3.0));
        assert_eq!(elephant_collisions(text, "b"), Some(1.0));
        assert_eq!(elephant_collisions(text, "c"), None);
    }

    /// Per-scheme sweeps over the same points combine point by point in the given order; a
    /// sweep over other points is refused.
    #[test]
    fn per_scheme_sweeps_combine_point_by_point() {
        use super::{point_dir, sweeps_csv, MARKER};
        use crate::sweep::spec::{Sweep, SweepFile};
        use std::path::Path;
        let dir = tempfile::tempdir().unwrap();
        let sweep = |lb: &str, loads: &str| {
            let text = format!(
                "scenario = \"x.toml\"\nlb = [\"{lb}\"]\n[[axis]]\nkey = \"workload.load\"\nvalues = [{loads}]\n"
            );
            let file: SweepFile = toml::from_str(&text).unwrap();
            Sweep::from_file(Path::new("s.toml"), file).unwrap()
        };
        let (ecmp, laps) = (sweep("ecmp", "0.5, 0.6"), sweep("laps", "0.5, 0.6"));
        for (lb, points) in [("ecmp", 2), ("laps", 2), ("plb", 1)] {
            for i in 0..points {
                let point = point_dir(&dir.path().join(lb), i);
                std::fs::create_dir_all(&point).unwrap();
                let summary = format!("{{\"runs\": [{{\"lb\": \"{lb}\", \"seed\": {i}}}]}}");
                std::fs::write(point.join("summary.json"), summary).unwrap();
                std::fs::write(point.join(MARKER), "").unwrap();
            }
        }
        let (a, b) = (dir.path().join("ecmp"), dir.path().join("laps"));
        let csv = sweeps_csv(&[(&ecmp, &a), (&laps, &b)]).unwrap();
        let rows: Vec<String> = csv
            .lines()
            .skip(1)
            .map(|l| l.split(',').take(4).collect::<Vec<_>>().join(","))
            .collect();
        assert_eq!(
            rows,
            [
                "0,0.5,ecmp,0",
                "0,0.5,laps,0",
                "1,0.6,ecmp,1",
                "1,0.6,laps,1"
            ]
        );
        let plb = sweep("plb", "0.5");
        let c = dir.path().join("plb");
        assert!(sweeps_csv(&[(&ecmp, &a), (&plb, &c)]).is_err());
    }
}
