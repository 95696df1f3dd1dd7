//! Packets leaving a partition: when a simulation runs as one partition of a network split
//! over threads ([`crate::sim::parallel`]), a packet put on a link whose far end another
//! partition owns does not become an arrival event here; it is copied out of the arena into
//! the parcel for that partition, with the arrival's time and tie-break, and enters the other
//! partition's arena and event list between windows.
use crate::engine::Time;
use crate::net::world::Event;
use crate::net::Packet;

/// [`Outbox::far`] of a port whose far end this partition owns.
pub const LOCAL: u32 = u32::MAX;

/// Packets on their way to one other partition, in the order they were sent: each packet
/// carries the link it travels on in its [`Packet::egress`] (which its arrival sets to that
/// link anyway) and, at the same index, its arrival time and the tie-break among same-time
/// events (the sending entity and its count; see [`crate::engine::order`]). Two arrays
/// rather than one of records: a packet is a cache line, and the record around it would be
/// two.
#[derive(Debug, Default)]
pub struct Parcel {
    /// Arrival time and tie-break of each packet.
    pub stamps: Vec<(Time, u64)>,
    /// The packets.
    pub packets: Vec<Packet>,
    /// Other events for the partition's nodes (a timer such as a receiver's notice that its
    /// sender finished), with their times and tie-breaks.
    pub events: Vec<(Time, u64, Event)>,
    /// The words packets carry beyond their header (the world's map of them by handle),
    /// by the packet's index in `packets`.
    pub payloads: Vec<(u32, Vec<u32>)>,
}

/// The packets a partition has sent to the others since the last exchange.
#[derive(Debug)]
pub struct Outbox {
    /// Per port: the partition owning its far end, or [`LOCAL`].
    pub far: Vec<u32>,
    /// Per destination partition: what is on its way there.
    pub sent: Vec<Parcel>,
}

impl Outbox {
    /// The outbox of partition `me` when node `n` belongs to partition `of_node[n]` and port
    /// `p` leads to node `port_to[p]`.
    pub fn new(me: u32, of_node: &[u32], port_to: &[u32], parts: u32) -> Self {
        let far = port_to
            .iter()
            .map(|&n| match of_node[n as usize] {
                p if p == me => LOCAL,
                p => p,
            })
            .collect();
        Outbox {
            far,
            sent: (0..parts).map(|_| Parcel::default()).collect(),
        }
    }

    /// Puts packet `packet`, arriving at the far end of link `link` at `at` with tie-break
    /// `order`, into the parcel for partition `to`, with the words it carries if any.
    #[inline]
    pub fn send(
        &mut self,
        to: u32,
        at: Time,
        order: u64,
        link: u32,
        mut packet: Packet,
        words: Option<Vec<u32>>,
    ) {
        packet.egress = link;
        let parcel = &mut self.sent[to as usize];
        if let Some(words) = words {
            parcel.payloads.push((parcel.packets.len() as u32, words));
        }
        parcel.stamps.push((at, order));
        parcel.packets.push(packet);
    }
}
