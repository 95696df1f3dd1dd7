//! ECMP, the default switch scheme: hash (flow key, EV, switch salt) and take that candidate
//! (Bob Jenkins' lookup2, see [`crate::net::hash`]). The simulation calls [`pick`] inline on
//! its hot path; the [`Ecmp`] scheme is the same rule behind the trait.
use serde::{Deserialize, Serialize};

use super::{Ingress, RoutingScheme, SchemeSetup, SwitchCtx, SwitchScheme};
use crate::engine::Handle;
use crate::net::hash::{ecmp_pick, murmur3_ecmp_pick};
use crate::net::RunContext;
use crate::net::{Packet, Topology};
use crate::ConfigError;

/// `[routing] switch = "ecmp"` (no parameters).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EcmpSwitchConfig {}

impl RoutingScheme for EcmpSwitchConfig {
    /// Each switch's state is its own.
    fn shared_between_switches(&self) -> Option<&'static str> {
        None
    }

    /// The simulation hashes inline with [`pick`].
    fn hashes_only(&self) -> bool {
        true
    }

    /// The scheme for a run.
    fn build(&self, setup: &SchemeSetup) -> Box<dyn SwitchScheme> {
        Box::new(Ecmp {
            salts: setup.salts.to_vec(),
        })
    }

    /// Checks the parameters (there are none).
    fn validate(&self, _ctx: &RunContext) -> Result<(), ConfigError> {
        Ok(())
    }
}

/// The ECMP choice among `candidates` (at least one) at a switch with `salt`.
#[inline]
pub fn pick(pkt: &Packet, salt: u32, candidates: &[u32]) -> u32 {
    match candidates.len() {
        1 => candidates[0],
        n => candidates[ecmp_pick(pkt.flow_key(), pkt.ev as u32, salt, n as u32) as usize],
    }
}

/// The LAPS code's ECMP choice among `candidates` (at least one) at switch `s` of `topo`
/// ([`crate::net::hash::EcmpHash::Murmur3SwitchSeed`]): the switch's node id is its index
/// (switches first), a host's node id follows the switches.
#[inline]
pub fn pick_murmur3_switch_seed(pkt: &Packet, topo: &Topology, s: u32, candidates: &[u32]) -> u32 {
    match candidates.len() {
        1 => candidates[0],
        n => {
            let switches = topo.switches.len() as u32;
            let node = |id: u32| {
                if id < topo.hosts {
                    switches + id
                } else {
                    id - topo.hosts
                }
            };
            let i = murmur3_ecmp_pick(s, node(pkt.src), node(pkt.dst), pkt.flow, n as u32);
            candidates[i as usize]
        }
    }
}

/// Hashing switches.
pub struct Ecmp {
    salts: Vec<u32>,
}

impl SwitchScheme for Ecmp {
    fn ingress(
        &mut self,
        ctx: &mut SwitchCtx,
        switch: u32,
        h: Handle,
        candidates: &[u32],
    ) -> Ingress {
        if candidates.is_empty() {
            return Ingress::Drop;
        }
        Ingress::Forward(pick(ctx.packet(h), self.salts[switch as usize], candidates))
    }
}
