//! Adaptive routing in the style of NVIDIA Adaptive RoCE (the REPS paper's "nvidia" baseline):
//! every packet, data or control, goes to the candidate port whose queue currently holds the
//! fewest bytes (both lanes), decided at ingress on instantaneous occupancy with no hysteresis.
//! Ties go to the first candidate in a fixed per-switch order (the reference permutes each
//! switch's uplink list once at start-up; we rotate it by an offset drawn from the switch salt).
//!
//! Packets flagged [`flags::SWITCH_EXEMPT`] (traffic classes with `switch_exempt`, such as the
//! ECMP background flows of `[workload] ecmp_every`, the reference's `-mixed_lb_traffic`) are
//! hashed as ECMP would instead of routed adaptively, as the reference exempts them.
use serde::{Deserialize, Serialize};

use super::{Ingress, RoutingScheme, SchemeSetup, SwitchCtx, SwitchScheme};
use crate::engine::Handle;
use crate::net::packet::flags;
use crate::net::RunContext;
use crate::ConfigError;

/// `[routing] switch = "adaptive"` (no parameters).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AdaptiveConfig {}

impl RoutingScheme for AdaptiveConfig {
    /// Each switch's state is its own.
    fn shared_between_switches(&self) -> Option<&'static str> {
        None
    }

    /// The scheme for a run.
    fn build(&self, setup: &SchemeSetup) -> Box<dyn SwitchScheme> {
        Box::new(Adaptive {
            rotation: setup.salts.to_vec(),
        })
    }

    /// Checks the parameters (there are none).
    fn validate(&self, _ctx: &RunContext) -> Result<(), ConfigError> {
        Ok(())
    }
}

/// Least-queued-port routing.
pub struct Adaptive {
    /// Per-switch tie-break offsets; they are the switch salts, which also hash exempt
    /// packets.
    rotation: Vec<u32>,
}

impl Adaptive {
    /// Index (into `candidates`, non-empty) of the least-queued port, ties to the first in the
    /// switch's rotated order.
    fn select(&self, ctx: &SwitchCtx, switch: u32, candidates: &[u32]) -> usize {
        let n = candidates.len();
        let start = self.rotation[switch as usize] as usize % n;
        let mut best = start;
        let mut best_bytes = ctx.queued_bytes(candidates[start]);
        for step in 1..n {
            let i = (start + step) % n;
            let bytes = ctx.queued_bytes(candidates[i]);
            if bytes < best_bytes {
                best = i;
                best_bytes = bytes;
            }
        }
        best
    }
}

impl SwitchScheme for Adaptive {
    fn ingress(
        &mut self,
        ctx: &mut SwitchCtx,
        switch: u32,
        h: Handle,
        candidates: &[u32],
    ) -> Ingress {
        match candidates.len() {
            0 => Ingress::Drop,
            1 => Ingress::Forward(candidates[0]),
            _ => {
                let pkt = ctx.packet(h);
                if pkt.has(flags::SWITCH_EXEMPT) {
                    let salt = self.rotation[switch as usize];
                    return Ingress::Forward(super::ecmp::pick(pkt, salt, candidates));
                }
                Ingress::Forward(candidates[self.select(ctx, switch, candidates)])
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Rng;
    use crate::net::packet::Kind;
    use crate::net::world::World;
    use crate::net::Packet;

    fn world() -> World {
        crate::routing::test_world(&[400_000_000_000; 3], 2)
    }

    #[test]
    fn picks_the_least_queued_port_with_a_fixed_tie_order() {
        let mut w = world();
        let mut rng = Rng::new(0);
        let mut actions = Vec::new();
        let ar = Adaptive { rotation: vec![2] };
        // Equal queues: the rotation decides (start at index 2 % 3 = 2).
        {
            let ctx = SwitchCtx::new(&mut w, &mut rng, 64, &mut actions);
            assert_eq!(ar.select(&ctx, 0, &[0, 1, 2]), 2);
        }
        for (port, n) in [(0usize, 3), (1, 1), (2, 2)] {
            for _ in 0..n {
                let h = w.pkts.alloc(Packet::blank(Kind::Data, 4150));
                w.admit(port as u32, h);
            }
        }
        {
            let ctx = SwitchCtx::new(&mut w, &mut rng, 64, &mut actions);
            assert_eq!(ar.select(&ctx, 0, &[0, 1, 2]), 1);
        }
        // Headers count too.
        let mut w = world();
        let h = w.pkts.alloc(Packet::blank(Kind::Ack, 64));
        w.admit(2, h);
        let ctx = SwitchCtx::new(&mut w, &mut rng, 64, &mut actions);
        assert_eq!(ar.select(&ctx, 0, &[0, 1, 2]), 0);
    }

    #[test]
    fn exempt_packets_are_hashed_whatever_the_queues() {
        let mut w = world();
        let mut rng = Rng::new(0);
        let mut actions = Vec::new();
        let mut ar = Adaptive { rotation: vec![2] };
        let candidates = [0, 1, 2];
        // Load the ECMP choice of every flow heavily, so adaptive routing would avoid it.
        for flow in 0..16u32 {
            let mut pkt = Packet::blank(Kind::Data, 4150);
            pkt.flow = flow;
            pkt.src = flow;
            pkt.dst = 100 + flow;
            let hashed = crate::routing::ecmp::pick(&pkt, 2, &candidates);
            for _ in 0..4 {
                let h = w.pkts.alloc(Packet::blank(Kind::Data, 4150));
                w.admit(hashed, h);
            }
            pkt.flags = flags::SWITCH_EXEMPT;
            let exempt = w.pkts.alloc(pkt);
            pkt.flags = 0;
            let normal = w.pkts.alloc(pkt);
            let mut ctx = SwitchCtx::new(&mut w, &mut rng, 64, &mut actions);
            assert_eq!(
                ar.ingress(&mut ctx, 0, exempt, &candidates),
                Ingress::Forward(hashed)
            );
            assert_ne!(
                ar.ingress(&mut ctx, 0, normal, &candidates),
                Ingress::Forward(hashed),
                "flow {flow}: the loaded port is avoided"
            );
            w = world();
        }
    }
}
