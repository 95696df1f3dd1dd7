//! Switches: the forwarding decision at ingress (explicit route, then the switch scheme; ECMP
//! inline), the forwarding latency, and what schemes ask for (release held packets, send their
//! own).
use super::prefetch::{Stage, MID, NEAR};
use super::{fabric, Simulation, Switching};
use crate::engine::prefetch::{prefetch, prefetch_all};
use crate::engine::Handle;
use crate::net::forwarding;
use crate::net::hash::EcmpHash;
use crate::net::packet::NO_ROUTE;
use crate::net::paths::PathTable;
use crate::net::world::{Event, Timer, World};
use crate::net::Kind;
use crate::net::{Packet, Topology};
use crate::routing::{ecmp, Ingress, SchemeAction, SchemeTimer, SwitchCtx};

/// The hot path of a switch arrival: the egress port plain ECMP picks for `pkt` at switch `s`
/// when it goes to a host with no explicit route and no candidate next hops; `None` when the
/// packet takes the general path ([`Simulation::ingress`]). The arrival's prefetch stages ask the
/// same question ahead of time.
#[inline(always)]
pub(super) fn inline_ecmp_port(
    switching: &Switching,
    fabric: &fabric::FabricExtras,
    topo: &Topology,
    salts: &[u32],
    s: u32,
    pkt: &Packet,
) -> Option<u32> {
    if !matches!(switching, Switching::Hashed)
        || pkt.route != NO_ROUTE
        || pkt.dst >= topo.hosts
        || fabric.next_hops.is_some()
        || fabric.ecmp_hash != EcmpHash::Lookup2
    {
        return None;
    }
    let cands = topo.candidates_to_host(s, pkt.dst);
    (!cands.is_empty()).then(|| ecmp::pick(pkt, salts[s as usize], cands))
}

impl Simulation {
    /// Prefetch stage `stage` of the arrival event `ev` of packet `h` over `link` (see
    /// [`super::prefetch`]): far ahead the packet and the node its link reaches (which every
    /// later stage reads first); at a switch on the inline ECMP path, the egress port it will
    /// be queued at (kept in the hints) and then the lane slot it will take; at a host, what
    /// [`Self::prefetch_host_arrival`] fetches.
    #[inline(always)]
    pub(super) fn prefetch_arrival(&self, stage: Stage, ev: Event, h: u32, link: u32) {
        let w = &self.world;
        match stage {
            Stage::Far => {
                w.pkts.prefetch(h);
                if let Some(node) = w.port_to.get(link as usize) {
                    prefetch(node);
                }
            }
            Stage::Mid => match self.ecmp_egress_hint(h, link) {
                Some(port) => {
                    self.hints.put(w.counters.events + MID as u64, ev, port);
                    if let Some(port) = w.ports.get(port as usize) {
                        prefetch_all(port);
                    }
                }
                None => self.prefetch_host_arrival(Stage::Mid, h, link),
            },
            Stage::Near => {
                let hint = self
                    .hints
                    .get(w.counters.events + NEAR as u64, ev)
                    .or_else(|| self.ecmp_egress_hint(h, link));
                match hint {
                    Some(port) => {
                        let port = &w.ports[port as usize];
                        let lane = if w.pkts.get(h).is_header() {
                            &port.headers
                        } else {
                            &port.data
                        };
                        if let Some(slot) = lane.next_slot() {
                            prefetch(slot);
                        }
                    }
                    None => self.prefetch_host_arrival(Stage::Near, h, link),
                }
            }
            Stage::Last => self.prefetch_host_arrival(Stage::Last, h, link),
        }
    }

    /// Prefetch stage `stage` of the egress event of packet `h`: the packet, then the port it
    /// is queued at.
    #[inline(always)]
    pub(super) fn prefetch_egress(&self, stage: Stage, h: u32) {
        let w = &self.world;
        match stage {
            Stage::Far => w.pkts.prefetch(h),
            Stage::Mid => {
                if let Some(port) = w.ports.get(w.pkts.get(h).egress as usize) {
                    prefetch_all(port);
                }
            }
            Stage::Near | Stage::Last => {}
        }
    }

    /// The egress port the inline ECMP fast path of [`Self::on_arrive`] will pick for packet
    /// `h` at the switch it arrives at over `link`; `None` when the packet reaches a host or
    /// takes another path (only a hint: the arrival decides for itself).
    #[inline]
    fn ecmp_egress_hint(&self, h: u32, link: u32) -> Option<u32> {
        let w = &self.world;
        let node = *w.port_to.get(link as usize)?;
        let s = node.checked_sub(w.topo.hosts)?;
        // The last hop's port is read only once the destination's edge switch has been
        // compared with this one: fetch both at once rather than one after the other.
        if let Some(down) = w.topo.host_downlink.get(w.pkts.get(h).dst as usize) {
            prefetch(down);
        }
        inline_ecmp_port(
            &self.switching,
            &self.fabric,
            &w.topo,
            &w.salts,
            s,
            w.pkts.get(h),
        )
    }

    /// Packet `h` reaches the end of `link`, which becomes its `egress` (what the fault and
    /// loss checks and the forwarding below read).
    pub(super) fn on_arrive(&mut self, h: Handle, link: u32, node: u32) {
        self.world.pkts.get_mut(h).egress = link;
        if self.arrival_hooks && !self.pass_arrival_hooks(h) {
            return;
        }
        let World {
            topo,
            pkts,
            salts,
            now,
            events,
            order,
            ..
        } = &mut self.world;
        let pkt = pkts.get_mut(h);
        pkt.ingress = pkt.egress;
        if node < topo.hosts {
            self.books.on_arrived(pkt.kind);
            match pkt.kind {
                Kind::Data => self.on_data(h),
                Kind::Ack | Kind::Nack => self.on_control(h),
                Kind::Rts => self.on_rts(h),
                Kind::Credit => self.on_pull(h),
                Kind::Pause => self.on_pfc_frame(h),
                Kind::Probe => self.on_probe(h),
                Kind::ProbeAck => self.on_probe_ack(h),
                _ => self.host_consumes(h),
            }
            return;
        }
        let s = node - topo.hosts;
        if let Some(port) = inline_ecmp_port(&self.switching, &self.fabric, topo, salts, s, pkt) {
            let latency = topo.switches[s as usize].latency;
            if latency == 0 {
                self.enqueue_switch(port, h);
            } else {
                pkt.egress = port;
                events.push(*now + latency, order.next_order(latency), Event::egress(h));
            }
            return;
        }
        if pkt.kind == Kind::Pause {
            self.books.on_arrived(Kind::Pause);
            self.on_pfc_frame(h);
            return;
        }
        self.ingress(s, h, true);
    }

    /// What a run with faults, random loss or elephant counting does to every arriving packet
    /// (one test on the hot path when all are off): false if the packet is gone.
    #[inline(never)]
    fn pass_arrival_hooks(&mut self, h: Handle) -> bool {
        if let Some(f) = self.faults.as_deref_mut() {
            if !f.off_wire(&mut self.world, h) {
                self.fault_drop(h);
                return false;
            }
        }
        if self.fabric.random_loss.is_some() && self.random_loss_takes(h) {
            return false;
        }
        if self.fabric.elephants.is_some() {
            self.count_elephant(h);
        }
        true
    }

    /// Switch `s` decides what to do with packet `h` (`scheme`: ask the switch scheme; false
    /// for packets the scheme made itself at this switch, which go by ECMP).
    #[inline(never)]
    fn ingress(&mut self, s: u32, h: Handle, scheme: bool) {
        let World {
            topo,
            paths,
            pkts,
            salts,
            ..
        } = &mut self.world;
        let pkt = pkts.get_mut(h);
        let via_candidates = match &self.fabric.next_hops {
            Some(table) if pkt.route == NO_ROUTE => {
                fabric::candidate_ports(table, topo, pkt, topo.switch_node(s))
            }
            _ => None,
        };
        let cands = if let Some(ports) = via_candidates {
            ports
        } else if pkt.route == NO_ROUTE && pkt.dst < topo.hosts {
            topo.candidates_to_host(s, pkt.dst)
        } else {
            candidates(topo, paths, pkt, s, &mut self.search_buf)
        };
        let decision = if scheme && matches!(self.switching, Switching::Scheme { .. }) {
            // The scheme gets the world mutably: hand it a copy of the candidates.
            let mut buf = std::mem::take(&mut self.candidates);
            buf.clear();
            buf.extend_from_slice(cands);
            let decision = self.ask_scheme(s, h, &buf);
            self.candidates = buf;
            self.act_on(s, h, decision);
            self.run_scheme_actions();
            return;
        } else if cands.is_empty() {
            Ingress::Drop
        } else {
            Ingress::Forward(match self.fabric.ecmp_hash {
                EcmpHash::Lookup2 => ecmp::pick(pkt, salts[s as usize], cands),
                EcmpHash::Murmur3SwitchSeed => ecmp::pick_murmur3_switch_seed(pkt, topo, s, cands),
            })
        };
        self.act_on(s, h, decision);
    }

    /// Carries out an ingress decision.
    #[inline]
    fn act_on(&mut self, s: u32, h: Handle, decision: Ingress) {
        match decision {
            Ingress::Forward(port) => self.forward(s, h, port),
            Ingress::Hold => {
                let kind = self.world.pkts.get(h).kind;
                self.books.held[kind as usize] += 1;
                if kind == Kind::Data {
                    self.held_data += 1;
                }
            }
            Ingress::Consume => {
                self.books.on_arrived(self.world.pkts.get(h).kind);
                self.world.counters.scheme_consumed += 1;
                // Words the scheme left unread go with the packet.
                if !self.world.payloads.is_empty() {
                    self.world.payloads.remove(&h);
                }
                self.world.pkts.free(h);
            }
            Ingress::Drop => self.no_route(self.world.topo.switch_node(s), h),
        }
    }

    fn ask_scheme(&mut self, s: u32, h: Handle, cands: &[u32]) -> Ingress {
        let header = self.transport.header;
        let Switching::Scheme { scheme, rngs, .. } = &mut self.switching else {
            unreachable!("only called with a scheme");
        };
        let rng = &mut rngs[s as usize];
        let mut ctx = SwitchCtx::new(&mut self.world, rng, header, &mut self.scheme_actions);
        scheme.ingress(&mut ctx, s, h, cands)
    }

    /// Sends packet `h` from switch `s` to egress `port` after the switch's latency.
    fn forward(&mut self, s: u32, h: Handle, port: u32) {
        let latency = self.world.topo.switches[s as usize].latency;
        if latency > 0 {
            self.world.pkts.get_mut(h).egress = port;
            let at = self.world.now + latency;
            self.world.schedule(at, Event::egress(h));
        } else {
            self.enqueue_switch(port, h);
        }
    }

    /// Carries out what the switch scheme asked for.
    pub(super) fn run_scheme_actions(&mut self) {
        // In the order asked: a reorder buffer releases its packets first in, first out.
        let mut actions = std::mem::take(&mut self.scheme_actions);
        for action in actions.drain(..) {
            match action {
                SchemeAction::Release {
                    switch,
                    packet,
                    port,
                } => {
                    let kind = self.world.pkts.get(packet).kind;
                    self.books.held[kind as usize] -= 1;
                    if kind == Kind::Data {
                        self.held_data -= 1;
                    }
                    self.world.pkts.get_mut(packet).ingress = crate::net::packet::RELEASED;
                    self.forward(switch, packet, port);
                }
                SchemeAction::Originate { switch, packet } => {
                    self.books.on_sent(self.world.pkts.get(packet).kind);
                    self.ingress(switch, packet, false);
                }
                SchemeAction::Record { flow, event } => self.record_lb(flow, Some(event)),
            }
        }
        // Nested calls (egress hooks while forwarding) ran their own actions; keep the buffer.
        self.scheme_actions = actions;
    }

    /// One of the switch scheme's timers fired at switch `switch` (the one that set it).
    pub(super) fn on_scheme_timer(&mut self, timer: Timer, switch: u32) {
        let header = self.transport.header;
        if let Switching::Scheme { scheme, rngs, .. } = &mut self.switching {
            let rng = &mut rngs[switch as usize];
            let mut ctx = SwitchCtx::new(&mut self.world, rng, header, &mut self.scheme_actions);
            scheme.on_timer(
                &mut ctx,
                SchemeTimer {
                    kind: timer.kind,
                    gen: timer.gen,
                    id: timer.id,
                },
            );
        }
        self.run_scheme_actions();
    }
}

/// The ports switch `s` may send `pkt` on: its route's next link (advancing its hop), else the
/// forwarding table's group towards its destination (for a switch without hosts, found by a
/// graph search into `buf`: rare, scheme packets only).
#[inline]
fn candidates<'a>(
    topo: &'a Topology,
    paths: &'a PathTable,
    pkt: &mut Packet,
    s: u32,
    buf: &'a mut Vec<u32>,
) -> &'a [u32] {
    if pkt.route != NO_ROUTE {
        pkt.hop += 1;
        return match paths.links(pkt.route).get(pkt.hop as usize) {
            Some(l) => std::slice::from_ref(l),
            None => &[],
        };
    }
    let dst = pkt.dst;
    if dst >= topo.hosts && topo.edge_index[(dst - topo.hosts) as usize] == u32::MAX {
        *buf = forwarding::next_hops_to_switch(topo, s, dst - topo.hosts);
        return buf;
    }
    topo.candidates(s, dst)
}
