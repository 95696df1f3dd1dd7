//! `repsim.sweep` and `repsim.figure`: the command's sweeps and paper figures, run off the
//! interpreter (Ctrl-C stops them; finished points are kept, as for the command), their
//! results read back as tables.
use std::path::{Path, PathBuf};

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use repsim_experiment::sweep::spec::Sweep;
use repsim_figures::{default_out, run_figure, Reuse, Scale, FIGURES};

use crate::errors::py_err;
use crate::frames::{self, arrow_err, ArrowTable};
use crate::interrupt::run_interruptible;

/// Reads a CSV file the command wrote as a table.
fn csv_file(path: &Path) -> PyResult<ArrowTable> {
    let text = std::fs::read(path)
        .map_err(|e| py_err(anyhow::anyhow!("reading {}: {e}", path.display())))?;
    frames::from_csv(&text).map_err(arrow_err)
}

/// Runs the sweep file `file` into `out` (default: the file's `out`, else
/// `results/sweeps/<name>`) on `jobs` cores (0: every core), each simulation on `threads`
/// threads, as `repsim sweep` does (finished points are skipped); returns `sweep.csv` as a
/// table.
#[pyfunction]
#[pyo3(signature = (file, out=None, jobs=0, quiet=true, threads=1))]
pub fn sweep(
    py: Python<'_>,
    file: PathBuf,
    out: Option<PathBuf>,
    jobs: usize,
    quiet: bool,
    threads: u32,
) -> PyResult<ArrowTable> {
    let mut sweep = Sweep::load(&file).map_err(py_err)?;
    sweep.threads = threads.max(1);
    repsim_experiment::sweep::check_points(&sweep, None).map_err(py_err)?;
    let out = out.unwrap_or_else(|| sweep.out.clone());
    let jobs = repsim_experiment::run::jobs_or_every_core(jobs);
    let csv = run_interruptible(py, |cancel| {
        sweep.cancel = Some(cancel);
        repsim_experiment::sweep::run_sweep(&sweep, &out, jobs, quiet)
    })?
    .map_err(py_err)?;
    csv_file(&csv)
}

/// What `repsim.figure` returns: where the figure went, its plots and data tables, and its
/// `result.json` (the paper's numbers beside ours).
#[pyclass(module = "repsim._repsim", frozen, get_all)]
pub struct FigureOutcome {
    /// The figure's id.
    id: String,
    /// Its output directory.
    out: String,
    /// Its HTML page (plots, claims, data).
    page: String,
    /// Its plots (SVG and PNG files).
    plots: Vec<String>,
    /// Its data tables: (file stem, table), one per panel.
    data: Vec<(String, Py<ArrowTable>)>,
    /// `result.json`'s text.
    result_json: String,
}

/// Every figure id `figure` runs, with the paper and what it shows.
#[pyfunction]
pub fn figure_ids() -> Vec<(String, String, String)> {
    FIGURES
        .iter()
        .map(|f| (f.id.to_string(), f.paper.to_string(), f.title.to_string()))
        .collect()
}

/// Runs paper figure `id` at `scale` (`small` or `paper`) into `out` (default
/// `results/figures/<id>/<scale>`) on `jobs` cores (0: every core), each simulation on
/// `threads` threads, keeping finished points as `repsim figure` does.
#[pyfunction]
#[pyo3(signature = (id, scale="small", out=None, jobs=0, quiet=true, threads=1))]
pub fn figure(
    py: Python<'_>,
    id: &str,
    scale: &str,
    out: Option<PathBuf>,
    jobs: usize,
    quiet: bool,
    threads: u32,
) -> PyResult<FigureOutcome> {
    let Some(fig) = FIGURES.iter().find(|f| f.id == id) else {
        let ids: Vec<&str> = FIGURES.iter().map(|f| f.id).collect();
        return Err(PyValueError::new_err(format!(
            "no figure {id:?}; the figures are {}",
            ids.join(", ")
        )));
    };
    let scale = scale.parse::<Scale>().map_err(|_| {
        PyValueError::new_err(format!("scale={scale:?}: use \"small\" or \"paper\""))
    })?;
    let out = out.unwrap_or_else(|| default_out(id, scale));
    let jobs = repsim_experiment::run::jobs_or_every_core(jobs);
    let result = run_interruptible(py, |cancel| {
        run_figure(
            fig,
            scale,
            &out,
            jobs,
            threads,
            Reuse::Resume,
            quiet,
            Some(cancel),
        )
    })?
    .map_err(py_err)?;
    let mut plots = Vec::new();
    for svg in &result.plots {
        let svg = out.join(svg);
        let png = svg.with_extension("png");
        plots.push(svg.display().to_string());
        if png.exists() {
            plots.push(png.display().to_string());
        }
    }
    let mut data = Vec::new();
    for name in &result.data {
        let csv = out.join(name);
        let stem = csv
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        data.push((stem, Py::new(py, csv_file(&csv)?)?));
    }
    let result_json = std::fs::read_to_string(out.join("result.json"))
        .map_err(|e| py_err(anyhow::anyhow!("reading result.json: {e}")))?;
    Ok(FigureOutcome {
        id: result.id,
        out: out.display().to_string(),
        page: out.join("index.html").display().to_string(),
        plots,
        data,
        result_json,
    })
}

/// Parses a time (`"50us"`, `"1.5ms"`, `"200ns"`) into integer picoseconds.
#[pyfunction]
pub fn parse_time(text: &str) -> PyResult<u64> {
    repsim::units::parse_time(text).map_err(PyValueError::new_err)
}
