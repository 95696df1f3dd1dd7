//! repsim: a deterministic packet-level simulator for datacenter multipath load balancing.
//!
//! The crate is a library first: build a [`sim::Simulation`] from a topology, a configuration
//! and flows (or from a scenario file via [`scenario`]), step it with `run_until`, inject flows
//! with `add_flow`, and poll `take_completions`. The `repsim` binary is a thin layer on top.
pub mod cc;
pub mod engine;
pub mod fault;
pub mod lb;
pub mod metrics;
pub mod net;
pub mod routing;
pub mod scenario;
pub mod sim;
pub mod transport;
pub mod units;
pub mod workload;

pub use sim::{RunSpec, SimConfig, Simulation};
