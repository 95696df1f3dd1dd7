//! Fault and load-balancer diagnostics for result files: `lb_events.csv` rows, freeze counts.
use serde::Serialize;

use crate::engine::time::to_us;
use crate::lb::LbEvent;
use crate::sim::Simulation;

/// One row of `lb_events.csv`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LbEventRow {
    /// Load balancer of the run.
    pub lb: String,
    /// When (us).
    pub time_us: f64,
    /// Flow id (as in flows.csv).
    pub flow_id: u64,
    /// `froze`, `unfroze` or `rerouted`.
    pub event: &'static str,
}

/// Name of an event in `lb_events.csv`.
pub fn event_name(e: &LbEvent) -> &'static str {
    match e {
        LbEvent::Froze { .. } => "froze",
        LbEvent::Unfroze => "unfroze",
        LbEvent::Rerouted => "rerouted",
    }
}

/// The load-balancer events of a run, in time order.
pub fn lb_event_rows(sim: &Simulation, lb: &str) -> Vec<LbEventRow> {
    sim.lb_records()
        .iter()
        .map(|r| LbEventRow {
            lb: lb.to_string(),
            time_us: to_us(r.time),
            flow_id: sim.flows()[r.flow as usize].spec.id,
            event: event_name(&r.event),
        })
        .collect()
}

/// `lb_events.csv` text: header `lb,time_us,flow_id,event`.
pub fn lb_events_csv(rows: &[LbEventRow]) -> String {
    let mut s = String::from("lb,time_us,flow_id,event\n");
    for r in rows {
        s += &format!("{},{:.6},{},{}\n", r.lb, r.time_us, r.flow_id, r.event);
    }
    s
}

/// (freezes, unfreezes) recorded in a run.
pub fn freeze_counts(sim: &Simulation) -> (u64, u64) {
    let mut c = (0, 0);
    for r in sim.lb_records() {
        match r.event {
            LbEvent::Froze { .. } => c.0 += 1,
            LbEvent::Unfroze => c.1 += 1,
            LbEvent::Rerouted => {}
        }
    }
    c
}
