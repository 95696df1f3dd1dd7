//! `[pfc]`: priority flow control and the switches' shared buffer ([`crate::net::mmu::PfcConfig`],
//! its defaults and checks; the MMU in [`crate::net::mmu`]). What the keys look like:
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
#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::super::{LoadedScenario, ScenarioError};
    use crate::net::mmu::ThresholdMode;

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
        let c = on.config.pfc.bytes(4150);
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
        assert_eq!(s.config.pfc.bytes(4150).headroom, Some(40 << 10));
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
