//! The fault timeline as a component: its actions are timers, and it judges every packet put
//! on or taken off a wire. Nothing here runs without a fault plan, apart from one `Option`
//! test per packet put on or taken off a wire.
use super::observer::{DropCause, PacketDrop};
use super::{Phase, Simulation};
use crate::engine::time::to_us;
use crate::engine::Handle;
use crate::fault::{ActionKind, FaultPlan, FaultState, FaultStats, Verdict};
use crate::net::forwarding;
use crate::net::lane::Queued;
use crate::net::packet::flags;
use crate::net::port::SWITCH_PORT;
use crate::net::world::{Owner, Timer};
use crate::net::Kind;

fn fault_timer(owner: Owner, id: u32) -> Timer {
    Timer {
        owner,
        kind: 0,
        gen: 0,
        id,
    }
}

impl Simulation {
    /// Installs a fault plan (once, at construction): its actions become timers. An empty
    /// plan changes nothing.
    pub(super) fn install_faults(&mut self, plan: FaultPlan) {
        if plan.is_empty() {
            return;
        }
        let state = FaultState::new(
            plan,
            self.world.ports.len(),
            self.cfg.seed,
            self.connections.rto,
            self.world.topo.routes.clone(),
        );
        for (i, a) in state.actions.iter().enumerate() {
            self.world
                .set_timer(a.time, fault_timer(Owner::Fault, i as u32));
        }
        self.faults = Some(Box::new(state));
    }

    /// What faults did so far (`None` without a fault plan).
    pub fn fault_stats(&self) -> Option<FaultStats> {
        self.faults.as_ref().map(|f| f.stats)
    }

    /// One message per flow given up because no path to its destination was left, naming the
    /// flow.
    pub fn unreachable_flows(&self) -> Vec<String> {
        self.gave_up_messages(true)
    }

    /// One message per flow given up although a path existed (its load balancer kept choosing
    /// failed paths, e.g. ECMP pinned to a dead link).
    pub fn stalled_flows(&self) -> Vec<String> {
        self.gave_up_messages(false)
    }

    fn gave_up_messages(&self, unreachable: bool) -> Vec<String> {
        let Some(fs) = self.faults.as_ref() else {
            return Vec::new();
        };
        fs.gave_up
            .iter()
            .filter(|(no_path, _)| *no_path == unreachable)
            .map(|(_, msg)| msg.clone())
            .collect()
    }

    /// Whether a port (link id) is down now.
    pub fn link_down(&self, port: u32) -> bool {
        self.faults
            .as_ref()
            .is_some_and(|f| f.down[port as usize] > 0)
    }

    /// Packet `q` is put on the wire of `port`: false when a fault discards it (the caller then
    /// calls [`Self::fault_drop`]); trims it in place in `trim` loss mode, and `q`'s size with it.
    #[inline]
    pub(super) fn fault_on_wire(&mut self, port: u32, q: &mut Queued) -> bool {
        self.world.pkts.get_mut(q.handle).egress = port;
        let kept = self.fault_check(q.handle, true);
        q.size = self.world.pkts.get(q.handle).size;
        kept
    }

    /// A packet is taken off its wire: false when the link went down meanwhile and the packet
    /// was discarded.
    #[inline]
    pub(super) fn fault_off_wire(&mut self, h: Handle) -> bool {
        let kept = self.fault_check(h, false);
        if !kept {
            self.fault_drop(h);
        }
        kept
    }

    /// Applies the fault verdict of the packet's link (`egress`) when it goes on (`on_wire`)
    /// or comes off the wire: trims it in place in `trim` loss mode; false when it is lost.
    #[inline]
    fn fault_check(&mut self, h: Handle, on_wire: bool) -> bool {
        let header = self.transport.header;
        let Some(fs) = self.faults.as_mut() else {
            return true;
        };
        let pkt = self.world.pkts.get_mut(h);
        let is_data = pkt.kind == Kind::Data;
        let full_data = is_data && !pkt.has(flags::TRIMMED);
        let verdict = if on_wire {
            fs.on_wire(pkt.egress, is_data, full_data)
        } else {
            fs.off_wire(pkt.egress, is_data, full_data)
        };
        match verdict {
            Verdict::Pass => true,
            Verdict::Trim => {
                pkt.size = header;
                pkt.flags |= flags::TRIMMED;
                fs.stats.data_trimmed += 1;
                true
            }
            Verdict::Drop => false,
        }
    }

    /// Tells the observer, if any, of a lost packet.
    pub(super) fn observe_drop(&mut self, h: Handle, port: u32, cause: DropCause) {
        self.books.on_dropped(self.world.pkts.get(h).kind, cause);
        if let Some(o) = self.observer.as_deref_mut() {
            let pkt = self.world.pkts.get(h);
            o.packet_dropped(&PacketDrop {
                time: self.world.now,
                port,
                flow: pkt.flow,
                kind: pkt.kind,
                cause,
            });
        }
    }

    /// Counts and frees a packet lost to a fault.
    pub(super) fn fault_drop(&mut self, h: Handle) {
        let port = self.world.pkts.get(h).egress;
        self.observe_drop(h, port, DropCause::Fault);
        let data = self.world.lose(h);
        if let Some(fs) = self.faults.as_mut() {
            if data {
                fs.stats.data_dropped += 1;
            } else {
                fs.stats.control_dropped += 1;
            }
        }
    }

    /// A switch has no route left towards the packet's destination: the packet is discarded.
    pub(super) fn no_route(&mut self, node: u32, h: Handle) {
        let pkt = self.world.pkts.get(h);
        let (f, port) = (pkt.flow as usize, pkt.ingress);
        self.observe_drop(h, port, DropCause::NoRoute);
        if let Some(fs) = self.faults.as_mut() {
            fs.stats.no_route += 1;
            if fs.no_route_at.len() <= f {
                fs.no_route_at.resize(f + 1, u32::MAX);
            }
            fs.no_route_at[f] = node;
        }
        self.world.lose(h);
    }

    pub(super) fn on_fault(&mut self, i: u32) {
        let mtu = self.transport.mtu as u64;
        let header = self.transport.header;
        let queue = self.queue;
        let now = self.world.now;
        let Some(fs) = self.faults.as_mut() else {
            return;
        };
        let a = fs.actions[i as usize];
        fs.stats.actions += 1;
        let p = a.port as usize;
        match a.kind {
            ActionKind::Rate {
                rate_bps,
                buffer_scale,
            } => {
                let current = self.world.ports[p].class;
                fs.original[p].get_or_insert(current);
                let mut class = *self.world.port_classes.get(current);
                class.rate_bps = rate_bps;
                if self.port_hosts[p].host == SWITCH_PORT {
                    let speed = queue.rate_scale(self.world.topo.links[p].rate_bps);
                    class.params = queue.port_params(buffer_scale * speed, header);
                    class.params.capacity = class.params.capacity.max(mtu);
                }
                self.world.set_port_class(a.port, class);
            }
            ActionKind::RestoreRate => {
                if let Some(class) = fs.original[p].take() {
                    self.world.ports[p].class = class;
                }
            }
            _ => {
                if fs.apply(&a) {
                    if let Some(delay) = fs.reconvergence {
                        let at = now + delay;
                        let snapshot = fs.alive();
                        // Changes at the same instant share one recomputation.
                        match fs.snapshots.last_mut() {
                            Some((t, Some(s))) if *t == at => *s = snapshot,
                            _ => {
                                fs.snapshots.push((at, Some(snapshot)));
                                let id = (fs.snapshots.len() - 1) as u32;
                                self.world.set_timer(at, fault_timer(Owner::Reroute, id));
                            }
                        }
                    }
                }
            }
        }
    }

    pub(super) fn on_reroute(&mut self, i: u32) {
        let Some(fs) = self.faults.as_mut() else {
            return;
        };
        let Some(alive) = fs.snapshots[i as usize].1.take() else {
            return;
        };
        self.world.topo.routes = forwarding::reconverge(&self.world.topo, &fs.base_routes, &alive);
        fs.stats.reconvergences += 1;
    }

    /// Called on a retransmission timeout: gives the flow up (true) when it has heard no ACK
    /// or NACK for the configured time.
    pub(super) fn fault_gave_up(&mut self, f: u32) -> bool {
        let now = self.world.now;
        let Some(fs) = self.faults.as_mut() else {
            return false;
        };
        let fi = f as usize;
        let flow = &self.flows[fi];
        let heard = flow.stats.acks + flow.stats.nacks;
        if fs.progress.len() <= fi {
            fs.progress.resize(fi + 1, (u64::MAX, 0));
        }
        let e = &mut fs.progress[fi];
        if e.0 != heard {
            let since = if e.0 == u64::MAX && heard == 0 {
                flow.started_at.unwrap_or(flow.spec.start).min(now)
            } else {
                now
            };
            *e = (heard, since);
        }
        let silent_for = now - e.1;
        if silent_for < fs.give_up_after {
            return false;
        }
        // Is there any path left at all (over links that are up now)?
        let (src, dst) = (flow.spec.src as usize, flow.spec.dst as usize);
        let alive = fs.alive();
        let t = &self.world.topo;
        let (st, dt) = (t.host_edge[src], t.host_edge[dst]);
        let path_exists = alive[t.host_uplink[src] as usize]
            && alive[t.host_downlink[src] as usize]
            && alive[t.host_uplink[dst] as usize]
            && alive[t.host_downlink[dst] as usize]
            && (st == dt || {
                let r = forwarding::reach(t, &fs.base_routes, &alive);
                let (se, de) = (t.edge_index[st as usize], t.edge_index[dt as usize]);
                r[de as usize][st as usize] && r[se as usize][dt as usize]
            });
        let why = match fs.no_route_at.get(fi).copied().filter(|&n| n != u32::MAX) {
            Some(node) => format!(
                "its packets found no route at {} (reconvergence removed every path)",
                self.world.topo.node_name(node)
            ),
            None if path_exists => "paths exist but every one it used is failed".to_string(),
            None => "every path between the two hosts is failed".to_string(),
        };
        let what = if path_exists {
            "stalled"
        } else {
            "destination unreachable"
        };
        let msg = format!(
            "flow {} (host {} -> host {}): {what}: no ACK or NACK for {:.1} us ({} timeouts); {why}; \
             given up at t = {:.1} us",
            flow.spec.id,
            flow.spec.src,
            flow.spec.dst,
            to_us(silent_for),
            flow.stats.timeouts,
            to_us(now)
        );
        fs.gave_up.push((!path_exists, msg));
        self.endpoint_bytes_released += super::memory::endpoint_bytes(&self.flows[fi]);
        let flow = &mut self.flows[fi];
        flow.phase = Phase::GaveUp;
        let src = flow.spec.src as usize;
        if flow.in_ready_list {
            flow.in_ready_list = false;
            self.hosts[src].ready.retain(|&x| x != f);
        }
        if let Some(s) = flow.sender.as_mut() {
            s.stop();
            s.release();
        }
        if let Some(r) = flow.receiver.as_mut() {
            r.release();
        }
        true
    }
}
