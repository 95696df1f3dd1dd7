//! A load balancer written outside the crate, registered at run time and named by a scenario
//! file like a built-in one.
//!
//! `ecn-rehash` keeps one entropy value per connection and moves to a random new one after
//! `marks` ECN-marked ACKs in a row (a bare-bones relative of PLB). The program registers it,
//! runs REPS Fig. 4's asymmetric micro-benchmark (`scenarios/reps-micro-asymmetric.toml`,
//! one of eight uplinks at a quarter of its speed) under it, OPS and REPS, and prints each
//! run's flow completion times.
//!
//! Run it from the repository root with `cargo run --release -p repsim --example custom_scheme
//! [marks]`.
use std::path::Path;

use repsim::engine::time::US;
use repsim::engine::{Rng, Time};
use repsim::lb::{AckFeedback, LbContext, LbEvent, LbScheme, LoadBalancer, PathChoice};
use repsim::net::RunContext;
use repsim::scenario::LoadedScenario;
use repsim::ConfigError;
use repsim::{Registry, Simulation};
use serde::{Deserialize, Serialize};

/// `lb = { scheme = "ecn-rehash", marks = 4 }`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct EcnRehashConfig {
    /// ECN-marked ACKs in a row that move the connection.
    marks: u32,
}

impl Default for EcnRehashConfig {
    fn default() -> Self {
        EcnRehashConfig { marks: 4 }
    }
}

impl LbScheme for EcnRehashConfig {
    fn validate(&self, _ctx: &RunContext) -> Result<(), ConfigError> {
        if self.marks == 0 {
            return Err(ConfigError::new("marks", "must be positive"));
        }
        Ok(())
    }

    fn build(&self, ctx: &LbContext, rng: &mut Rng) -> Box<dyn LoadBalancer> {
        let evs = ctx.evs(None);
        Box::new(EcnRehash {
            ev: rng.below(evs) as u16,
            evs,
            marks: self.marks,
            marked: 0,
            move_next: false,
        })
    }
}

/// One connection's state.
struct EcnRehash {
    ev: u16,
    evs: u32,
    marks: u32,
    marked: u32,
    move_next: bool,
}

impl LoadBalancer for EcnRehash {
    fn next(&mut self, _now: Time, rng: &mut Rng) -> PathChoice {
        if self.move_next {
            self.ev = rng.below(self.evs) as u16;
            self.move_next = false;
        }
        PathChoice::ev(self.ev)
    }

    fn on_ack(&mut self, ack: &AckFeedback) -> Option<LbEvent> {
        self.marked = if ack.ecn { self.marked + 1 } else { 0 };
        if self.marked < self.marks {
            return None;
        }
        self.marked = 0;
        self.move_next = true;
        Some(LbEvent::REROUTED)
    }
}

/// One run's results: its label, mean and largest FCT (us), and reroutes.
type Row = (String, f64, f64, usize);

/// Runs the scenario under `ecn-rehash` (moving after `marks` marks), OPS and REPS.
fn rows(marks: u32) -> Result<Vec<Row>, Box<dyn std::error::Error>> {
    Registry::add_lb::<EcnRehashConfig>("ecn-rehash")?;
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/reps-micro-asymmetric.toml");
    let overrides = [repsim::scenario::Override::parse(&format!(
        "lb=[{{ scheme = \"ecn-rehash\", marks = {marks} }}, \"ops\", \"reps\"]"
    ))?];
    let scenario = LoadedScenario::load_with(&path, &overrides)?;
    let mut rows = Vec::new();
    for run in scenario.runs()? {
        let mut sim = Simulation::new(scenario.build_run(&run, None)?)?;
        sim.run_until_idle();
        let fcts: Vec<f64> = sim
            .flows()
            .iter()
            .map(|f| f.fct().map_or(f64::NAN, |t| t as f64 / US as f64))
            .collect();
        let mean = fcts.iter().sum::<f64>() / fcts.len() as f64;
        let max = fcts.iter().cloned().fold(f64::NAN, f64::max);
        let reroutes = sim
            .lb_records()
            .iter()
            .filter(|r| r.event == LbEvent::REROUTED)
            .count();
        rows.push((run.label, mean, max, reroutes));
    }
    Ok(rows)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let marks: u32 = match std::env::args().nth(1) {
        Some(m) => m.parse().map_err(|e| format!("marks '{m}': {e}"))?,
        None => 4,
    };
    println!(
        "{:<12} {:>10} {:>10} {:>9}",
        "lb", "mean (us)", "max (us)", "reroutes"
    );
    for (label, mean, max, reroutes) in rows(marks)? {
        println!("{label:<12} {mean:>10.1} {max:>10.1} {reroutes:>9}");
    }
    Ok(())
}

#[test]
fn the_registered_scheme_runs_beside_the_built_ins() {
    let rows = rows(4).expect("runs");
    let labels: Vec<&str> = rows.iter().map(|r| r.0.as_str()).collect();
    assert_eq!(labels, ["ecn-rehash", "ops", "reps"]);
    // Every flow finished (a NaN would poison the mean) and the slow uplink made some
    // connections move.
    assert!(rows.iter().all(|r| r.1.is_finite()), "{rows:?}");
    assert!(rows[0].3 > 0, "{rows:?}");
}
