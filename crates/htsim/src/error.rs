//! The front end's error: a message that names the flag, file or line at fault.

/// What went wrong, with enough context to fix it.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct HtsimError(pub String);

impl HtsimError {
    /// An error from anything displayable.
    pub fn new(message: impl Into<String>) -> Self {
        HtsimError(message.into())
    }
}

/// Shorthand for results of this crate.
pub type Result<T> = std::result::Result<T, HtsimError>;
