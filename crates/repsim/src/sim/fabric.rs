//! Optional fabric behaviour and receiver measurements (added for the LAPS experiments, usable
//! by any run): random loss at receiving ports ([`crate::fault::random_loss`]), next hops from
//! the candidate routes ([`crate::net::candidate_hops`]) and the run's receiver reordering
//! ([`crate::metrics::reorder`]), elephants per link over time ([`crate::metrics::elephants`]).
//! When all are off (with no faults) the arrival path tests one flag for them.
use super::observer::DropCause;
use super::{SimConfig, Simulation};
use crate::engine::Handle;
use crate::fault::random_loss::{RandomLoss, RandomLossStats};
use crate::metrics::elephants::ElephantCounter;
use crate::metrics::reorder::ReorderHistogram;
use crate::net::candidate_hops::{CandidateHops, NextHops};
use crate::net::hash::EcmpHash;
use crate::net::{Kind, Packet, Topology};

/// The optional parts of a run.
pub(super) struct FabricExtras {
    /// Random loss at receiving ports (`None`: off).
    pub(super) random_loss: Option<Box<RandomLoss>>,
    /// Next hops from the candidate routes (`None`: the forwarding table's).
    pub(super) next_hops: Option<Box<CandidateHops>>,
    /// Receiver reordering over the run.
    pub(super) reorder: ReorderHistogram,
    /// Elephants per link over time (`None`: off).
    pub(super) elephants: Option<Box<ElephantCounter>>,
    /// The ECMP switches' hash (not lookup2: every pick leaves the inline path).
    pub(super) ecmp_hash: EcmpHash,
}

impl FabricExtras {
    /// What `cfg` asks for on `topo`, with packets of `mtu` bytes.
    pub(super) fn new(cfg: &SimConfig, topo: &Topology, mtu: u32) -> Self {
        FabricExtras {
            random_loss: RandomLoss::new(cfg.loss.probability, topo.links.len(), cfg.seed)
                .map(Box::new),
            next_hops: (cfg.next_hops == NextHops::CandidateRoutes)
                .then(|| Box::new(CandidateHops::new(topo))),
            reorder: ReorderHistogram::default(),
            elephants: cfg
                .metrics
                .elephants(mtu)
                .map(|rule| Box::new(ElephantCounter::new(rule, topo))),
            ecmp_hash: cfg.ecmp_hash,
        }
    }
}

/// The candidate-route next hops of `pkt` at switch node `node` (advancing its hop count), or
/// `None` where the forwarding table decides (its destination's edge switch, packets for a
/// switch).
#[inline]
pub(super) fn candidate_ports<'a>(
    table: &'a CandidateHops,
    topo: &Topology,
    pkt: &mut Packet,
    node: u32,
) -> Option<&'a [u32]> {
    if pkt.dst >= topo.hosts || pkt.src >= topo.hosts {
        return None;
    }
    let hop = pkt.hop;
    pkt.hop = hop.saturating_add(1);
    table.ports(topo, pkt.src, pkt.dst, hop, node)
}

impl Simulation {
    /// Random loss at the port the packet arrives on: true (and the packet counted and freed)
    /// when it is lost. Every kind can be lost, PFC frames included, as in the LAPS code (a
    /// lost pause is not sent again until the next refresh; a lost resume leaves the port
    /// paused until the quantum runs out).
    #[inline(never)]
    pub(super) fn random_loss_takes(&mut self, h: Handle) -> bool {
        let port = self.world.pkts.get(h).egress;
        let Some(loss) = self.fabric.random_loss.as_deref_mut() else {
            return false;
        };
        if !loss.loses(port) {
            return false;
        }
        // Counted in the packet books by kind and cause; `random_loss_stats` reads them there.
        self.observe_drop(h, port, DropCause::RandomLoss);
        self.world.lose(h);
        true
    }

    /// What random loss discarded (`None`: off).
    pub fn random_loss_stats(&self) -> Option<RandomLossStats> {
        self.fabric.random_loss.as_ref()?;
        let lost = |kind: Kind| self.books.dropped[kind as usize][DropCause::RandomLoss as usize];
        let all: u64 = Kind::ALL.iter().map(|&kind| lost(kind)).sum();
        Some(RandomLossStats {
            data_dropped: lost(Kind::Data),
            control_dropped: all - lost(Kind::Data),
        })
    }

    /// Counts packet `h`, just arrived over its link, toward the elephants on that link if it
    /// is an elephant's data packet on a switch-to-switch link.
    #[inline(never)]
    pub(super) fn count_elephant(&mut self, h: Handle) {
        let pkt = self.world.pkts.get(h);
        let (link, flow, kind) = (pkt.egress, pkt.flow, pkt.kind);
        let Some(counter) = self.fabric.elephants.as_deref_mut() else {
            return;
        };
        if kind != Kind::Data || !counter.counts_link(link) {
            return;
        }
        if counter.is_elephant(self.flows[flow as usize].spec.bytes) {
            counter.on_elephant_packet(self.world.now, link, flow);
        }
    }
}
