//! The fault timeline as an owned part of the simulation ([`Faults`]): its actions are timers,
//! it judges every packet put on or taken off a wire, and it decides when a silent flow is
//! given up. It acts on the network only through the [`World`] it is handed; the simulation
//! keeps the glue that touches flows, hosts and the observer. Nothing here exists without a
//! fault plan; the packet path then pays one `Option` test per packet put on a wire and none
//! as it comes off (the arrival's one flag covers faults, random loss and elephant counting).
use super::observer::{DropCause, PacketDrop};
use super::{Flow, Phase, Simulation};
use crate::engine::time::to_us;
use crate::engine::{Handle, Time};
use crate::fault::{ActionKind, FaultPlan, FaultState, FaultStats, GaveUp, Verdict};
use crate::net::forwarding;
use crate::net::lane::Queued;
use crate::net::packet::flags;
use crate::net::port::QueueBytes;
use crate::net::world::{Owner, Timer, World};
use crate::net::Kind;
use crate::net::Topology;

fn fault_timer(owner: Owner, id: u32) -> Timer {
    Timer {
        owner,
        kind: 0,
        gen: 0,
        id,
    }
}

/// A run's faults: the plan's state and what applying it needs from the run's settings.
pub(super) struct Faults {
    state: FaultState,
    /// Size of a trimmed packet (the transport's header).
    header: u32,
    /// The transport's MTU: no switch queue shrinks below one packet.
    mtu: u64,
    /// The run's queue settings, which a `rate` fault scales.
    queue: QueueBytes,
}

/// What the fault part needs from the run to be installed.
pub(super) struct FaultSetup {
    /// The run's seed (each port's drop stream derives from it).
    pub(super) seed: u64,
    /// The run's retransmission timeout (the default give-up delay derives from it).
    pub(super) rto: Time,
    /// Size of a trimmed packet.
    pub(super) header: u32,
    /// The transport's MTU.
    pub(super) mtu: u64,
    /// The run's queue settings.
    pub(super) queue: QueueBytes,
}

impl Faults {
    /// The fault part of `plan` (`None` for an empty plan, which changes nothing): its actions
    /// become timers in `world`.
    pub(super) fn install(plan: FaultPlan, world: &mut World, setup: FaultSetup) -> Option<Self> {
        if plan.is_empty() {
            return None;
        }
        let state = FaultState::new(
            plan,
            world.ports.len(),
            setup.seed,
            setup.rto,
            world.topo.routes.clone(),
        );
        for (i, a) in state.actions.iter().enumerate() {
            world.set_timer(a.time, fault_timer(Owner::Fault, i as u32));
        }
        Some(Faults {
            state,
            header: setup.header,
            mtu: setup.mtu,
            queue: setup.queue,
        })
    }

    /// What faults did so far.
    pub(super) fn stats(&self) -> FaultStats {
        self.state.stats
    }

    /// The messages of the flows given up with no path left (`unreachable`) or with one, in
    /// the order they were given up.
    fn gave_up_messages(&self, unreachable: bool, topo: &Topology) -> Vec<String> {
        self.state
            .gave_up
            .iter()
            .filter(|g| g.no_path == unreachable)
            .map(|g| self.gave_up_message(g, topo))
            .collect()
    }

    /// Why a flow was given up, in words.
    fn gave_up_message(&self, g: &GaveUp, topo: &Topology) -> String {
        let (id, src, dst) = g.id_src_dst;
        let no_route = self.state.no_route_at.get(g.flow as usize);
        let why = match no_route.map(|&(_, node)| node).filter(|&n| n != u32::MAX) {
            Some(node) => format!(
                "its packets found no route at {} (reconvergence removed every path)",
                topo.node_name(node)
            ),
            None if !g.no_path => "paths exist but every one it used is failed".to_string(),
            None => "every path between the two hosts is failed".to_string(),
        };
        let what = if g.no_path {
            "destination unreachable"
        } else {
            "stalled"
        };
        format!(
            "flow {} (host {} -> host {}): {what}: no ACK or NACK for {:.1} us ({} timeouts); {why}; \
             given up at t = {:.1} us",
            id,
            src,
            dst,
            to_us(g.silent_for),
            g.timeouts,
            to_us(g.at)
        )
    }

    /// Takes in what another partition of the same run counted and recorded (see
    /// [`super::shard`]): the packets it judged, the switches where its packets found no
    /// route and the flows it gave up; the actions and reconvergences every partition applies
    /// alike are counted once.
    pub(super) fn absorb(&mut self, other: &Faults) {
        let (s, o) = (&mut self.state.stats, &other.state.stats);
        s.data_dropped += o.data_dropped;
        s.data_trimmed += o.data_trimmed;
        s.control_dropped += o.control_dropped;
        s.no_route += o.no_route;
        let mine = &mut self.state.no_route_at;
        if mine.len() < other.state.no_route_at.len() {
            mine.resize(other.state.no_route_at.len(), (0, u32::MAX));
        }
        for (entry, &theirs) in mine.iter_mut().zip(&other.state.no_route_at) {
            if theirs.1 != u32::MAX && (entry.1 == u32::MAX || theirs.0 > entry.0) {
                *entry = theirs;
            }
        }
        self.state.gave_up.extend_from_slice(&other.state.gave_up);
        self.state.gave_up.sort_by_key(|g| g.key);
    }

    /// Packet `q` is put on the wire of `port`: false when a fault discards it (the caller
    /// then drops it); trims it in place in `trim` loss mode, and `q`'s size with it.
    #[inline]
    pub(super) fn on_wire(&mut self, world: &mut World, port: u32, q: &mut Queued) -> bool {
        world.pkts.get_mut(q.handle).egress = port;
        let kept = self.judge(world, q.handle, true);
        q.size = world.pkts.get(q.handle).size;
        kept
    }

    /// Packet `h` is taken off its wire: false when the link went down meanwhile (the caller
    /// then drops it).
    #[inline]
    pub(super) fn off_wire(&mut self, world: &mut World, h: Handle) -> bool {
        self.judge(world, h, false)
    }

    /// Applies the fault verdict of the packet's link (`egress`) when it goes on (`on_wire`)
    /// or comes off the wire: trims it in place in `trim` loss mode; false when it is lost.
    #[inline]
    fn judge(&mut self, world: &mut World, h: Handle, on_wire: bool) -> bool {
        let fs = &mut self.state;
        let pkt = world.pkts.get_mut(h);
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
                pkt.size = self.header;
                pkt.flags |= flags::TRIMMED;
                fs.stats.data_trimmed += 1;
                true
            }
            Verdict::Drop => false,
        }
    }

    /// Counts a packet lost to a fault (`data`: a data packet).
    fn count_drop(&mut self, data: bool) {
        if data {
            self.state.stats.data_dropped += 1;
        } else {
            self.state.stats.control_dropped += 1;
        }
    }

    /// Flow `flow`'s packet found no route at switch node `node`, in the event of key `key`.
    fn note_no_route(&mut self, flow: u32, node: u32, key: u128) {
        let fs = &mut self.state;
        let f = flow as usize;
        fs.stats.no_route += 1;
        if fs.no_route_at.len() <= f {
            fs.no_route_at.resize(f + 1, (0, u32::MAX));
        }
        fs.no_route_at[f] = (key, node);
    }

    /// The plan's action `i` is due: a rate change (switch ports also rescale their buffer),
    /// a restored rate, or a link state change (which schedules a reconvergence when the plan
    /// has one; changes at the same instant share it).
    pub(super) fn on_action(&mut self, world: &mut World, i: u32) {
        let fs = &mut self.state;
        let a = fs.actions[i as usize];
        fs.stats.actions += 1;
        let p = a.port as usize;
        match a.kind {
            ActionKind::Rate {
                rate_bps,
                buffer_scale,
            } => {
                let current = world.ports[p].class;
                fs.original[p].get_or_insert(current);
                let mut class = *world.port_classes.get(current);
                class.rate_bps = rate_bps;
                if world.topo.links[p].from >= world.topo.hosts {
                    let speed = self.queue.rate_scale(world.topo.links[p].rate_bps);
                    let mut params = self.queue.port_params(buffer_scale * speed, self.header);
                    params.capacity = params.capacity.max(self.mtu);
                    class.params = class.params.rescaled(params);
                }
                world.set_port_class(a.port, class);
            }
            ActionKind::RestoreRate => {
                if let Some(class) = fs.original[p].take() {
                    world.ports[p].class = class;
                }
            }
            _ => {
                if fs.apply(&a) {
                    if let Some(delay) = fs.reconvergence {
                        let at = world.now + delay;
                        let snapshot = fs.alive();
                        match fs.snapshots.last_mut() {
                            Some((t, Some(s))) if *t == at => *s = snapshot,
                            _ => {
                                fs.snapshots.push((at, Some(snapshot)));
                                let id = (fs.snapshots.len() - 1) as u32;
                                world.set_timer(at, fault_timer(Owner::Reroute, id));
                            }
                        }
                    }
                }
            }
        }
    }

    /// Reconvergence `i` is due: the switches' forwarding tables are recomputed over the links
    /// that were alive when it was scheduled.
    pub(super) fn on_reroute(&mut self, world: &mut World, i: u32) {
        let fs = &mut self.state;
        let Some(alive) = fs.snapshots[i as usize].1.take() else {
            return;
        };
        world.topo.routes = forwarding::reconverge(&world.topo, &fs.base_routes, &alive);
        fs.stats.reconvergences += 1;
    }

    /// At a retransmission timeout of `flow` (index `f`), in the event of key `key`: true when
    /// it has heard no ACK or NACK for the plan's give-up delay, and is then recorded as given
    /// up, with whether any path was left.
    fn silent_too_long(&mut self, world: &World, f: u32, flow: &Flow, key: u128) -> bool {
        let now = world.now;
        let fs = &mut self.state;
        let fi = f as usize;
        let heard = flow.stats.acks + flow.stats.nacks;
        if fs.progress.len() <= fi {
            fs.progress.resize(fi + 1, (u64::MAX, 0));
        }
        let e = &mut fs.progress[fi];
        if e.0 != heard {
            let since = if e.0 == u64::MAX && heard == 0 {
                flow.start().min(now)
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
        let t = &world.topo;
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
        fs.gave_up.push(GaveUp {
            key,
            flow: f,
            id_src_dst: (flow.spec.id, flow.spec.src, flow.spec.dst),
            no_path: !path_exists,
            silent_for,
            timeouts: flow.stats.timeouts,
            at: now,
        });
        true
    }
}

impl Simulation {
    /// What faults did so far (`None` without a fault plan).
    pub fn fault_stats(&self) -> Option<FaultStats> {
        self.faults.as_ref().map(|f| f.stats())
    }

    /// One message per flow given up because no path to its destination was left, naming the
    /// flow.
    pub fn unreachable_flows(&self) -> Vec<String> {
        self.faults
            .as_ref()
            .map_or_else(Vec::new, |f| f.gave_up_messages(true, &self.world.topo))
    }

    /// One message per flow given up although a path existed (its load balancer kept choosing
    /// failed paths, e.g. ECMP pinned to a dead link).
    pub fn stalled_flows(&self) -> Vec<String> {
        self.faults
            .as_ref()
            .map_or_else(Vec::new, |f| f.gave_up_messages(false, &self.world.topo))
    }

    /// Whether a port (link id) is down now.
    pub fn link_down(&self, port: u32) -> bool {
        self.faults
            .as_ref()
            .is_some_and(|f| f.state.down[port as usize] > 0)
    }

    /// Tells the packet books and the observer, if any, of a lost packet.
    pub(super) fn observe_drop(&mut self, h: Handle, port: u32, cause: DropCause) {
        self.books.on_dropped(self.world.pkts.get(h).kind, cause);
        if self.observing {
            let pkt = self.world.pkts.get(h);
            let drop = PacketDrop {
                time: self.world.now,
                port,
                flow: pkt.flow,
                kind: pkt.kind,
                cause,
            };
            // Where it was lost: the node running (a fault's action runs at the control,
            // which every partition runs: then the port's own node).
            let mut node = self.world.order.current();
            if node == self.world.control_entity() {
                node = self.world.port_from[port as usize];
            }
            self.note(node, super::observer::Heard::Drop(drop));
        }
    }

    /// Counts and frees a packet lost to a fault.
    pub(super) fn fault_drop(&mut self, h: Handle) {
        let port = self.world.pkts.get(h).egress;
        self.observe_drop(h, port, DropCause::Fault);
        let data = self.world.lose(h);
        if let Some(fs) = self.faults.as_mut() {
            fs.count_drop(data);
        }
    }

    /// A switch has no route left towards the packet's destination: the packet is discarded.
    pub(super) fn no_route(&mut self, node: u32, h: Handle) {
        let pkt = self.world.pkts.get(h);
        let (flow, port) = (pkt.flow, pkt.ingress);
        self.observe_drop(h, port, DropCause::NoRoute);
        let key = self.current_key;
        if let Some(fs) = self.faults.as_mut() {
            fs.note_no_route(flow, node, key);
        }
        self.world.lose(h);
    }

    /// Called on a retransmission timeout of flow `f`: gives it up (true) when the fault part
    /// judges it silent for too long; it then leaves its host's ready list and frees its
    /// sender, and its receiver hears of it one crossing of the fabric later, as of a finish
    /// ([`Self::on_sender_finished`]).
    pub(super) fn fault_gave_up(&mut self, f: u32) -> bool {
        let fi = f as usize;
        let key = self.current_key;
        let Some(fs) = self.faults.as_mut() else {
            return false;
        };
        if !fs.silent_too_long(&self.world, f, &self.flows[fi], key) {
            return false;
        }
        self.endpoint_bytes_released += super::memory::sender_bytes(&self.flows[fi]);
        let flow = &mut self.flows[fi];
        flow.phase = Phase::GaveUp;
        let (src, dst) = (flow.spec.src, flow.spec.dst);
        if flow.in_ready_list {
            flow.in_ready_list = false;
            self.hosts[src as usize].ready.retain(|&x| x != f);
        }
        if let Some(s) = flow.sender.as_mut() {
            s.stop();
            s.release();
        }
        let notice = Timer {
            owner: Owner::Receiver,
            kind: 0,
            gen: 0,
            id: f,
        };
        let at = self.world.now + self.one_way_latency(src, dst);
        self.set_timer_at(dst, at, notice);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fault::{Action, LossMode};
    use crate::net::port::QueueConfig;
    use crate::net::Packet;

    fn setup() -> FaultSetup {
        FaultSetup {
            seed: 1,
            rto: 1_000_000,
            header: 64,
            mtu: 4150,
            queue: QueueConfig::default().bytes(4150),
        }
    }

    /// The fault part acts on the network only through the world it is handed: its actions
    /// are the world's timers; a link taken down (trim mode) trims the data put on its wire
    /// and drops the rest; back up, everything passes; packets on the wire when it went down
    /// are judged as they come off.
    #[test]
    fn a_downed_link_trims_data_and_drops_control_until_it_is_up() {
        let mut world = crate::routing::test_world_every_link(400_000_000_000);
        let port = world.topo.host_uplink[0];
        let action = |time, kind| Action { time, port, kind };
        let plan = FaultPlan {
            actions: vec![
                action(
                    10,
                    ActionKind::Down {
                        loss: LossMode::Trim,
                        data_only: false,
                    },
                ),
                action(20, ActionKind::Up),
            ],
            ..FaultPlan::default()
        };
        assert!(Faults::install(FaultPlan::default(), &mut world, setup()).is_none());
        let mut faults = Faults::install(plan, &mut world, setup()).expect("a plan");
        assert_eq!(world.events.len(), 2, "one timer per action");
        let put = |world: &mut World, faults: &mut Faults, kind: Kind| {
            let h = world.pkts.alloc(Packet::blank(kind, 4150));
            let mut q = Queued::new(h, 4150);
            (
                faults.on_wire(world, port, &mut q),
                q.size,
                world.pkts.get(h).flags,
            )
        };
        assert_eq!(put(&mut world, &mut faults, Kind::Data), (true, 4150, 0));
        let on_wire = world.pkts.alloc(Packet::blank(Kind::Ack, 64));
        world.pkts.get_mut(on_wire).egress = port;
        world.now = 10;
        faults.on_action(&mut world, 0);
        assert!(faults.state.down[port as usize] > 0);
        assert!(!faults.off_wire(&mut world, on_wire), "caught on the wire");
        let (kept, size, flags_set) = put(&mut world, &mut faults, Kind::Data);
        assert!(
            kept && size == 64 && flags_set & flags::TRIMMED != 0,
            "trimmed"
        );
        assert!(
            !put(&mut world, &mut faults, Kind::Ack).0,
            "control is dropped"
        );
        world.now = 20;
        faults.on_action(&mut world, 1);
        assert!(put(&mut world, &mut faults, Kind::Ack).0, "up again");
        let stats = faults.stats();
        assert_eq!((stats.actions, stats.data_trimmed), (2, 1));
    }
}
