//! The run a scheme's parameters are checked against: its packet sizes and, once built, its
//! network. A load balancer, congestion control or switch scheme validates its configuration
//! with it, so a size written in packets is checked at the run's MTU.
use super::Topology;

/// The run a scheme's parameters are checked in.
#[derive(Clone, Copy, Debug)]
pub struct RunContext<'a> {
    /// Packet size on the wire, headers included (bytes): what a size in `pkt` multiplies.
    pub mtu: u32,
    /// Header bytes of a packet.
    pub header: u32,
    /// The network, when it is known (`None` while a scenario file is read).
    pub topology: Option<&'a Topology>,
}

impl<'a> RunContext<'a> {
    /// A run of `mtu`-byte packets with `header`-byte headers, network not yet known.
    pub fn new(mtu: u32, header: u32) -> Self {
        RunContext {
            mtu,
            header,
            topology: None,
        }
    }

    /// The same run on `topology`.
    pub fn on(self, topology: &'a Topology) -> Self {
        RunContext {
            topology: Some(topology),
            ..self
        }
    }
}
