//! Errors as Python exceptions: a scenario problem is `repsim.ScenarioError` (a `ValueError`
//! naming the file and the field), anything else a `RuntimeError` with the whole context chain.
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use repsim::scenario::ScenarioError as LibScenarioError;

pyo3::create_exception!(
    _repsim,
    ScenarioError,
    PyValueError,
    "A scenario problem: `file`, `field` (a dotted path such as `topology.hosts`, or `-`) and `message`, as the command line reports it."
);

/// A library error as a Python exception: `ScenarioError` (with `file`, `field` and `message`
/// attributes) when a scenario problem is its cause, else `RuntimeError`; the text is the whole
/// context chain, as the command prints it.
pub fn py_err(e: impl Into<anyhow::Error>) -> PyErr {
    let e = e.into();
    let text = format!("{e:#}");
    match e.downcast_ref::<LibScenarioError>() {
        Some(s) => scenario_error(text, s),
        None => PyRuntimeError::new_err(text),
    }
}

/// `ScenarioError(text)` with the attributes of `e`.
fn scenario_error(text: String, e: &LibScenarioError) -> PyErr {
    let err = ScenarioError::new_err(text);
    Python::attach(|py| {
        let value = err.value(py);
        for (name, v) in [
            ("file", &e.file),
            ("field", &e.field),
            ("message", &e.message),
        ] {
            // Setting an attribute of a fresh exception object cannot fail.
            let _ = value.setattr(name, v);
        }
    });
    err
}
