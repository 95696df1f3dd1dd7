//! Runs htsim command lines and the UEC reference simulator's (uet-htsim's) validation plans
//! on repsim.
//!
//! - [`args`] reads an `htsim_uec` command line with the reference's defaults;
//! - [`matrix`] reads its connection matrices as that simulator reads them;
//! - [`artifact`] does the same for the REPS paper's artifact htsim (`--artifact reps`);
//! - [`build`] turns both into a repsim scenario (TOML the scenario loader accepts), with the
//!   queue sizes, ECN thresholds and timeout the reference derives written out;
//! - [`run`] simulates it and prints the lines the reference's validation reads;
//! - [`plan`] reads validation plans and committed outputs, and [`validate`] runs a plan in
//!   parallel and sets every number beside the reference's.
//!
//! The `repsim` binary exposes them as `repsim htsim ARGS...` and `repsim validate-plan`.
pub mod args;
pub mod artifact;
pub mod build;
pub mod error;
pub mod matrix;
pub mod plan;
pub mod run;
pub mod validate;

pub use args::HtsimArgs;
pub use error::{HtsimError, Result};
pub use validate::{PlanReport, ValidateOptions};
