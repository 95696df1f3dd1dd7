//! The error of a setting that cannot run, shared by the library and the scenario loader so
//! that a value set in code and the same value written in a scenario file fail alike.

/// A setting that cannot run: the field, as a scenario would name it, and why.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {message}")]
pub struct ConfigError {
    /// The field, dotted as in a scenario file (`queue.ecn_min`, `transport.evs_size`).
    pub field: String,
    /// What is wrong with its value.
    pub message: String,
}

impl ConfigError {
    /// An error about `field`.
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        ConfigError {
            field: field.into(),
            message: message.into(),
        }
    }
}
