//! Run-time fault state: which ports are down or lossy, and what faults did.
use serde::Serialize;

use super::{Action, ActionKind, FaultPlan, LossMode};
use crate::engine::rng::Stream;
use crate::engine::{Rng, Time};
use crate::net::forwarding::Forwarding;

/// Counters of what faults did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct FaultStats {
    /// Data packets discarded by failed elements.
    pub data_dropped: u64,
    /// Data packets trimmed by failed elements (`loss = "trim"`).
    pub data_trimmed: u64,
    /// ACKs and NACKs discarded by failed elements.
    pub control_dropped: u64,
    /// Packets discarded because a switch had no route left (after reconvergence).
    pub no_route: u64,
    /// Fault actions applied.
    pub actions: u64,
    /// Routing recomputations.
    pub reconvergences: u64,
}

/// A flow given up because it heard nothing for the give-up delay.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GaveUp {
    /// The key of the event that gave it up (0 on one thread): partitions' lists merge by it.
    pub key: u128,
    /// The flow's index.
    pub flow: u32,
    /// Its id, source and destination host.
    pub id_src_dst: (u64, u32, u32),
    /// Whether no path between its hosts was left (else some path existed).
    pub no_path: bool,
    /// How long it had heard no ACK or NACK.
    pub silent_for: Time,
    /// Its retransmission timeouts by then.
    pub timeouts: u64,
    /// When it was given up.
    pub at: Time,
}

/// What a failed element does to one packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Unaffected.
    Pass,
    /// Discarded.
    Drop,
    /// Trimmed and flagged.
    Trim,
}

/// Run-time fault state: per-port struct of arrays plus bookkeeping.
pub struct FaultState {
    /// The plan's actions (applied in order).
    pub actions: Vec<Action>,
    /// Reconvergence delay.
    pub reconvergence: Option<Time>,
    /// Give-up delay (resolved).
    pub give_up_after: Time,
    /// Reasons each port is down (0 = up).
    pub down: Vec<u16>,
    /// Drop probability of each port.
    pub drop_p: Vec<f64>,
    /// Loss mode of each port.
    pub trim: Vec<bool>,
    /// Only data affected, per port.
    pub data_only: Vec<bool>,
    /// Cheap test: anything configured on this port.
    pub active: Vec<bool>,
    /// Per-port drop streams.
    pub rng: Vec<Rng>,
    /// Original class (rate, latency and queue) of ports whose rate changed.
    pub original: Vec<Option<u32>>,
    /// Routes before any reconvergence.
    pub base_routes: Forwarding,
    /// Routing snapshots (time due, alive bit per port until used), indexed by Reroute events.
    pub snapshots: Vec<(Time, Option<Vec<bool>>)>,
    /// Per flow: (ACK+NACK count at the last check, time it last changed).
    pub progress: Vec<(u64, Time)>,
    /// Per flow: the key of the event in which its last packet found no route (0 on one
    /// thread, where the last one written is the last) and the switch (node) where.
    pub no_route_at: Vec<(u128, u32)>,
    /// Flows given up, in the order they were.
    pub gave_up: Vec<GaveUp>,
    /// Counters.
    pub stats: FaultStats,
}

impl FaultState {
    /// Fresh state for `ports` ports.
    pub fn new(plan: FaultPlan, ports: usize, seed: u64, rto: Time, routes: Forwarding) -> Self {
        FaultState {
            actions: plan.actions,
            reconvergence: plan.reconvergence,
            give_up_after: plan
                .give_up_after
                .unwrap_or((100 * rto).max(10 * crate::engine::time::MS)),
            down: vec![0; ports],
            drop_p: vec![0.0; ports],
            trim: vec![false; ports],
            data_only: vec![false; ports],
            active: vec![false; ports],
            rng: (0..ports as u64)
                .map(|p| Rng::derive(seed, Stream::Fault, p))
                .collect(),
            original: vec![None; ports],
            base_routes: routes,
            snapshots: Vec::new(),
            progress: Vec::new(),
            no_route_at: Vec::new(),
            gave_up: Vec::new(),
            stats: FaultStats::default(),
        }
    }

    /// Alive bit of every port (for routing).
    pub fn alive(&self) -> Vec<bool> {
        self.down.iter().map(|&d| d == 0).collect()
    }

    #[inline]
    fn refresh(&mut self, port: usize) {
        self.active[port] = self.down[port] > 0 || self.drop_p[port] > 0.0;
    }

    /// Applies a state change (not rate changes); returns true when the port's up/down state
    /// flipped.
    pub fn apply(&mut self, a: &Action) -> bool {
        let p = a.port as usize;
        let was_down = self.down[p] > 0;
        match a.kind {
            ActionKind::Down { loss, data_only } => {
                self.down[p] = self.down[p].saturating_add(1);
                self.trim[p] = loss == LossMode::Trim;
                self.data_only[p] = data_only;
            }
            ActionKind::Up => self.down[p] = self.down[p].saturating_sub(1),
            ActionKind::ForceUp => self.down[p] = 0,
            ActionKind::Drop {
                probability,
                loss,
                data_only,
            } => {
                self.drop_p[p] = probability;
                if probability > 0.0 {
                    self.trim[p] = loss == LossMode::Trim;
                    self.data_only[p] = data_only;
                }
            }
            ActionKind::Rate { .. } | ActionKind::RestoreRate => {}
        }
        self.refresh(p);
        was_down != (self.down[p] > 0)
    }

    /// Fate of a packet put on the wire of `port` (`full_data`: an untrimmed data packet).
    #[inline]
    pub fn on_wire(&mut self, port: u32, is_data: bool, full_data: bool) -> Verdict {
        let p = port as usize;
        if !self.active[p] || (self.data_only[p] && !is_data) {
            return Verdict::Pass;
        }
        let lost = self.down[p] > 0 || self.rng[p].unit() < self.drop_p[p];
        self.verdict(p, lost, is_data, full_data)
    }

    /// Fate of a packet taken off the wire of `port` (only a link that is down now matters).
    #[inline]
    pub fn off_wire(&mut self, port: u32, is_data: bool, full_data: bool) -> Verdict {
        let p = port as usize;
        if self.down[p] == 0 || (self.data_only[p] && !is_data) {
            return Verdict::Pass;
        }
        self.verdict(p, true, is_data, full_data)
    }

    #[inline]
    fn verdict(&self, p: usize, lost: bool, is_data: bool, full_data: bool) -> Verdict {
        if !lost {
            Verdict::Pass
        } else if self.trim[p] && full_data {
            Verdict::Trim
        } else if self.trim[p] && is_data {
            // Already trimmed and flagged: the header travels on to be NACKed.
            Verdict::Pass
        } else {
            Verdict::Drop
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::time::US;

    #[test]
    fn state_counts_reasons_and_flips() {
        let mut s = FaultState::new(FaultPlan::default(), 2, 1, 40 * US, Forwarding::default());
        let down = ActionKind::Down {
            loss: LossMode::Silent,
            data_only: false,
        };
        assert!(s.apply(&Action {
            time: 0,
            port: 1,
            kind: down
        }));
        assert!(!s.apply(&Action {
            time: 0,
            port: 1,
            kind: down
        }));
        assert!(!s.apply(&Action {
            time: 0,
            port: 1,
            kind: ActionKind::Up
        }));
        assert_eq!(s.on_wire(1, true, true), Verdict::Drop);
        assert_eq!(s.on_wire(0, true, true), Verdict::Pass);
        assert!(s.apply(&Action {
            time: 0,
            port: 1,
            kind: ActionKind::Up
        }));
        assert_eq!(s.on_wire(1, true, true), Verdict::Pass);
        let trim = ActionKind::Down {
            loss: LossMode::Trim,
            data_only: false,
        };
        s.apply(&Action {
            time: 0,
            port: 0,
            kind: trim,
        });
        assert_eq!(s.on_wire(0, true, true), Verdict::Trim);
        assert_eq!(s.on_wire(0, false, false), Verdict::Drop);
    }
}
