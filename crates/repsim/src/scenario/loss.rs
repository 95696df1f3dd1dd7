//! `[loss]`: random loss at every receiving port (see [`crate::fault::random_loss`]).
//!
//! ```toml
//! [loss]
//! probability = 1e-6   # per packet, at every switch and host ingress port
//! ```
use super::{LoadedScenario, ScenarioError};
use crate::fault::random_loss::LossConfig;

impl LoadedScenario {
    /// The `[loss]` settings, checked (off when the section is absent).
    pub(super) fn loss(&self) -> Result<LossConfig, ScenarioError> {
        let Some(loss) = &self.scenario.loss else {
            return Ok(LossConfig::default());
        };
        loss.validate()
            .map_err(|e| self.err("loss.probability", e))?;
        Ok(loss.clone())
    }
}
