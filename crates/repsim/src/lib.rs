//! repsim: a deterministic packet-level simulator for datacenter multipath load balancing.
//!
//! The crate is a library first: build a [`sim::Simulation`] from a [`RunSpec`] (a topology, a
//! configuration and flows, or a scenario file's run via [`scenario`]), step it with
//! `run_until` or `run_until_completion`, add flows with `add_flow` or from an
//! [`sim::Observer`]'s callbacks, and read flows and counters. The `repsim` binary is a thin
//! layer on top; `docs/architecture.md` shows the layers, and `examples/ring_allreduce.rs` a
//! collective driven from outside.
//!
//! ```
//! use repsim::engine::time::{MS, US};
//! use repsim::net::topology::fat_tree::FatTreeSpec;
//! use repsim::workload::FlowSpec;
//! use repsim::{RunSpec, SimConfig, Simulation};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // 16 hosts, 4 per ToR, 400 Gb/s links of 1 us; REPS and MPRDMA by default.
//! let topology = FatTreeSpec::uniform(2, 16, 4, 16, 1, 400_000_000_000, US, 0)?.build()?;
//! let flows = vec![FlowSpec::new(1, 0, 12, 1 << 20, 0)];
//! let mut sim = Simulation::new(RunSpec::new(SimConfig::default(), topology, flows))?;
//! sim.run_until(5 * US); // the clock is now 5 us: a flow added now starts now
//! sim.add_flow(FlowSpec::new(2, 1, 13, 1 << 20, 0))?;
//! while let Some(f) = sim.run_until_completion(10 * MS) {
//!     let flow = &sim.flows()[f as usize];
//!     assert!(flow.fct().unwrap() > 20 * US); // 1 MiB at 400 Gb/s: 21 us of serialisation
//! }
//! assert!(sim.all_done());
//! # Ok(())
//! # }
//! ```
#![warn(missing_docs)]
pub mod cc;
pub mod engine;
pub mod error;
pub mod fault;
pub mod lb;
pub mod metrics;
pub mod net;
pub mod registry;
pub mod routing;
pub mod scenario;
pub mod sim;
pub mod transport;
pub mod units;
pub mod workload;

pub use error::ConfigError;
pub use registry::Registry;
pub use sim::{RunSpec, SimConfig, Simulation};
