//! Running repsim scenarios and writing their outputs, as a library: a scenario's runs and
//! their files ([`run::run_scenario`] is the one call), sweeps, resource limits, progress bars,
//! run reports and the engine benchmarks. The command line (`crates/cli`), the paper figures
//! (`crates/figures`) and the Python package (`crates/python`) are layers over it.
#![warn(missing_docs)]

pub mod cells;
pub mod check;
pub mod files;
pub mod heap;
pub mod limits;
pub mod names;
pub mod output;
#[cfg(feature = "parquet")]
pub mod parquet_out;
pub mod prepared;
pub mod progress;
pub mod report;
pub mod run;
pub mod run_outputs;
pub mod scale;
pub mod series;
pub mod sweep;
pub mod threads;

/// The commit the library is built from (short hash, `-dirty` when tracked files differ from
/// it, `unknown` outside a git checkout), recorded in `run.json` and figure provenance.
pub const COMMIT: &str = env!("REPSIM_COMMIT");
