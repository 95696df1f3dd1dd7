//! Hosts: the NIC scheduler (round robin over the host's connections, paced at each one's
//! congestion-control rate) and the glue between packets and the sans-IO transport endpoints.
use super::observer::Heard;
use super::prefetch::{prefetch_flow, Stage};
use super::{credit, Flow, Phase, Simulation, NO_PULL};
use crate::engine::prefetch::{prefetch, prefetch_all};
use crate::engine::{Handle, Time};
use crate::lb::{LbEvent, LbRecord};
use crate::net::lane::Queued;
use crate::net::packet::{flags, NO_ROUTE};
use crate::net::port::Port;
use crate::net::world::{Owner, Timer};
use crate::net::{Kind, Packet};
use crate::transport::{AckInfo, DataArrival, Receiver, Reply, Sizes, Transmission};
use crate::workload::FlowSpec;

/// Timer kinds of a connection.
pub(super) mod timer {
    /// The retransmission timer.
    pub const RTO: u8 = 0;
    /// Pacing: the next packet may go.
    pub const PACE: u8 = 1;
    /// The congestion control's or the load balancer's own timer.
    pub const CONTROLS: u8 = 2;
}

/// The packet a sender's transmission `tx` of flow `f` puts on the wire.
pub(super) fn outgoing(
    f: u32,
    spec: &FlowSpec,
    tx: &Transmission,
    now: Time,
    kind: Kind,
    size: u32,
    packet_flags: u8,
) -> Packet {
    Packet {
        flow: f,
        psn: tx.psn,
        src: spec.src,
        dst: spec.dst,
        sent_at: now,
        ev: tx.path.ev,
        route: tx.path.route,
        flags: packet_flags,
        ..Packet::blank(kind, size)
    }
}

pub(super) fn connection_timer(kind: u8, f: u32) -> Timer {
    Timer {
        owner: Owner::Connection,
        kind,
        gen: 0,
        id: f,
    }
}

impl Simulation {
    /// Puts flow `f` on its host's ready list if it can send, and gets the NIC going.
    pub(super) fn mark_ready(&mut self, f: u32) {
        let flow = &mut self.flows[f as usize];
        let Some(s) = flow.sender.as_mut() else {
            return;
        };
        if flow.in_ready_list || !s.can_send() {
            return;
        }
        flow.in_ready_list = true;
        let src = flow.spec.src;
        let ready = &mut self.hosts[src as usize].ready;
        ready.push_back(f);
        let now_front = ready.len() == 1;
        let port = self.world.topo.host_uplink[src as usize];
        // Behind other flows, the NIC's next pull is unchanged.
        if now_front {
            self.note_next_pull(port, src);
        }
        self.kick(port);
    }

    /// Records, for the prefetcher, the flow NIC `port` of `host` will pull from next: the
    /// front of the host's ready list. Only a hint: the list may change before the pull.
    #[inline]
    pub(super) fn note_next_pull(&mut self, port: u32, host: u32) {
        let front = self.hosts[host as usize].ready.front().copied();
        self.port_hosts[port as usize].next_pull = front.unwrap_or(NO_PULL);
    }

    /// The next data packet of `host`, from its ready flows in turn, with its size.
    pub(super) fn pull_data(&mut self, host: u32) -> Option<Queued> {
        let now = self.world.now;
        loop {
            let f = self.hosts[host as usize].ready.pop_front()?;
            let flow = &mut self.flows[f as usize];
            flow.in_ready_list = false;
            // A flow that finished while queued here (its last bytes acknowledged through
            // other copies) may have handed its sender to an idle reused connection.
            let Some(s) = flow.sender.as_mut() else {
                continue;
            };
            if !s.can_send() {
                continue;
            }
            if let Some(at) = s.paced_until(now) {
                self.pace(f, at);
                continue;
            }
            let data = self.make_data(f);
            let flow = &mut self.flows[f as usize];
            let s = flow.sender.as_mut().expect("sender");
            if s.can_send() {
                match s.paced_until(now) {
                    None => {
                        flow.in_ready_list = true;
                        self.hosts[host as usize].ready.push_back(f);
                    }
                    Some(at) => self.pace(f, at),
                }
            }
            return Some(data);
        }
    }

    /// Flow `f` may send again at `at` (its pacing rate).
    fn pace(&mut self, f: u32, at: Time) {
        let flow = &mut self.flows[f as usize];
        if !flow.pacing_pending {
            flow.pacing_pending = true;
            self.world.set_timer(at, connection_timer(timer::PACE, f));
        }
    }

    /// Flow `f`'s next data packet (new or retransmitted), with its size.
    fn make_data(&mut self, f: u32) -> Queued {
        let now = self.world.now;
        let flow = &mut self.flows[f as usize];
        let rto = flow.rto;
        let s = flow.sender.as_mut().expect("sender");
        let tx = s.transmit(now, rto);
        let mut fl = 0;
        if tx.retransmit {
            fl |= flags::RETRANSMIT | flags::ACK_REQUEST;
            flow.stats.retransmissions += 1;
        }
        if tx.last || tx.window_full {
            fl |= flags::ACK_REQUEST;
        }
        if let Some(at) = tx.arm_rto {
            self.world.set_timer(at, connection_timer(timer::RTO, f));
        }
        flow.stats.data_sent += 1;
        self.world.counters.data_sent += 1;
        self.books.on_sent(Kind::Data);
        self.world.counters.data_bytes_sent += tx.wire as u64;
        let mut pkt = outgoing(
            f,
            &flow.spec,
            &tx,
            now,
            Kind::Data,
            tx.wire,
            fl | flow.packet_flags,
        );
        credit::stamp(&mut pkt, s);
        let h = self.world.pkts.alloc(pkt);
        self.record_lb(f, tx.lb_event);
        if let Some(probe) = tx.probe {
            self.send_probe(f, probe, now);
        }
        Queued::new(h, tx.wire)
    }

    /// Sends a path probe the load balancer of flow `f` asked for on `path`: a 1-byte payload
    /// with the headers (a source route's included), leaving the NIC right after the data
    /// packet it goes with (in the host's priority lane; in the data lane at switches, so that
    /// it measures queueing).
    fn send_probe(&mut self, f: u32, path: crate::lb::PathChoice, now: Time) {
        let flow = &self.flows[f as usize];
        // The sender's own header size (a source route's included): the receiver, on
        // another host, is not the sender's to read.
        let header = flow
            .sender
            .as_deref()
            .map_or(self.transport.header, |s| s.header());
        let h = self.world.pkts.alloc(Packet {
            flow: f,
            src: flow.spec.src,
            dst: flow.spec.dst,
            sent_at: now,
            ev: path.ev,
            route: path.route,
            flags: flow.packet_flags,
            ..Packet::blank(Kind::Probe, header + 1)
        });
        self.books.on_sent(Kind::Probe);
        // Called while the NIC is taking the data packet (not yet on the wire): no kick, the
        // port takes the probe right after it.
        let port = self.world.topo.host_uplink[flow.spec.src as usize];
        self.queue_header(port, h);
    }

    /// A path probe reaches its receiver: answered at once with its one-way delay, on the
    /// reverse of its route if it has one (hashed like any reply otherwise).
    #[inline(never)]
    pub(super) fn on_probe(&mut self, h: Handle) {
        let now = self.world.now;
        let header = self.transport.header;
        let pkt = *self.world.pkts.get(h);
        let live = self
            .flows
            .get(pkt.flow as usize)
            .is_some_and(|flow| flow.receiver.is_some());
        if !live {
            self.world.pkts.free(h);
            return;
        }
        let reverse = if pkt.route == NO_ROUTE {
            NO_ROUTE
        } else {
            self.world.paths.reverse(pkt.route)
        };
        let p = self.world.pkts.get_mut(h);
        p.kind = Kind::ProbeAck;
        p.size = header;
        p.src = pkt.dst;
        p.dst = pkt.src;
        p.aux = now - pkt.sent_at;
        p.flags = flags::ONE_WAY | (pkt.flags & flags::SWITCH_EXEMPT);
        p.route = reverse;
        p.hop = 0;
        self.books.on_sent(Kind::ProbeAck);
        let port = self.world.topo.host_uplink[pkt.dst as usize];
        self.queue_header(port, h);
        self.kick(port);
    }

    /// A probe answer reaches its sender: its load balancer hears the path's one-way delay.
    #[inline(never)]
    pub(super) fn on_probe_ack(&mut self, h: Handle) {
        let now = self.world.now;
        let pkt = *self.world.pkts.get(h);
        self.world.pkts.free(h);
        if self.flows.get(pkt.flow as usize).is_none() {
            return;
        }
        let flow = &mut self.flows[pkt.flow as usize];
        if flow.phase != Phase::Running {
            return;
        }
        if let Some(s) = flow.sender.as_mut() {
            s.on_probe_answer(now, pkt.ev, pkt.aux);
        }
    }

    /// Keeps flow `flow`'s load-balancer event, if it has one.
    #[inline]
    pub(super) fn record_lb(&mut self, flow: u32, event: Option<LbEvent>) {
        // Most packets carry no event: only that test is paid inline.
        if let Some(event) = event {
            self.push_lb_record(flow, event);
        }
    }

    /// Keeps flow `flow`'s load-balancer event `event`, and tells the observer of it.
    fn push_lb_record(&mut self, flow: u32, event: LbEvent) {
        let record = LbRecord {
            time: self.world.now,
            flow,
            event,
        };
        self.lb_records.push(record);
        if let Some(shard) = self.shard.as_deref_mut() {
            shard.lb_keys.push(self.current_key);
        }
        if self.observing {
            let node = self.flows[flow as usize].spec.src;
            self.note(node, Heard::Lb(record));
        }
    }

    /// Turns data packet `h` into the receiver's answer and sends it back.
    fn send_reply(&mut self, h: Handle, reply: Reply) {
        let header = self.transport.header;
        let now = self.world.now;
        let paths = &self.world.paths;
        let pkt = self.world.pkts.get_mut(h);
        let f = pkt.flow as usize;
        let flow = &self.flows[f];
        pkt.kind = if reply.nack { Kind::Nack } else { Kind::Ack };
        pkt.size = header;
        pkt.src = flow.spec.dst;
        pkt.dst = flow.spec.src;
        pkt.cum_ack = reply.cum_ack;
        pkt.sack_base = reply.sack_base;
        pkt.aux = reply.sack_bits;
        pkt.scheme = 0;
        pkt.flags &= flags::ECN | flags::SWITCH_EXEMPT;
        if reply.cnp {
            pkt.flags |= flags::CNP;
        }
        if flow.receiver.as_deref().is_some_and(|r| r.echoes_delay()) {
            // A receiver that echoes delays: the one-way delay of the data packet (its send
            // time is still in it).
            pkt.aux = now - pkt.sent_at;
            pkt.flags |= flags::ONE_WAY;
        }
        if pkt.route != NO_ROUTE {
            // Replies return on the reverse of the data packet's route.
            pkt.route = paths.reverse(pkt.route);
        }
        pkt.hop = 0;
        if reply.nack {
            self.world.counters.nacks_sent += 1;
            self.books.on_sent(Kind::Nack);
        } else {
            self.world.counters.acks_sent += 1;
            self.books.on_sent(Kind::Ack);
        }
        let port = self.world.topo.host_uplink[flow.spec.dst as usize];
        self.queue_header(port, h);
        self.kick(port);
    }

    /// Prefetch stage `stage` of packet `h` arriving over `link`, if it reaches its host (see
    /// [`super::prefetch`]): its flow's record and, for data, the NIC port its ACK leaves by;
    /// then the receiver (data: with the header-lane slot of the ACK and the host whose NIC
    /// sends it) or the sender (the rest); last, the word of arrival bits a data packet sets,
    /// or the PSN record an ACK acknowledges and its sender's controls.
    #[inline(always)]
    pub(super) fn prefetch_host_arrival(&self, stage: Stage, h: u32, link: u32) {
        let Some(flow) = self.host_arrival_flow(h, link) else {
            return;
        };
        let pkt = self.world.pkts.get(h);
        match stage {
            // The arrival's own stages never ask this one (`prefetch_arrival`).
            Stage::Far => {}
            Stage::Mid => {
                prefetch_flow(flow);
                if let Some(port) = self.reply_port(h) {
                    prefetch_all(port);
                }
            }
            Stage::Near => {
                if pkt.kind == Kind::Data {
                    if let Some(receiver) = flow.receiver.as_deref() {
                        prefetch_all(receiver);
                    }
                    if let Some(slot) = self.reply_port(h).and_then(|p| p.headers.next_slot()) {
                        prefetch(slot);
                    }
                    if let Some(host) = self.hosts.get(pkt.dst as usize) {
                        prefetch(host);
                    }
                } else if let Some(sender) = flow.sender.as_deref() {
                    prefetch_all(sender);
                }
            }
            Stage::Last => match pkt.kind {
                Kind::Data => {
                    if let Some(word) = flow.receiver.as_deref().and_then(|r| r.word_of(pkt.psn)) {
                        prefetch(word);
                    }
                }
                Kind::Ack => {
                    if let Some(sender) = flow.sender.as_deref() {
                        sender.prefetch_controls();
                        if let Some(record) = sender.record_ref(pkt.psn) {
                            prefetch(record);
                        }
                    }
                }
                _ => {}
            },
        }
    }

    /// The flow of packet `h` if it is arriving at a host over `link`.
    #[inline]
    fn host_arrival_flow(&self, h: u32, link: u32) -> Option<&Flow> {
        let w = &self.world;
        let node = *w.port_to.get(link as usize)?;
        if node >= w.topo.hosts {
            return None;
        }
        self.flows.get(w.pkts.get(h).flow as usize)
    }

    /// The NIC port of the host a data packet `h` reaches, which its ACK or NACK leaves by.
    #[inline]
    fn reply_port(&self, h: u32) -> Option<&Port> {
        let w = &self.world;
        let pkt = w.pkts.get(h);
        if pkt.kind != Kind::Data {
            return None;
        }
        let &port = w.topo.host_uplink.get(pkt.dst as usize)?;
        w.ports.get(port as usize)
    }

    /// A data packet reaches its receiver.
    #[inline(never)]
    pub(super) fn on_data(&mut self, h: Handle) {
        let now = self.world.now;
        let header = self.transport.header;
        let pkt = *self.world.pkts.get(h);
        let flow: &mut Flow = &mut self.flows[pkt.flow as usize];
        let Some(r) = flow.receiver.as_mut() else {
            // The receiver heard that the connection finished: a late copy.
            self.world.counters.data_duplicates += 1;
            self.world.pkts.free(h);
            return;
        };
        let trimmed = pkt.has(flags::TRIMMED);
        // A retransmitted RTS travels as a header-sized data packet: no payload.
        let payload = if trimmed {
            0
        } else {
            pkt.size - header - r.extra_header()
        };
        let out_of_order = pkt.psn > r.expected();
        let out = r.on_data(
            now,
            &DataArrival {
                psn: pkt.psn,
                wire: pkt.size,
                payload,
                trimmed,
                ecn: pkt.has(flags::ECN),
                ack_request: pkt.has(flags::ACK_REQUEST),
            },
        );
        // Measured only where reported: a run without `[metrics] reorder` pays one test.
        if self.cfg.metrics.reorder && !trimmed {
            let (packets, bytes) = reorder_occupancy(r, &flow.sizes);
            flow.stats.reorder.record(out_of_order, packets, bytes);
            self.fabric.reorder.record(out_of_order, packets, bytes);
        }
        if trimmed {
            self.world.counters.trimmed_arrivals += 1;
        } else if out.delivered {
            flow.delivered += payload as u64;
            self.world.counters.data_delivered += 1;
            flow.stats.max_reorder = flow.stats.max_reorder.max(r.out_of_order());
        } else {
            self.world.counters.data_duplicates += 1;
        }
        if self.credit.is_some() {
            self.credit_arrival(h);
        }
        match out.reply {
            Some(reply) => self.send_reply(h, reply),
            None => self.world.pkts.free(h),
        }
    }

    /// An RTS reaches its receiver: acknowledged at once, never ECN-marked.
    #[inline(never)]
    pub(super) fn on_rts(&mut self, h: Handle) {
        let pkt = *self.world.pkts.get(h);
        let flow = &mut self.flows[pkt.flow as usize];
        let Some(r) = flow.receiver.as_mut() else {
            self.world.pkts.free(h);
            return;
        };
        let reply = r.on_rts(pkt.psn);
        if self.credit.is_some() {
            self.credit_arrival(h);
        }
        self.world.pkts.get_mut(h).flags = 0;
        self.send_reply(h, reply);
    }

    /// Packets addressed to a host that its transport does not handle (scheme notifications,
    /// probes without a prober): they end here.
    #[inline(never)]
    pub(super) fn host_consumes(&mut self, h: Handle) {
        self.world.counters.scheme_consumed += 1;
        self.world.pkts.free(h);
    }

    /// An ACK or NACK reaches its sender.
    #[inline(never)]
    pub(super) fn on_control(&mut self, h: Handle) {
        let now = self.world.now;
        let pkt = *self.world.pkts.get(h);
        self.world.pkts.free(h);
        self.world.counters.control_arrived += 1;
        let f = pkt.flow;
        let flow = &mut self.flows[f as usize];
        if flow.phase != Phase::Running {
            return;
        }
        let s = flow.sender.as_mut().expect("running flows have a sender");
        let out = s.on_ack(
            now,
            &AckInfo {
                nack: pkt.kind == Kind::Nack,
                psn: pkt.psn,
                sent_at: pkt.sent_at,
                ev: pkt.ev,
                ecn: pkt.has(flags::ECN),
                cnp: pkt.has(flags::CNP),
                cum_ack: pkt.cum_ack,
                sack_base: pkt.sack_base,
                sack_bits: if pkt.has(flags::ONE_WAY) {
                    0
                } else {
                    pkt.sack_bits()
                },
                one_way: pkt.has(flags::ONE_WAY).then_some(pkt.aux),
            },
            &mut flow.stats,
        );
        if let Some(c) = self.collector.as_deref_mut() {
            c.on_cwnd(f, now, s.cc().cwnd());
            if let Some(shard) = self.shard.as_deref_mut() {
                shard
                    .cwnd_keys
                    .resize(c.cwnd_samples().len(), self.current_key);
            }
        }
        self.record_lb(f, out.lb_event);
        if out.finished {
            self.finish_flow(f);
        } else {
            self.mark_ready(f);
            self.arm_control_timer(f);
        }
    }
}

/// What receiver `r` holds above its cumulative point: packets, and their payload bytes (all
/// full packets but the flow's last, which is shorter).
#[inline]
fn reorder_occupancy(r: &Receiver, sizes: &Sizes) -> (u32, u64) {
    let packets = r.out_of_order();
    if packets == 0 {
        return (0, 0);
    }
    let mut bytes = packets as u64 * sizes.mss as u64;
    let last = sizes.packets - 1;
    if last > r.expected() && r.has(last) {
        bytes -= (sizes.mss - sizes.payload(last)) as u64;
    }
    (packets, bytes)
}
