//! `[pfc]`: priority flow control and the switches' shared buffer (see [`crate::net::mmu`]).
//!
//! ```toml
//! [pfc]
//! enabled = true          # default false: queues drop or trim as [queue] says
//! buffer = "9MiB"         # per switch (ConWeave's default)
//! # buffer_extra_ports = 2 # set: buffer is per port, a switch of n ports gets buffer x (n + 2)
//! #                        # (LAPS: buffer = "1MiB", buffer_extra_ports = 2)
//! threshold = "dynamic"   # "dynamic" (alpha x free shared pool) or "static" (pool / ports)
//! alpha = 0.0625          # dynamic threshold's share of the free pool (1/16)
//! # headroom = "27096B"   # per ingress port; default rate x link delay / 8 x 2 + 2 x MTU
//! reserve = "2pkt"        # per (ingress port, priority), before the shared pool
//! quantum = "5us"         # pause time a pause frame asks for
//! resume = true           # send resume frames (false: pauses run out)
//! refresh = true          # re-pause a still-congested ingress every half quantum (false: one
//!                         # pause per episode that runs out, as the ConWeave/LAPS ns-3 code)
//! # resume_offset = "16B" # hysteresis; default 16 B (dynamic) or 3 KiB (static)
//! alpha_egress = 1.0      # egress queue's share of the switch's free buffer
//! egress_admission = true # false: no egress check, ingress accounting only (LAPS's MMU)
//! deadlock_after = "10ms" # stop a run whose paused links close a cycle and which delivered
//!                         # no data for this long while pauses kept flowing ("0us": never)
//! ```
use serde::{Deserialize, Serialize};

use super::{LoadedScenario, ScenarioError};
use crate::net::mmu::{Mmu, PfcConfig, ThresholdMode};
use crate::net::Topology;
use crate::units::{Size, SizeQ, TimeQ};

/// How pause thresholds are set.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ThresholdKind {
    /// `alpha x (shared pool limit - shared pool used)`, as ConWeave's MMU.
    Dynamic,
    /// The shared pool split evenly over the switch's ports, as LAPS's MMU.
    Static,
}

/// `[pfc]`.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct PfcSection {
    /// PFC on (default off).
    pub enabled: bool,
    /// Buffer per switch (per port with `buffer_extra_ports`).
    pub buffer: SizeQ,
    /// Set: a switch with n ports holds `buffer x (n + buffer_extra_ports)`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub buffer_extra_ports: Option<u32>,
    /// `"dynamic"` or `"static"` pause threshold.
    pub threshold: ThresholdKind,
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

impl Default for PfcSection {
    fn default() -> Self {
        let d = PfcConfig::default();
        PfcSection {
            enabled: false,
            buffer: SizeQ(Size::Bytes(d.buffer)),
            buffer_extra_ports: None,
            threshold: ThresholdKind::Dynamic,
            alpha: d.alpha,
            headroom: None,
            reserve: SizeQ(Size::Packets(2.0)),
            quantum: TimeQ(d.quantum),
            resume: d.resume,
            refresh: d.refresh,
            resume_offset: None,
            alpha_egress: d.alpha_egress,
            egress_admission: d.egress_admission,
            deadlock_after: TimeQ(d.deadlock_after),
        }
    }
}

impl LoadedScenario {
    /// The PFC settings in bytes for an MTU, checked (against `topo`'s switches when on).
    pub(super) fn pfc_config(&self, mtu: u32, topo: &Topology) -> Result<PfcConfig, ScenarioError> {
        let Some(p) = &self.scenario.pfc else {
            return Ok(PfcConfig::default());
        };
        let cfg = PfcConfig {
            enabled: p.enabled,
            buffer: p.buffer.0.bytes(mtu),
            buffer_extra_ports: p.buffer_extra_ports,
            threshold: match p.threshold {
                ThresholdKind::Dynamic => ThresholdMode::Dynamic,
                ThresholdKind::Static => ThresholdMode::Static,
            },
            alpha: p.alpha,
            headroom: p.headroom.map(|h| h.0.bytes(mtu)),
            reserve: p.reserve.0.bytes(mtu),
            quantum: p.quantum.0,
            resume: p.resume,
            refresh: p.refresh,
            resume_offset: p.resume_offset.map(|o| o.0.bytes(mtu)),
            alpha_egress: p.alpha_egress,
            egress_admission: p.egress_admission,
            deadlock_after: p.deadlock_after.0,
        };
        if cfg.headroom.is_some_and(|h| h < mtu as u64) {
            return Err(self.err(
                "pfc.headroom",
                format!("must hold at least one packet ({mtu}B)"),
            ));
        }
        if let Err(e) = cfg.validate() {
            let field = e.split_whitespace().next().unwrap_or("-");
            return Err(self.err(&format!("pfc.{field}"), e));
        }
        if cfg.enabled {
            Mmu::new(&cfg, topo, mtu).map_err(|e| self.err("pfc.buffer", e))?;
        }
        Ok(cfg)
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    fn scenario(pfc: &str) -> Result<crate::sim::RunSpec, ScenarioError> {
        let text = format!(
            r#"
lb = "ecmp"
[topology]
type = "fat_tree"
tiers = 2
hosts = 8
hosts_per_tor = 4
link_speed = "100Gbps"
link_latency = "1us"
[workload]
type = "explicit"
flows = [{{ src = 0, dst = 5, size = "1MiB" }}]
{pfc}
"#
        );
        LoadedScenario::parse(&text, Path::new("pfc.toml"))?.build("ecmp", None)
    }

    #[test]
    fn absent_section_means_off_and_defaults_follow_the_reference() {
        let off = scenario("").expect("valid");
        assert!(!off.config.pfc.enabled);
        let on = scenario("[pfc]\nenabled = true").expect("valid");
        let c = on.config.pfc;
        assert!(c.enabled && c.resume && c.refresh);
        assert_eq!(c.buffer, 9 << 20);
        assert_eq!(c.threshold, ThresholdMode::Dynamic);
        assert_eq!((c.alpha, c.alpha_egress), (1.0 / 16.0, 1.0));
        assert!(c.egress_admission, "ConWeave's egress admission by default");
        assert_eq!(c.quantum, 5 * crate::engine::time::US);
        assert_eq!(c.reserve, 2 * 4150);
        let s = scenario(
            "[pfc]\nenabled = true\nthreshold = \"static\"\nheadroom = \"40KiB\"\negress_admission = false",
        )
        .expect("valid");
        assert!(!s.config.pfc.egress_admission);
        assert_eq!(s.config.pfc.threshold, ThresholdMode::Static);
        assert_eq!(s.config.pfc.headroom, Some(40 << 10));
    }

    #[test]
    fn bad_values_name_their_field() {
        for (text, field) in [
            ("alpha = 0.0", "pfc.alpha"),
            ("alpha_egress = -1.0", "pfc.alpha_egress"),
            ("quantum = \"0us\"", "pfc.quantum"),
            ("headroom = \"100B\"", "pfc.headroom"),
            ("buffer = \"100KiB\"", "pfc.buffer"),
            ("threshold = \"fixed\"", "pfc.threshold"),
            ("pause = true", "pfc"),
        ] {
            let e = scenario(&format!("[pfc]\nenabled = true\n{text}"))
                .err()
                .unwrap_or_else(|| panic!("{text} accepted"));
            assert!(e.field.starts_with(field), "{text}: {e}");
        }
    }
}
