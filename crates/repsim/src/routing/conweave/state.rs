//! ConWeave's per-flow state at the source and destination ToRs, and the reorder queues.
use crate::engine::{Handle, Time};
use crate::routing::TimerSlot;

/// A flow at its source ToR.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct SrcFlow {
    /// Seen before (else the next packet starts the flow).
    pub live: bool,
    /// Current epoch (4 bits).
    pub epoch: u8,
    /// Current phase: 0 before the path switch, 1 after.
    pub phase: u8,
    /// Path code packets take now.
    pub code: u8,
    /// The RTT_REPLY or CLEAR of this epoch came: the next packet opens a new epoch.
    pub stabilized: bool,
    /// Time of the flow's last packet.
    pub active: Time,
    /// Latest time the RTT_REPLY may arrive (`Time::MAX`: none awaited).
    pub deadline: Time,
    /// When this epoch's TAIL was sent (0 in phase 0).
    pub tail_time: Time,
}

/// A flow at its destination ToR.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct DstFlow {
    /// Seen before.
    pub live: bool,
    /// Epoch being received.
    pub epoch: u8,
    /// Phase being received (1 once the TAIL is through or the queue was flushed).
    pub rx_phase: u8,
    /// The epoch started with a phase-0 packet, so its phase-0 timing is known.
    pub phase0_cache: bool,
    /// A reorder queue holds packets.
    pub reordering: bool,
    /// The pending flush was set by the TAIL's arrival.
    pub tail_flush: bool,
    /// Send timestamp (ns, 32 bits) of the epoch's latest phase-0 packet.
    pub phase0_tx: u32,
    /// TAIL send timestamp (ns, 32 bits) carried by phase-1 packets.
    pub tail_time: u32,
    /// Arrival time of the latest phase-0 packet.
    pub phase0_rx: Time,
    /// Arrival time of the flow's last packet (for aging).
    pub last: Time,
    /// When the reorder queue is flushed.
    pub flush_at: Time,
    /// The flush timer.
    pub flush: TimerSlot,
    /// Switch holding the queue and the port its packets leave on.
    pub switch: u32,
    /// See `switch`.
    pub port: u32,
    /// The held packets.
    pub queue: Queue,
}

/// A FIFO of handles in the shared pool (`NIL` ends: empty).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Queue {
    head: u32,
    tail: u32,
}

impl Default for Queue {
    fn default() -> Self {
        Queue {
            head: NIL,
            tail: NIL,
        }
    }
}

const NIL: u32 = u32::MAX;

/// Every reorder queue's cells in one pool with a free list, so holding a packet allocates
/// nothing once the pool has grown to the run's peak.
#[derive(Clone, Debug, Default)]
pub(super) struct Voqs {
    cells: Vec<(Handle, u32)>,
    free: Vec<u32>,
}

impl Voqs {
    /// Appends `h` to `q`.
    pub fn push(&mut self, q: &mut Queue, h: Handle) {
        let cell = match self.free.pop() {
            Some(c) => {
                self.cells[c as usize] = (h, NIL);
                c
            }
            None => {
                self.cells.push((h, NIL));
                self.cells.len() as u32 - 1
            }
        };
        if q.tail == NIL {
            q.head = cell;
        } else {
            self.cells[q.tail as usize].1 = cell;
        }
        q.tail = cell;
    }

    /// Takes the oldest handle of `q`.
    pub fn pop(&mut self, q: &mut Queue) -> Option<Handle> {
        if q.head == NIL {
            return None;
        }
        let cell = q.head;
        let (h, next) = self.cells[cell as usize];
        q.head = next;
        if next == NIL {
            q.tail = NIL;
        }
        self.free.push(cell);
        Some(h)
    }
}
