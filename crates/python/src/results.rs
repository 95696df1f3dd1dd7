//! `repsim.run` and its `RunResult`: the runs of a scenario simulated off the interpreter
//! (Ctrl-C stops them), their outputs held in memory as `repsim run` holds them before writing,
//! so that `write` produces the command's files and the tables come out as Arrow.
use std::path::PathBuf;
use std::sync::Mutex;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use repsim_experiment::limits::Limits;
use repsim_experiment::output::{collectives_csv, slowdown_csv};
use repsim_experiment::prepared::CollectMode;
use repsim_experiment::run::{execute, Completed, RunOptions};
use repsim_experiment::series::{Format, Table};

use crate::errors::py_err;
use crate::frames::{self, arrow_err, ArrowTable};
use crate::interrupt::run_interruptible;
use crate::scenario::Scenario;

/// The tables a result has, by file stem, in the order `repsim run` writes them.
const TABLES: &[&str] = &[
    "flows",
    "summary",
    "slowdown",
    "collectives",
    "flow_stats",
    "lb_events",
    "ports",
    "port_series",
    "cwnd",
    "pfc",
    "elephants",
];

/// The finished runs of a scenario.
#[pyclass(module = "repsim._repsim", frozen)]
pub struct RunResult {
    done: Mutex<Completed>,
    /// The scenario file (or `<string>`), for `run.json`.
    source: String,
    /// Why the command would fail after writing its files (flows that could not reach their
    /// destination), if it would.
    failure: Option<String>,
}

impl RunResult {
    fn done(&self) -> std::sync::MutexGuard<'_, Completed> {
        // A panic while the lock was held leaves the outputs as they were: still readable.
        self.done.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A table's CSV text as a table.
fn csv_table(table: &mut Table) -> PyResult<ArrowTable> {
    let text = table.csv().map_err(py_err)?;
    frames::from_csv(text).map_err(arrow_err)
}

#[pymethods]
impl RunResult {
    /// The table of file stem `name` (see `tables`); tables a run did not fill have their
    /// columns and no rows.
    fn table(&self, name: &str) -> PyResult<ArrowTable> {
        let mut done = self.done();
        let done = &mut *done;
        let o = &mut done.outputs;
        match name {
            "flows" => frames::flows(o.rows.iter()).map_err(arrow_err),
            "summary" => frames::summary(&o.runs).map_err(arrow_err),
            "slowdown" => {
                frames::from_csv(&slowdown_csv(&o.runs).map_err(py_err)?).map_err(arrow_err)
            }
            "collectives" => {
                let rows = if done.collectives { &o.rows[..] } else { &[] };
                frames::from_csv(&collectives_csv(rows).map_err(py_err)?).map_err(arrow_err)
            }
            "pfc" => csv_table(&mut o.pfc),
            "elephants" => csv_table(&mut o.elephants),
            other => match o.tables.table(other) {
                Some(t) => csv_table(t),
                None => Err(PyValueError::new_err(format!(
                    "no table {other:?}; the tables are {}",
                    TABLES.join(", ")
                ))),
            },
        }
    }

    /// The stems of the tables this result writes as files (`flows`, `slowdown`, ...).
    fn written_tables(&self) -> Vec<String> {
        let stems = self.done().table_stems();
        stems.into_iter().map(str::to_string).collect()
    }

    /// `summary.json`'s text.
    fn summary_json(&self) -> PyResult<String> {
        let bytes = self.done().summary_json().map_err(py_err)?;
        String::from_utf8(bytes).map_err(py_err)
    }

    /// Why `repsim run` would fail on these runs once its files are written (flows that could
    /// not reach their destination), or `None`.
    #[getter]
    fn failure(&self) -> Option<String> {
        self.failure.clone()
    }

    /// The labels of the runs, in order.
    #[getter]
    fn lbs(&self) -> Vec<String> {
        self.done()
            .outputs
            .runs
            .iter()
            .map(|r| r.lb.clone())
            .collect()
    }

    /// Writes `repsim run`'s files into `dir` (created if missing); returns their names.
    fn write(&self, py: Python<'_>, dir: PathBuf) -> PyResult<Vec<String>> {
        let command = vec![
            "python".to_string(),
            "repsim.run".into(),
            self.source.clone(),
        ];
        py.detach(|| self.done().write(&dir, self.source.clone(), command))
            .map_err(py_err)
    }
}

/// Runs `scenario` once per load balancer (`lb`: labels or names, default the scenario's) with
/// `seed` (default the scenario's), `jobs` load balancers at once (0: one per core), each
/// simulation on `threads` threads (default: as `repsim run`'s), and
/// `collect` (`scenario`, `all` or `none`), as `repsim run` does.
#[pyfunction]
#[pyo3(signature = (scenario, lb=None, seed=None, jobs=1, collect="scenario", quiet=true, threads=None))]
#[allow(clippy::too_many_arguments)]
pub fn run(
    py: Python<'_>,
    scenario: &Scenario,
    lb: Option<Vec<String>>,
    seed: Option<u64>,
    jobs: usize,
    collect: &str,
    quiet: bool,
    threads: Option<u32>,
) -> PyResult<RunResult> {
    if threads == Some(0) {
        return Err(PyValueError::new_err("threads=0: use 1 or more"));
    }
    let collect = collect.parse::<CollectMode>().map_err(|_| {
        PyValueError::new_err(format!(
            "collect={collect:?}: use \"scenario\", \"all\" or \"none\""
        ))
    })?;
    let scn = &scenario.loaded;
    let done = run_interruptible(py, |cancel| {
        let options = RunOptions {
            lb,
            seed,
            collect,
            format: Format::Csv,
            jobs,
            limits: Limits {
                cancel: Some(cancel),
                ..Limits::run_defaults()
            },
            quiet,
            header: !quiet,
            progress: false,
            threads,
        };
        execute(scn, &options, None)
    })?
    .map_err(py_err)?;
    let failure = done.failure(None);
    Ok(RunResult {
        done: Mutex::new(done),
        source: scenario.source(),
        failure,
    })
}
