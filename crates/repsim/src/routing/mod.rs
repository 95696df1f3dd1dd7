//! Switch-side routing: how a switch picks one of the equal-cost egress ports its table offers.
//!
//! The default, ECMP, hashes (flow key, EV, switch salt) and is inlined in the simulation's
//! forwarding path. Schemes that decide in the switch itself (adaptive routing, flowlet tables,
//! CONGA, ...) implement [`SwitchRouting`]: one file per scheme plus one line in [`REGISTRY`];
//! the scenario selects one with `[routing] switch = "<name>"`. A scheme sees the packet, the
//! candidate ports and read-only queue state, and may keep per-switch or per-port state of its
//! own (indexed by switch or port id, never by a std hash map).
use crate::engine::Time;
use crate::net::port::Port;
use crate::net::Packet;

pub mod adaptive;

/// What a routing scheme may look at when it decides.
pub struct PortView<'a> {
    /// Every egress port of the network (index = link id).
    pub ports: &'a [Port],
    /// Current time.
    pub now: Time,
    /// Size of a header-lane packet (ACK, NACK, trimmed data).
    pub header_size: u32,
}

impl PortView<'_> {
    /// Bytes waiting in a port, both lanes, including a data packet still being serialized.
    #[inline]
    pub fn queued_bytes(&self, port: u32) -> u64 {
        let p = &self.ports[port as usize];
        p.occupancy(self.now) + p.headers.len() as u64 * self.header_size as u64
    }
}

/// A switch-side port chooser.
pub trait SwitchRouting {
    /// Index (into `candidates`, which has at least two entries) of the port switch `switch`
    /// sends `pkt` to.
    fn select(&mut self, switch: u32, pkt: &Packet, candidates: &[u32], view: &PortView) -> usize;
}

/// What a scheme knows when it is created.
pub struct RoutingContext<'a> {
    /// Per-switch salts (also usable as a fixed per-switch tie-break order).
    pub salts: &'a [u32],
}

/// Constructor of a switch routing scheme.
pub type RoutingBuilder = fn(&RoutingContext) -> Box<dyn SwitchRouting>;

/// Scenario name -> constructor. `ecmp` (the default) is handled inline by the simulation.
pub const REGISTRY: &[(&str, RoutingBuilder)] = &[("adaptive", adaptive::build)];

/// Names accepted in `[routing] switch`.
pub fn names() -> Vec<&'static str> {
    std::iter::once("ecmp")
        .chain(REGISTRY.iter().map(|(n, _)| *n))
        .collect()
}

/// Builds the named scheme; `Ok(None)` for the inline default `ecmp`, `Err` if unknown.
pub fn build(name: &str, ctx: &RoutingContext) -> Result<Option<Box<dyn SwitchRouting>>, String> {
    if name == "ecmp" {
        return Ok(None);
    }
    REGISTRY
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, b)| Some(b(ctx)))
        .ok_or_else(|| {
            format!(
                "unknown switch routing '{name}'; known: {}",
                names().join(", ")
            )
        })
}
