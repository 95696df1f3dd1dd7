//! What the `repsim` command runs, as a library: a scenario's runs and their output files,
//! sweeps and paper figures. The command line (`main.rs`) and the Python package
//! (`crates/python`) are thin layers over it.
pub mod cells;
pub mod figure;
pub mod files;
pub mod heap;
pub mod limits;
pub mod output;
#[cfg(feature = "parquet")]
pub mod parquet_out;
pub mod plots;
pub mod prepared;
pub mod progress;
pub mod report;
pub mod run;
pub mod run_outputs;
pub mod scale;
pub mod series;
pub mod sweep;
