//! The packet books: for every packet kind, how many were sent, how many arrived where they
//! were going, how many were lost (by cause) and how many a switch scheme holds. Plain counters
//! indexed by kind, bumped where packets are made and where they end, so keeping them costs an
//! add per event; [`Simulation::kinds_in_network`] counts what is still on the way by walking the
//! queues and pending events, an independent check that `sent = arrived + dropped + in flight`.
use super::{DropCause, Simulation};
use crate::net::world::EventKind;
use crate::net::Kind;

/// Number of packet kinds (`Kind::ALL.len()`).
pub const KINDS: usize = Kind::ALL.len();

/// Every drop cause, in index order (`cause as usize`).
pub const CAUSES: [DropCause; 4] = [
    DropCause::Overflow,
    DropCause::Fault,
    DropCause::NoRoute,
    DropCause::RandomLoss,
];

/// Per-kind packet accounting (index = `Kind as usize`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PacketBooks {
    /// Packets made: by a host (data, RTS, ACK, NACK, PULL), a switch (PFC frames) or a switch
    /// scheme (probes, notifications, copies). A data packet turned into its ACK counts as a
    /// data packet that arrived and an ACK sent.
    pub sent: [u64; KINDS],
    /// Packets that reached the node they were for and ended there (a host, the switch a PFC
    /// frame pauses, or a switch scheme that consumed them), duplicates and trimmed data
    /// included.
    pub arrived: [u64; KINDS],
    /// Packets lost, by cause (index = `DropCause as usize`).
    pub dropped: [[u64; CAUSES.len()]; KINDS],
    /// Packets a switch scheme holds now (a reorder buffer).
    pub held: [u64; KINDS],
}

impl PacketBooks {
    /// A packet of `kind` was made.
    #[inline]
    pub(super) fn on_sent(&mut self, kind: Kind) {
        self.sent[kind as usize] += 1;
    }

    /// A packet of `kind` reached the node it was for.
    #[inline]
    pub(super) fn on_arrived(&mut self, kind: Kind) {
        self.arrived[kind as usize] += 1;
    }

    /// A packet of `kind` was lost to `cause`.
    #[inline]
    pub(super) fn on_dropped(&mut self, kind: Kind, cause: DropCause) {
        self.dropped[kind as usize][cause as usize] += 1;
    }

    /// Packets of `kind` lost to any cause.
    pub fn dropped_total(&self, kind: Kind) -> u64 {
        self.dropped[kind as usize].iter().sum()
    }

    /// The packets of `kind` the books say are still on the way (sent, neither arrived nor
    /// dropped); `None` if more ended than were sent.
    pub fn outstanding(&self, kind: Kind) -> Option<u64> {
        let k = kind as usize;
        self.sent[k].checked_sub(self.arrived[k] + self.dropped_total(kind))
    }
}

impl Simulation {
    /// The per-kind packet books.
    pub fn books(&self) -> &PacketBooks {
        &self.books
    }

    /// Packets of each kind inside the network now: in a port's FIFOs, on a wire, in a switch's
    /// forwarding pipeline or held by a switch scheme. Counted by walking the queues and pending
    /// events (O(network size)), independently of the books.
    pub fn kinds_in_network(&self) -> [u64; KINDS] {
        let w = &self.world;
        let mut n = self.books.held;
        for p in &w.ports {
            for q in p.data.iter().chain(p.headers.iter()) {
                n[w.pkts.get(q.handle).kind as usize] += 1;
            }
        }
        for ev in w.events.pending() {
            if let EventKind::Arrive(h, _) | EventKind::Egress(h) = ev.kind() {
                n[w.pkts.get(h).kind as usize] += 1;
            }
        }
        n
    }

    /// Every kind whose books do not balance (`sent = arrived + dropped + in network`), as
    /// messages naming the kind and its numbers; empty when all balance.
    pub fn unbalanced_books(&self) -> Vec<String> {
        let in_network = self.kinds_in_network();
        let b = &self.books;
        Kind::ALL
            .iter()
            .filter_map(|&kind| {
                let k = kind as usize;
                let ended = b.arrived[k] + b.dropped_total(kind) + in_network[k];
                (b.sent[k] != ended).then(|| {
                    format!(
                        "{}: sent {} != arrived {} + dropped {:?} (overflow, fault, no route) + in \
                         network {}",
                        kind.name(),
                        b.sent[k],
                        b.arrived[k],
                        b.dropped[k],
                        in_network[k]
                    )
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn causes_are_listed_at_their_index() {
        for (i, c) in CAUSES.iter().enumerate() {
            assert_eq!(*c as usize, i);
        }
    }

    #[test]
    fn outstanding_is_sent_minus_ended() {
        let mut b = PacketBooks::default();
        for _ in 0..5 {
            b.on_sent(Kind::Ack);
        }
        b.on_arrived(Kind::Ack);
        b.on_dropped(Kind::Ack, DropCause::Fault);
        assert_eq!(b.outstanding(Kind::Ack), Some(3));
        assert_eq!(b.outstanding(Kind::Data), Some(0));
        b.on_arrived(Kind::Nack);
        assert_eq!(b.outstanding(Kind::Nack), None);
    }
}
