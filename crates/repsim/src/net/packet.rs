//! The packet: a plain `Copy` value living in the simulation's arena, carrying what real headers
//! carry and nothing the model does not need.
use crate::engine::Time;

/// What a packet is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Kind {
    /// A data packet (possibly trimmed to its header).
    Data,
    /// An acknowledgement of one data packet (with cumulative ACK and SACK).
    Ack,
    /// A negative acknowledgement of a trimmed data packet.
    Nack,
    /// A request to send: a header-only packet a sender emits after a timeout when its window
    /// has no room for the retransmission. It takes a PSN and is acknowledged like data.
    Rts,
}

/// Flag bits of [`Packet::flags`].
pub mod flags {
    /// Congestion experienced: set by a switch queue, echoed by the receiver.
    pub const ECN: u8 = 1;
    /// The payload was cut off at a full queue; only the header travels on.
    pub const TRIMMED: u8 = 2;
    /// The sender asks for an immediate ACK (last packet, window full, retransmission).
    pub const ACK_REQUEST: u8 = 4;
    /// This data packet is a retransmission.
    pub const RETRANSMIT: u8 = 8;
    /// ACK/NACK only: the data packet it answers was a duplicate.
    pub const DUPLICATE: u8 = 16;
}

/// One packet in flight or queued.
#[derive(Clone, Copy, Debug)]
pub struct Packet {
    /// Index of the flow (connection) it belongs to.
    pub flow: u32,
    /// Packet sequence number of the data packet (for ACK/NACK: the PSN they answer).
    pub psn: u32,
    /// Bytes on the wire now (a trimmed packet shrinks to the header size).
    pub size: u32,
    /// Destination host of this packet (for ACKs: the flow's source).
    pub dst: u32,
    /// Flow key hashed by ECMP (data and its ACKs carry the same key).
    pub flow_key: u32,
    /// Node the packet arrives at next (set when it is put on a wire).
    pub next_node: u32,
    /// The port the packet was last routed to: its egress queue while a non-zero switch latency
    /// delays it, then the wire it travels on (fault checks read it when it arrives).
    pub egress: u32,
    /// ACK: cumulative acknowledgement (next PSN the receiver expects).
    pub cum_ack: u32,
    /// ACK: first PSN covered by `sack_bits`.
    pub sack_base: u32,
    /// ACK: bit i set when PSN `sack_base + i` has been received.
    pub sack_bits: u64,
    /// Time the data packet (or, for ACK/NACK, the data packet answered) left its sender.
    pub sent_at: Time,
    /// Entropy value: chosen by the sender's load balancer, echoed by ACK/NACK.
    pub ev: u16,
    /// What the packet is.
    pub kind: Kind,
    /// Bit set of [`flags`].
    pub flags: u8,
}

impl Packet {
    /// A packet of `kind` and `size` bytes with every other field zero (tests and builders
    /// start from it).
    pub fn blank(kind: Kind, size: u32) -> Self {
        Packet {
            flow: 0,
            psn: 0,
            size,
            dst: 0,
            flow_key: 0,
            next_node: 0,
            egress: 0,
            cum_ack: 0,
            sack_base: 0,
            sack_bits: 0,
            sent_at: 0,
            ev: 0,
            kind,
            flags: 0,
        }
    }

    /// True if the flag bit is set.
    #[inline]
    pub fn has(&self, flag: u8) -> bool {
        self.flags & flag != 0
    }

    /// True for packets that travel in the header (high-priority) lane.
    #[inline]
    pub fn is_header(&self) -> bool {
        self.kind != Kind::Data || self.has(flags::TRIMMED)
    }
}

const _: () = assert!(std::mem::size_of::<Packet>() <= 64);
