//! The packet: a plain `Copy` value of at most 64 bytes living in the simulation's arena,
//! carrying what real headers carry and nothing the model does not need.
use crate::engine::Time;
use crate::net::hash::flow_key;

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
    /// A path probe (data lane, small; answered by a [`Kind::ProbeAck`]).
    Probe,
    /// The answer to a probe.
    ProbeAck,
    /// A notification between switches or from a switch to a host (scheme-defined contents).
    Notify,
    /// A congestion notification packet (DCQCN-style) for the flow's sender.
    Cnp,
    /// A pause or resume frame for the link it is sent on (PFC).
    Pause,
    /// A credit (pull) granting its receiver the right to send.
    Credit,
}

impl Kind {
    /// Every kind, in declaration order (`kind as usize` indexes it).
    pub const ALL: [Kind; 10] = [
        Kind::Data,
        Kind::Ack,
        Kind::Nack,
        Kind::Rts,
        Kind::Probe,
        Kind::ProbeAck,
        Kind::Notify,
        Kind::Cnp,
        Kind::Pause,
        Kind::Credit,
    ];

    /// The kind's name in reports and test messages.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Data => "data",
            Kind::Ack => "ack",
            Kind::Nack => "nack",
            Kind::Rts => "rts",
            Kind::Probe => "probe",
            Kind::ProbeAck => "probe_ack",
            Kind::Notify => "notify",
            Kind::Cnp => "cnp",
            Kind::Pause => "pause",
            Kind::Credit => "credit",
        }
    }
}

// `Kind::ALL` lists every kind at its own index.
const _: () = {
    let mut i = 0;
    while i < Kind::ALL.len() {
        assert!(Kind::ALL[i] as usize == i);
        i += 1;
    }
};

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
    /// ACK only: the receiver asks the sender to slow down (a CNP carried by the ACK).
    pub const CNP: u8 = 32;
    /// The packet's traffic class is exempt from switch-side rerouting: schemes that honour
    /// it hash it as ECMP does (the reference's background flows under adaptive routing).
    pub const SWITCH_EXEMPT: u8 = 64;
    /// ACK and probe answer only: `aux` holds the one-way delay (ps) of the packet answered,
    /// not a SACK bitmap (receivers that echo delays).
    pub const ONE_WAY: u8 = 128;
}

/// "No explicit route": the packet is forwarded by the switches' tables.
pub const NO_ROUTE: u32 = u32::MAX;

/// [`Packet::ingress`] of a packet a switch scheme held and released: it was kept outside the
/// switch's buffer accounting (as the reference keeps ConWeave's reorder queues) and stays
/// outside it on its way out, so PFC neither charges nor drops it.
pub const RELEASED: u32 = u32::MAX;

/// One packet in flight or queued: 64 bytes, aligned to a cache line so that every packet in
/// the arena sits in exactly one (asserted).
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(align(64))]
pub struct Packet {
    /// Time the data packet (or, for ACK/NACK, the data packet answered) left its sender.
    pub sent_at: Time,
    /// ACK and NACK: the selective-ACK bitmap (bit i: PSN `sack_base + i` received). Any other
    /// kind: free for the schemes that handle it (e.g. a switch scheme's tag on data packets).
    pub aux: u64,
    /// Index of the flow (connection) it belongs to.
    pub flow: u32,
    /// Packet sequence number of the data packet (for ACK/NACK: the PSN they answer).
    pub psn: u32,
    /// Bytes on the wire now (a trimmed packet shrinks to the header size).
    pub size: u32,
    /// Node that sent it (a host, or a switch for switch-made packets).
    pub src: u32,
    /// Node it is addressed to (a host, or a switch).
    pub dst: u32,
    /// ACK: cumulative acknowledgement (next PSN the receiver expects). Data and RTS of a
    /// credit-paced connection: pull credit used; credit (PULL): credit granted (cumulative
    /// bytes, low 32 bits; see [`crate::cc::PullRequest`]).
    pub cum_ack: u32,
    /// ACK: first PSN covered by the SACK bitmap in `aux`. Data and RTS of a credit-paced
    /// connection: pull target (cumulative bytes, low 32 bits).
    pub sack_base: u32,
    /// The port the packet was last routed to: its egress queue while a switch's forwarding
    /// latency delays it; from its arrival, the link it came over (set from the arrival event:
    /// serving a port does not write the packet, except for a fault check on the wire).
    pub egress: u32,
    /// The link it arrived on at its current node.
    pub ingress: u32,
    /// Explicit route (a path id of the simulation's path table) or [`NO_ROUTE`].
    pub route: u32,
    /// Entropy value: chosen by the sender's load balancer, echoed by ACK/NACK.
    pub ev: u16,
    /// Two bytes of header space owned by whichever scheme handles the packet.
    pub scheme: u16,
    /// What the packet is.
    pub kind: Kind,
    /// Bit set of [`flags`].
    pub flags: u8,
    /// With a route: index of the link of the route it travels on (or last travelled).
    pub hop: u8,
    /// Trimmed data only: it was trimmed at the port facing its receiver (the last hop), not
    /// on the way there.
    pub trimmed_at_last_hop: bool,
}

impl Packet {
    /// A packet of `kind` and `size` bytes with every other field zero and no route (tests and
    /// builders start from it).
    pub fn blank(kind: Kind, size: u32) -> Self {
        Packet {
            sent_at: 0,
            aux: 0,
            flow: 0,
            psn: 0,
            size,
            src: 0,
            dst: 0,
            cum_ack: 0,
            sack_base: 0,
            egress: 0,
            ingress: 0,
            route: NO_ROUTE,
            ev: 0,
            scheme: 0,
            kind,
            flags: 0,
            hop: 0,
            trimmed_at_last_hop: false,
        }
    }

    /// True if the flag bit is set.
    #[inline]
    pub fn has(&self, flag: u8) -> bool {
        self.flags & flag != 0
    }

    /// True for packets that travel in the header (high-priority) lane: everything but data and
    /// probes, and trimmed data.
    #[inline]
    pub fn is_header(&self) -> bool {
        !matches!(self.kind, Kind::Data | Kind::Probe) || self.has(flags::TRIMMED)
    }

    /// True for what a receiver sends back to a sender (ACK, NACK, credit).
    #[inline]
    pub fn is_reply(&self) -> bool {
        matches!(self.kind, Kind::Ack | Kind::Nack | Kind::Credit)
    }

    /// The SACK bitmap of an ACK or NACK.
    #[inline]
    pub fn sack_bits(&self) -> u64 {
        self.aux
    }

    /// The key ECMP hashes: the flow's (sender, receiver) pair, so that a flow's ACKs and PULLs
    /// carry the same key as its data.
    #[inline]
    pub fn flow_key(&self) -> u32 {
        if self.is_reply() {
            flow_key(self.dst, self.src)
        } else {
            flow_key(self.src, self.dst)
        }
    }
}

const _: () = assert!(std::mem::size_of::<Packet>() == 64);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_hash_like_their_data() {
        let mut data = Packet::blank(Kind::Data, 4150);
        data.src = 3;
        data.dst = 40;
        let mut ack = Packet::blank(Kind::Ack, 64);
        ack.src = 40;
        ack.dst = 3;
        assert_eq!(data.flow_key(), ack.flow_key());
        let pull = Packet {
            kind: Kind::Credit,
            ..ack
        };
        assert_eq!(data.flow_key(), pull.flow_key(), "PULLs hash like ACKs");
        assert_eq!(data.flow_key(), flow_key(3, 40));
        assert!(ack.is_header() && !data.is_header());
        assert!(!Packet::blank(Kind::Probe, 64).is_header());
        assert_eq!(std::mem::size_of::<Packet>(), 64);
    }
}
