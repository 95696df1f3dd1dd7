//! Receiver-driven credit ([`crate::cc::credit`]): the receiving hosts' pull pacers, the PULL
//! packets they send through their NIC's control lane, and what data packets tell them. None
//! of it exists unless a traffic class's congestion control asks for receiver pacing.
use super::flow_table::FlowTable;
use super::{Phase, Simulation};
use crate::cc::credit::{PullArrival, ReceiverPacing};
use crate::cc::CcSpec;
use crate::engine::Handle;
use crate::net::packet::{flags, NO_ROUTE};
use crate::net::port::QueueParams;
use crate::net::world::{Owner, Timer, World};
use crate::net::{Kind, Packet, Topology};
use crate::transport::Sender;

fn pacer_timer(host: u32) -> Timer {
    Timer {
        owner: Owner::Pacer,
        kind: 0,
        gen: 0,
        id: host,
    }
}

/// Stamps a credit-paced sender's pull request on its outgoing data packet or RTS.
#[inline]
pub(super) fn stamp(pkt: &mut Packet, s: &Sender) {
    if s.credit_gated() {
        let r = s.pull_request();
        pkt.sack_base = r.target as u32;
        pkt.cum_ack = r.used as u32;
    }
}

/// The run's receiver-side credit pacing: the pull pacers of every receiving host, which the
/// first traffic class whose congestion control asks for them built, and their timers. It acts
/// on the network through the [`World`] it is handed: it sets its own timers and makes PULL
/// packets, which the simulation queues on the host's NIC.
pub(super) struct CreditPacing {
    pacers: Box<dyn ReceiverPacing>,
    /// Per flow, its credit granted and outstanding as its receiver's partition left them,
    /// once the partitions of a run split over threads are folded (each partition's pacers
    /// served only its own hosts).
    folded: Option<Vec<(Option<u64>, u64)>>,
}

impl CreditPacing {
    /// The pacing some class of `specs` asks for on `topo`'s hosts (`None`: no class does).
    fn new(specs: &[&CcSpec], topo: &Topology, mtu: u32, seed: u64) -> Option<Self> {
        let rates: Vec<u64> = topo
            .host_downlink
            .iter()
            .map(|&l| topo.links[l as usize].rate_bps)
            .collect();
        let pacers = specs
            .iter()
            .find_map(|c| c.receiver_pacing(&rates, mtu, seed))?;
        Some(CreditPacing {
            pacers,
            folded: None,
        })
    }

    /// Flow `f` to `dst` started under a credit-gated sender holding at most `cap` unused.
    fn flow_started(&mut self, f: u32, dst: u32, cap: u64) {
        self.pacers.add_sink(f, dst, cap);
    }

    /// Flow `f` finished: no more PULLs for it.
    fn flow_finished(&mut self, f: u32) {
        self.pacers.remove_sink(f);
    }

    /// Packet `h` (data, trimmed header or RTS) reached its receiver: its pull request goes to
    /// the host's pacer, which may need waking.
    fn arrival(&mut self, world: &mut World, h: Handle) {
        let pkt = world.pkts.get(h);
        let wake = self.pacers.on_arrival(
            world.now,
            &PullArrival {
                flow: pkt.flow,
                target: pkt.sack_base,
                used: pkt.cum_ack,
                trimmed: pkt.has(flags::TRIMMED),
                trimmed_at_last_hop: pkt.trimmed_at_last_hop,
                rts: pkt.kind == Kind::Rts,
                ecn: pkt.kind == Kind::Data && pkt.has(flags::ECN) && !pkt.has(flags::TRIMMED),
                ev: pkt.ev,
                route: pkt.route,
            },
        );
        if let Some(at) = wake {
            let host = pkt.dst;
            world.set_timer(at, pacer_timer(host));
        }
    }

    /// Host `host`'s pacer wakes: the PULL it grants, made and counted, for the simulation to
    /// send through the host's control lane (`header` bytes; it returns on the reverse of the
    /// flow's latest route, as ACKs do).
    fn wake(
        &mut self,
        world: &mut World,
        flows: &FlowTable,
        host: u32,
        header: u32,
    ) -> Option<Handle> {
        let now = world.now;
        let step = self.pacers.on_timer(host, now);
        if let Some(at) = step.rearm {
            world.set_timer(at, pacer_timer(host));
        }
        let g = step.grant?;
        let spec = &flows[g.flow as usize].spec;
        let route = if g.route == NO_ROUTE {
            NO_ROUTE
        } else {
            world.paths.reverse(g.route)
        };
        let pkt = Packet {
            flow: g.flow,
            src: spec.dst,
            dst: spec.src,
            sent_at: now,
            cum_ack: g.granted as u32,
            ev: g.ev,
            route,
            ..Packet::blank(Kind::Credit, header)
        };
        world.counters.credits_sent += 1;
        Some(world.pkts.alloc(pkt))
    }
}

impl Simulation {
    /// Builds the pull pacers if some traffic class's congestion control asks for them (the
    /// first such class's parameters pace every host), and turns ECN off on switch ports facing
    /// hosts if one asks (whether or not it paces).
    pub(super) fn setup_credit(&mut self) {
        let specs: Vec<&CcSpec> = std::iter::once(&self.cfg.cc)
            .chain(self.classes.iter().filter_map(|c| c.cc.as_ref()))
            .collect();
        self.credit =
            CreditPacing::new(&specs, &self.world.topo, self.transport.mtu, self.cfg.seed);
        if specs.iter().any(|c| c.no_ecn_at_last_hop()) {
            let hosts = self.world.topo.hosts;
            for port in 0..self.world.topo.links.len() as u32 {
                let link = &self.world.topo.links[port as usize];
                if link.from < hosts || link.to >= hosts {
                    continue;
                }
                let mut class = *self.world.port_class(port);
                class.params.ecn_min = QueueParams::OFF;
                class.params.ecn_max = QueueParams::OFF;
                self.world.set_port_class(port, class);
            }
        }
    }

    /// Flow `f` started with sender `s` (built where its receiver runs too, as both halves
    /// are): its receiver's pacer learns of it if the sender is credit gated.
    pub(super) fn credit_flow_started(&mut self, f: u32, s: &Sender) {
        let Some(pacing) = self.credit.as_mut() else {
            return;
        };
        if let Some(gate) = s.cc().credit_gate() {
            pacing.flow_started(f, self.flows[f as usize].spec.dst, gate.credit_cap());
        }
    }

    /// Flow `f`'s receiver heard that its sender finished: no more PULLs for it.
    pub(super) fn credit_flow_finished(&mut self, f: u32) {
        if let Some(pacing) = self.credit.as_mut() {
            pacing.flow_finished(f);
        }
    }

    /// A data packet, trimmed header or RTS reached the receiver of a running connection: its
    /// pull request goes to the host's pacer.
    #[inline(never)]
    pub(super) fn credit_arrival(&mut self, h: Handle) {
        if let Some(pacing) = self.credit.as_mut() {
            pacing.arrival(&mut self.world, h);
        }
    }

    /// Host `host`'s pull pacer wakes: it may send one PULL through the host's control lane.
    pub(super) fn on_pacer(&mut self, host: u32) {
        let Some(pacing) = self.credit.as_mut() else {
            return;
        };
        let header = self.transport.header;
        let Some(h) = pacing.wake(&mut self.world, &self.flows, host, header) else {
            return;
        };
        self.books.on_sent(Kind::Credit);
        let port = self.world.topo.host_uplink[host as usize];
        self.queue_header(port, h);
        self.kick(port);
    }

    /// A PULL reaches its sender: the credit it grants may let the flow send.
    #[inline(never)]
    pub(super) fn on_pull(&mut self, h: Handle) {
        let now = self.world.now;
        let pkt = *self.world.pkts.get(h);
        self.world.pkts.free(h);
        self.world.counters.credits_arrived += 1;
        let flow = &mut self.flows[pkt.flow as usize];
        if flow.phase != Phase::Running {
            return;
        }
        let s = flow.sender.as_mut().expect("running flows have a sender");
        if s.on_pull(now, pkt.cum_ack) {
            self.mark_ready(pkt.flow);
        }
    }

    /// Cumulative bytes of credit the receiver's pull pacer granted flow `f`, if it is credit
    /// paced.
    pub fn credit_granted(&self, f: u32) -> Option<u64> {
        let pacing = self.credit.as_ref()?;
        match &pacing.folded {
            Some(folded) => folded.get(f as usize)?.0,
            None => pacing.pacers.granted(f),
        }
    }

    /// Credit granted to flow `f` that its receiver's pacer counts as unused (granted minus the
    /// highest use its packets reported; never above the flow's cap).
    pub fn credit_outstanding(&self, f: u32) -> u64 {
        self.credit.as_ref().map_or(0, |p| match &p.folded {
            Some(folded) => folded.get(f as usize).map_or(0, |c| c.1),
            None => p.pacers.outstanding(f),
        })
    }

    /// Takes into this simulation's view of the pull pacers every flow's credit from the
    /// partition holding its receiver (`holder`: that partition, `None` for this one).
    pub(super) fn fold_credit<'a>(&mut self, holder: &dyn Fn(u32) -> Option<&'a Simulation>) {
        if self.credit.is_none() {
            return;
        }
        let folded = (0..self.flows.len() as u32)
            .map(|f| {
                let part = holder(self.flows[f as usize].spec.dst).unwrap_or(&*self);
                (part.credit_granted(f), part.credit_outstanding(f))
            })
            .collect();
        if let Some(pacing) = self.credit.as_mut() {
            pacing.folded = Some(folded);
        }
    }
}
