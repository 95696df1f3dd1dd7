//! Adaptive routing in the style of NVIDIA Adaptive RoCE (the REPS paper's "nvidia" baseline):
//! every packet, data or control, goes to the candidate port whose queue currently holds the
//! fewest bytes (both lanes), decided at ingress on instantaneous occupancy with no hysteresis.
//! Ties go to the first candidate in a fixed per-switch order (the reference permutes each
//! switch's uplink list once at start-up; we rotate it by an offset drawn from the switch salt).
use super::{PortView, RoutingContext, SwitchRouting};
use crate::net::Packet;

/// Least-queued-port routing.
pub struct Adaptive {
    rotation: Vec<u32>,
}

/// Registry constructor.
pub fn build(ctx: &RoutingContext) -> Box<dyn SwitchRouting> {
    Box::new(Adaptive {
        rotation: ctx.salts.to_vec(),
    })
}

impl SwitchRouting for Adaptive {
    fn select(&mut self, switch: u32, _pkt: &Packet, candidates: &[u32], view: &PortView) -> usize {
        let n = candidates.len();
        let start = self.rotation[switch as usize] as usize % n;
        let mut best = start;
        let mut best_bytes = view.queued_bytes(candidates[start]);
        for step in 1..n {
            let i = (start + step) % n;
            let bytes = view.queued_bytes(candidates[i]);
            if bytes < best_bytes {
                best = i;
                best_bytes = bytes;
            }
        }
        best
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{Arena, Rng};
    use crate::net::packet::Kind;
    use crate::net::port::{Port, QueueParams};

    fn pkt(size: u32) -> Packet {
        Packet::blank(Kind::Data, size)
    }

    #[test]
    fn picks_the_least_queued_port_with_a_fixed_tie_order() {
        let params = QueueParams {
            capacity: 1 << 20,
            ecn_min: 1 << 20,
            ecn_max: 1 << 20,
            trimming: true,
            header_size: 64,
        };
        let mut ports: Vec<Port> = (0..3)
            .map(|i| Port::new(i, 400_000_000_000, 1_000_000, params, Rng::new(i as u64)))
            .collect();
        let mut arena = Arena::new();
        for (port, n) in [(0usize, 3), (1, 1), (2, 2)] {
            for _ in 0..n {
                let h = arena.alloc(pkt(4150));
                ports[port].enqueue(h, &mut arena, 0);
            }
        }
        let mut ar = Adaptive { rotation: vec![2] };
        let view = PortView {
            ports: &ports,
            now: 0,
            header_size: 64,
        };
        assert_eq!(ar.select(0, &pkt(4150), &[0, 1, 2], &view), 1);
        // Equal queues: the rotation decides (start at index 2 % 3 = 2).
        let empty: Vec<Port> = (0..3)
            .map(|i| Port::new(i, 400_000_000_000, 1_000_000, params, Rng::new(0)))
            .collect();
        let view = PortView {
            ports: &empty,
            now: 0,
            header_size: 64,
        };
        assert_eq!(ar.select(0, &pkt(4150), &[0, 1, 2], &view), 2);
        // Headers count too.
        let mut ack = pkt(64);
        ack.kind = Kind::Ack;
        let mut ports = empty;
        let h = arena.alloc(ack);
        ports[2].enqueue(h, &mut arena, 0);
        let view = PortView {
            ports: &ports,
            now: 0,
            header_size: 64,
        };
        assert_eq!(ar.select(0, &pkt(4150), &[0, 1, 2], &view), 0);
    }
}
