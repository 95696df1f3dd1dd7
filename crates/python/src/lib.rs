//! The `repsim` Python package's native module, `repsim._repsim`: a thin layer over the
//! simulator library (`repsim`) and what the command runs (`repsim-cli`'s library). It holds no
//! simulation logic; the pure-Python package (`python/repsim/__init__.py`) wraps it in the
//! public API with polars data frames.
mod cosim;
mod errors;
mod frames;
mod interrupt;
mod results;
mod scenario;
mod studies;

use pyo3::prelude::*;

/// The native module.
#[pymodule]
mod _repsim {
    #[pymodule_export]
    use super::cosim::{SimulatedFlow, Simulation};
    #[pymodule_export]
    use super::errors::ScenarioError;
    #[pymodule_export]
    use super::frames::ArrowTable;
    #[pymodule_export]
    use super::results::{run, RunResult};
    #[pymodule_export]
    use super::scenario::{load, override_toml, Scenario};
    #[pymodule_export]
    use super::studies::{figure, figure_ids, parse_time, sweep, FigureOutcome};

    use pyo3::prelude::*;

    /// Module set-up: the package version.
    #[pymodule_init]
    fn init(m: &Bound<'_, PyModule>) -> PyResult<()> {
        m.add("__version__", env!("CARGO_PKG_VERSION"))?;
        Ok(())
    }
}
