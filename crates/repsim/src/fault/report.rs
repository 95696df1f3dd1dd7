//! Fault and load-balancer diagnostics: event names and freeze counts for summaries.
use crate::lb::LbEvent;
use crate::sim::Simulation;

/// Name of an event in `lb_events.csv` (the file itself is written by the CLI's tables).
pub fn event_name(e: &LbEvent) -> &'static str {
    match e {
        LbEvent::Froze { .. } => "froze",
        LbEvent::Unfroze => "unfroze",
        LbEvent::Rerouted => "rerouted",
    }
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
