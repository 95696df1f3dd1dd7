//! `[pfc]` as a scenario or a library user writes it: sizes in bytes or packets of the run's
//! MTU, defaults and checks in one place. [`PfcConfig::bytes`] resolves it for the MMU.
use serde::{Deserialize, Serialize};

use super::{Mmu, PfcParams, ThresholdMode};
use crate::engine::time::{MS, US};
use crate::error::ConfigError;
use crate::net::Topology;
use crate::units::{Size, SizeQ, TimeQ};

/// `[pfc]`: priority flow control and the switches' shared buffer (each key not given takes
/// its default; see [`PfcParams`] for what each does).
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct PfcConfig {
    /// PFC on (default off).
    pub enabled: bool,
    /// Buffer per switch (per port with `buffer_extra_ports`).
    pub buffer: SizeQ,
    /// Set: a switch with n ports holds `buffer x (n + buffer_extra_ports)`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub buffer_extra_ports: Option<u32>,
    /// `"dynamic"` or `"static"` pause threshold.
    pub threshold: ThresholdMode,
    /// Dynamic threshold's share of the free shared pool.
    pub alpha: f64,
    /// Headroom per ingress port (default: rate x link delay / 8 x 2 + 2 x MTU of the port).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub headroom: Option<SizeQ>,
    /// Reserve per (ingress port, priority).
    pub reserve: SizeQ,
    /// Pause quantum.
    pub quantum: TimeQ,
    /// Send resume frames.
    pub resume: bool,
    /// Refresh the pause of a still-congested ingress (false: it runs out after one quantum).
    pub refresh: bool,
    /// Resume hysteresis (default 16 B dynamic, 3 KiB static).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resume_offset: Option<SizeQ>,
    /// Egress admission: a queue's share of the switch's free buffer.
    pub alpha_egress: f64,
    /// Check egress admission (false: ingress accounting only, as the LAPS MMU).
    pub egress_admission: bool,
    /// Simulated time without delivery, while pauses flow in a cycle, after which the run
    /// stops as deadlocked (`"0us"`: never).
    pub deadlock_after: TimeQ,
}

impl Default for PfcConfig {
    /// Off; when on, ConWeave's MMU: 9 MiB per switch, dynamic threshold at 1/16 of the free
    /// pool, 2 packets reserved per ingress, 5 us pauses refreshed and resumed.
    fn default() -> Self {
        PfcConfig {
            enabled: false,
            buffer: SizeQ(Size::Bytes(9 << 20)),
            buffer_extra_ports: None,
            threshold: ThresholdMode::Dynamic,
            alpha: 1.0 / 16.0,
            headroom: None,
            reserve: SizeQ(Size::Packets(2.0)),
            quantum: TimeQ(5 * US),
            resume: true,
            refresh: true,
            resume_offset: None,
            alpha_egress: 1.0,
            egress_admission: true,
            deadlock_after: TimeQ(10 * MS),
        }
    }
}

impl PfcConfig {
    /// The settings in bytes, for packets of `mtu` bytes.
    pub fn bytes(&self, mtu: u32) -> PfcParams {
        PfcParams {
            enabled: self.enabled,
            buffer: self.buffer.0.bytes(mtu),
            buffer_extra_ports: self.buffer_extra_ports,
            threshold: self.threshold,
            alpha: self.alpha,
            headroom: self.headroom.map(|h| h.0.bytes(mtu)),
            reserve: self.reserve.0.bytes(mtu),
            quantum: self.quantum.0,
            resume: self.resume,
            refresh: self.refresh,
            resume_offset: self.resume_offset.map(|o| o.0.bytes(mtu)),
            alpha_egress: self.alpha_egress,
            egress_admission: self.egress_admission,
            deadlock_after: self.deadlock_after.0,
        }
    }

    /// Checks the settings at `mtu`, and when PFC is on that every switch of `topo` can hold
    /// its headroom and reserves.
    pub fn check(&self, mtu: u32, topo: &Topology) -> Result<(), ConfigError> {
        let params = self.bytes(mtu);
        if params.headroom.is_some_and(|h| h < u64::from(mtu)) {
            return Err(ConfigError::new(
                "pfc.headroom",
                format!("must hold at least one packet ({mtu}B)"),
            ));
        }
        if let Err((field, message)) = params.validate() {
            return Err(ConfigError::new(format!("pfc.{field}"), message));
        }
        if params.enabled {
            Mmu::new(&params, topo, mtu).map_err(|e| ConfigError::new("pfc.buffer", e))?;
        }
        Ok(())
    }
}
