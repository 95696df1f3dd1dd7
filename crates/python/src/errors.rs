//! Errors as Python exceptions: a scenario problem is `repsim.ScenarioError` (a `ValueError`
//! naming the file and the field), anything else a `RuntimeError` with the whole context chain.
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;

pyo3::create_exception!(
    _repsim,
    ScenarioError,
    PyValueError,
    "A scenario problem: `file`, `field` (a dotted path such as `topology.hosts`, or `-`) and `message`, as the command line reports it."
);

/// `e` as a Python exception: `ScenarioError` (with `file`, `field` and `message` attributes)
/// when a scenario problem is its cause, else `RuntimeError`.
pub fn to_py(e: anyhow::Error) -> PyErr {
    let text = format!("{e:#}");
    if let Some(s) = e.downcast_ref::<repsim::scenario::ScenarioError>() {
        return scenario_error(&text, &s.file, &s.field, &s.message);
    }
    PyRuntimeError::new_err(text)
}

/// A `ScenarioError` with its attributes set.
pub fn scenario_error(text: &str, file: &str, field: &str, message: &str) -> PyErr {
    let err = ScenarioError::new_err(text.to_string());
    Python::attach(|py| {
        let value = err.value(py);
        for (name, v) in [("file", file), ("field", field), ("message", message)] {
            // Setting an attribute of a fresh exception object cannot fail.
            let _ = value.setattr(name, v);
        }
    });
    err
}

/// A library error (`anyhow`-convertible) as a Python exception.
pub fn py_err(e: impl Into<anyhow::Error>) -> PyErr {
    to_py(e.into())
}
