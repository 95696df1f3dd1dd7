//! `[loss]`: random loss at every receiving port (see [`crate::fault::random_loss`]).
//!
//! ```toml
//! [loss]
//! probability = 1e-6   # per packet, at every switch and host ingress port
//! ```
use super::LoadedScenario;
use crate::fault::random_loss::LossConfig;

impl LoadedScenario {
    /// The `[loss]` settings (off when the section is absent; checked by
    /// [`crate::SimConfig::validate`]).
    pub(super) fn loss(&self) -> LossConfig {
        self.scenario.loss.clone().unwrap_or_default()
    }
}
