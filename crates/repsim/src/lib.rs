//! repsim: a deterministic packet-level simulator for datacenter multipath load balancing.
//!
//! The crate is a library first: build a [`sim::Simulation`] from a [`RunSpec`] (a topology, a
//! configuration and flows, or a scenario file's run via [`scenario`]), step it with
//! `run_until` or `run_until_completion`, add flows with `add_flow` or from an
//! [`sim::Observer`]'s callbacks, and read flows and counters. The `repsim` binary is a thin
//! layer on top; `docs/architecture.md` shows the layers, and `examples/ring_allreduce.rs` a
//! collective driven from outside.
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
