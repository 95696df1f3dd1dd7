//! `repsim.load` and `Scenario`: a scenario file or TOML text with `--set`-style overrides,
//! parsed and checked exactly as `repsim run` and `repsim check` do.
use std::path::{Path, PathBuf};

use pyo3::prelude::*;
use repsim::scenario::{LoadedScenario, Override, ScenarioError as LibScenarioError};

use crate::errors::py_err;

/// The path that stands for a scenario given as text (messages name it; relative paths in it
/// are read from the working directory).
const TEXT_SOURCE: &str = "<string>";

/// The name of a scenario given as text without a `name`.
const TEXT_NAME: &str = "scenario";

/// A loaded, checked scenario.
#[pyclass(module = "repsim._repsim", frozen)]
pub struct Scenario {
    /// The scenario as the library holds it.
    pub(crate) loaded: LoadedScenario,
    /// Its source text before overrides (overrides are re-applied to it).
    text: String,
    /// The overrides applied, as `KEY=VALUE`.
    set: Vec<String>,
    /// Whether it came from a file (else from text).
    from_file: bool,
}

impl Scenario {
    /// Parses `text` (read from `path`, or given as text) with `set` applied and, with `check`,
    /// builds every run it names as `repsim check` does.
    fn parse(
        text: String,
        path: &Path,
        set: Vec<String>,
        from_file: bool,
        check: bool,
    ) -> PyResult<Self> {
        let overrides = set
            .iter()
            .map(|s| {
                Override::parse(s).map_err(|e| {
                    let key = s.split_once('=').map_or(s.as_str(), |(k, _)| k.trim());
                    py_err(LibScenarioError {
                        file: path.display().to_string(),
                        field: key.into(),
                        message: e.message,
                        also: Vec::new(),
                    })
                })
            })
            .collect::<PyResult<Vec<_>>>()?;
        let mut loaded = LoadedScenario::parse_with(&text, path, &overrides).map_err(py_err)?;
        if !from_file && loaded.scenario.name.is_none() {
            // Named after no file: results and sweeps need a name to go by.
            loaded.scenario.name = Some(TEXT_NAME.into());
        }
        if check {
            // What `repsim check` checks: every run and its simulation built.
            repsim_experiment::run::check_runs(&loaded, |_, _| Ok(())).map_err(py_err)?;
        }
        Ok(Scenario {
            loaded,
            text,
            set,
            from_file,
        })
    }

    /// The file name `run.json` records.
    pub(crate) fn source(&self) -> String {
        self.loaded.path.display().to_string()
    }
}

#[pymethods]
impl Scenario {
    /// The scenario's name (its `name` field, else the file's stem).
    #[getter]
    fn name(&self) -> String {
        self.loaded.name()
    }

    /// The file it was read from, or `None` for a scenario given as text.
    #[getter]
    fn path(&self) -> Option<String> {
        self.from_file.then(|| self.source())
    }

    /// The overrides applied to it, as `KEY=VALUE` text.
    #[getter]
    fn overrides(&self) -> Vec<String> {
        self.set.clone()
    }

    /// The labels of the runs it makes (one per load balancer entry of `lb`).
    #[getter]
    fn lbs(&self) -> PyResult<Vec<String>> {
        let runs = self.loaded.runs().map_err(py_err)?;
        Ok(runs.into_iter().map(|r| r.label).collect())
    }

    /// The seed its runs use unless `run` is given another.
    #[getter]
    fn seed(&self) -> u64 {
        self.loaded.scenario.seed
    }

    /// The scenario, overrides applied, as TOML text that `load` reads back to the same
    /// scenario.
    fn to_toml(&self) -> PyResult<String> {
        let mut s = self.loaded.scenario.clone();
        s.name = Some(self.loaded.name());
        toml::to_string_pretty(&s).map_err(py_err)
    }

    /// A copy with more overrides (`KEY=VALUE` text) applied after its own, checked as
    /// `load` checks unless `check` is false.
    #[pyo3(signature = (set, check=true))]
    fn with_overrides(&self, set: Vec<String>, check: bool) -> PyResult<Scenario> {
        let all = self.set.iter().cloned().chain(set).collect();
        Scenario::parse(
            self.text.clone(),
            &self.loaded.path,
            all,
            self.from_file,
            check,
        )
    }

    fn __repr__(&self) -> String {
        let source = if self.from_file {
            self.source()
        } else {
            "text".into()
        };
        format!("Scenario({:?} from {source})", self.loaded.name())
    }
}

/// Loads a scenario from the file `path` or from TOML `text` (exactly one), applies `set`
/// (`KEY=VALUE` text, as `repsim run --set`) and, with `check`, builds every run as `repsim
/// check` does (a run or co-simulation of it builds them anyway and skips it).
#[pyfunction]
#[pyo3(signature = (path=None, text=None, set=Vec::new(), check=true))]
pub fn load(
    path: Option<PathBuf>,
    text: Option<String>,
    set: Vec<String>,
    check: bool,
) -> PyResult<Scenario> {
    match (path, text) {
        (Some(path), None) => {
            let text = std::fs::read_to_string(&path).map_err(|e| {
                py_err(LibScenarioError {
                    file: path.display().to_string(),
                    field: "-".into(),
                    message: format!("cannot read: {e}"),
                    also: Vec::new(),
                })
            })?;
            Scenario::parse(text, &path, set, true, check)
        }
        (None, Some(text)) => Scenario::parse(text, Path::new(TEXT_SOURCE), set, false, check),
        _ => Err(pyo3::exceptions::PyTypeError::new_err(
            "give exactly one of path and text",
        )),
    }
}

/// An override's key and its value as TOML text, as `--set KEY=VALUE` reads it (a value that
/// is not TOML is a string): how a sweep file writes it.
#[pyfunction]
pub fn override_toml(text: &str) -> PyResult<(String, String)> {
    let o =
        Override::parse(text).map_err(|e| pyo3::exceptions::PyValueError::new_err(e.message))?;
    Ok((o.key, o.value.to_string()))
}
