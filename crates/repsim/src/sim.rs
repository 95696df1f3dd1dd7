//! The simulation: topology, hosts, flows and the event loop that moves packets between them.
//!
//! Data flows queue -> wire -> switch (routing decision at ingress) -> queue -> ... -> host.
//! Pending events are kept few: one service-completion per busy port (queued packets wait in
//! the port's FIFOs, not in the event list), one arrival per packet on a wire, and one lazily
//! re-armed retransmission timer per connection.
use std::collections::VecDeque;

use crate::cc::{self, CcParams};
use crate::engine::rng::Stream;
use crate::engine::time::{serialization, SEC};
use crate::engine::{Arena, EventQueue, Handle, Rng, Time};
use crate::lb::{self, LbContext, LbEvent, LbOptions};
use crate::metrics::collect::{CollectConfig, Collector};
use crate::net::hash::{ecmp_pick, flow_key};
use crate::net::packet::{flags, Kind, Packet};
use crate::net::port::{Admission, Port, PortStats, QueueParams};
use crate::net::Topology;
use crate::transport::{FlowStats, PsnState, Receiver, Sender, Sizes};
use crate::workload::FlowSpec;

#[path = "fault/hooks.rs"]
mod fault_hooks;

/// Switch egress queue settings, in bytes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct QueueConfig {
    /// Data buffer per egress port.
    pub capacity: u64,
    /// ECN Kmin.
    pub ecn_min: u64,
    /// ECN Kmax.
    pub ecn_max: u64,
    /// Trim (true) or drop (false) packets that overflow.
    pub trimming: bool,
}

impl QueueConfig {
    /// The parameters of one switch port whose buffer and ECN thresholds are `scale` times the
    /// configured ones (degraded or rate-changed links).
    pub fn port_params(&self, scale: f64, header_size: u32) -> QueueParams {
        let scaled = |b: u64| (b as f64 * scale).round() as u64;
        QueueParams {
            capacity: scaled(self.capacity),
            ecn_min: scaled(self.ecn_min),
            ecn_max: scaled(self.ecn_max),
            trimming: self.trimming,
            header_size,
        }
    }
}

/// Transport settings shared by every connection.
#[derive(Clone, Debug, PartialEq)]
pub struct TransportConfig {
    /// Full data packet on the wire, header included.
    pub mtu: u32,
    /// Header size (ACK, NACK and trimmed packets).
    pub header: u32,
    /// Congestion control algorithm (a name in [`cc::REGISTRY`]).
    pub cc: String,
    /// Initial window in bytes (`None`: the maximum window).
    pub initial_cwnd: Option<u64>,
    /// Maximum window as a multiple of the path's BDP.
    pub max_cwnd_bdp: f64,
    /// Receiver ACKs once this many bytes arrived (<= MTU: one ACK per packet).
    pub ack_every: u64,
    /// Retransmission timeout (`None`: max base RTT + time to drain 4 full queues).
    pub rto: Option<Time>,
    /// MPRDMA fast increase from the start.
    pub fast_increase: bool,
    /// Fast increase switches on for every sender at the first switch-queue arrival after this
    /// time (the reference's `-failed 42` scenario does it at 650 us).
    pub fast_increase_after: Option<Time>,
    /// Send an RTS (request to send) after a timeout whose retransmission the window has no
    /// room for, as the reference does.
    pub rts: bool,
}

impl Default for TransportConfig {
    fn default() -> Self {
        TransportConfig {
            mtu: 4150,
            header: 64,
            cc: "mprdma".into(),
            initial_cwnd: None,
            max_cwnd_bdp: 1.5,
            ack_every: 4150,
            rto: None,
            fast_increase: false,
            fast_increase_after: None,
            rts: true,
        }
    }
}

/// Everything a run needs besides the topology and the flows.
#[derive(Clone, Debug, PartialEq)]
pub struct SimConfig {
    /// Master seed of every random stream.
    pub seed: u64,
    /// Nothing happens at or after this time.
    pub end: Time,
    /// Switch queues.
    pub queue: QueueConfig,
    /// Transport.
    pub transport: TransportConfig,
    /// Load balancer (a name in [`lb::REGISTRY`]).
    pub lb: String,
    /// Load-balancer parameters.
    pub lb_options: LbOptions,
    /// Switch routing scheme (a name in [`crate::routing::names`]; `ecmp` by default).
    pub switch_routing: String,
}

/// Why a simulation cannot be set up.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    /// The load balancer name is unknown.
    #[error("unknown load balancer '{0}'; known: {1}")]
    UnknownLb(String, String),
    /// The congestion control name is unknown.
    #[error("unknown congestion control '{0}'; known: {1}")]
    UnknownCc(String, String),
    /// A flow is malformed.
    #[error("flow {id}: {why}")]
    BadFlow {
        /// The flow's id.
        id: u64,
        /// What is wrong.
        why: String,
    },
    /// Something else is inconsistent.
    #[error("{0}")]
    Invalid(String),
}

#[derive(Clone, Copy, Debug)]
enum Event {
    /// A packet reaches the node at the end of its wire.
    Arrive(Handle),
    /// A port finished serializing and may start the next packet.
    PortWake(u32),
    /// A connection's retransmission timer.
    Timer(u32),
    /// A connection starts.
    FlowStart(u32),
    /// A packet leaves a switch's forwarding pipeline for its egress queue.
    Egress(Handle),
    /// A fault action (index into the fault plan) takes effect.
    Fault(u32),
    /// Switches reconverge their routes (index of a link-state snapshot).
    Reroute(u32),
}

/// Lifecycle of a connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Start time not reached.
    Waiting,
    /// Sending.
    Running,
    /// Every byte acknowledged.
    Done,
    /// Given up: no ACK or NACK for too long while faults are configured (see
    /// [`Simulation::unreachable_flows`] and [`Simulation::stalled_flows`]).
    GaveUp,
}

/// One connection.
pub struct Flow {
    /// What the workload asked for.
    pub spec: FlowSpec,
    /// Lifecycle phase.
    pub phase: Phase,
    /// Time the last byte was acknowledged (set only when the flow is [`Phase::Done`]).
    pub finish: Option<Time>,
    /// Unloaded round-trip time of its path.
    pub base_rtt: Time,
    /// Counters.
    pub stats: FlowStats,
    /// Payload bytes the receiver delivered (each once).
    pub delivered: u64,
    key: u32,
    sizes: Sizes,
    sender: Option<Sender>,
    receiver: Option<Receiver>,
}

impl Flow {
    /// Flow completion time, once every byte is acknowledged.
    pub fn fct(&self) -> Option<Time> {
        self.finish.map(|t| t - self.spec.start)
    }
}

/// Global packet accounting, for conservation checks and reports.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    /// Data packets put on a host uplink (first transmissions and retransmissions).
    pub data_sent: u64,
    /// Data packets that reached their receiver intact and were new.
    pub data_delivered: u64,
    /// Data packets that reached their receiver intact but were already there.
    pub data_duplicates: u64,
    /// Trimmed data packets that reached their receiver (answered by a NACK or ACK).
    pub trimmed_arrivals: u64,
    /// Data packets dropped anywhere.
    pub data_dropped: u64,
    /// Data packets trimmed at switch queues.
    pub trims: u64,
    /// ACKs sent by receivers.
    pub acks_sent: u64,
    /// NACKs sent by receivers.
    pub nacks_sent: u64,
    /// ACKs and NACKs that reached their sender.
    pub control_arrived: u64,
    /// ACKs, NACKs and RTS packets lost (failed elements, no route).
    pub control_dropped: u64,
    /// RTS packets sent.
    pub rts_sent: u64,
    /// Events processed.
    pub events: u64,
}

/// A recorded load-balancer action.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LbRecord {
    /// When.
    pub time: Time,
    /// Which connection (index).
    pub flow: u32,
    /// What happened.
    pub event: LbEvent,
}

struct HostState {
    ready: VecDeque<u32>,
}

const NO_HOST: u32 = u32::MAX;

/// A complete simulation: build it, run it, read its flows and counters.
pub struct Simulation {
    cfg: SimConfig,
    topo: Topology,
    now: Time,
    events: EventQueue<Event>,
    pkts: Arena<Packet>,
    ports: Vec<Port>,
    port_host: Vec<u32>,
    salts: Vec<u32>,
    hosts: Vec<HostState>,
    flows: Vec<Flow>,
    rto: Time,
    max_base_rtt: Time,
    counters: Counters,
    lb_records: Vec<LbRecord>,
    completions: Vec<u32>,
    collector: Option<Box<Collector>>,
    routing: Option<Box<dyn crate::routing::SwitchRouting>>,
    faults: Option<Box<crate::fault::FaultState>>,
    ecmp_every: u32,
    /// Fast increase switches on at the first switch-queue arrival after this (MAX: never).
    fast_increase_from: Time,
    /// Fast increase was switched on by `fast_increase_from`.
    fast_increase_on: bool,
}

impl Simulation {
    /// Builds a simulation of `flows` on `topo`.
    pub fn new(cfg: SimConfig, topo: Topology, flows: Vec<FlowSpec>) -> Result<Self, SetupError> {
        if !lb::names().contains(&cfg.lb.as_str()) {
            return Err(SetupError::UnknownLb(
                cfg.lb.clone(),
                lb::names().join(", "),
            ));
        }
        if !cc::names().contains(&cfg.transport.cc.as_str()) {
            return Err(SetupError::UnknownCc(
                cfg.transport.cc.clone(),
                cc::names().join(", "),
            ));
        }
        let t = &cfg.transport;
        if t.header == 0 || t.mtu <= t.header {
            return Err(SetupError::Invalid(format!(
                "mtu ({}) must exceed the header size ({})",
                t.mtu, t.header
            )));
        }
        if cfg.lb_options.evs_size == 0 || cfg.lb_options.evs_size > 65536 {
            return Err(SetupError::Invalid(format!(
                "evs_size must be in 1..=65536, not {}",
                cfg.lb_options.evs_size
            )));
        }
        let q = &cfg.queue;
        if q.capacity < t.mtu as u64 {
            return Err(SetupError::Invalid(format!(
                "queue size ({} B) must hold at least one packet ({} B)",
                q.capacity, t.mtu
            )));
        }
        let mut ports = Vec::with_capacity(topo.links.len());
        let mut port_host = vec![NO_HOST; topo.links.len()];
        for (i, link) in topo.links.iter().enumerate() {
            let params = if link.from < topo.hosts {
                port_host[i] = link.from;
                // Host uplinks never drop or mark: the NIC only sends what the window allows.
                QueueParams {
                    capacity: u64::MAX / 2,
                    ecn_min: u64::MAX / 2,
                    ecn_max: u64::MAX / 2,
                    trimming: false,
                    header_size: t.header,
                }
            } else {
                q.port_params(link.buffer_scale, t.header)
            };
            let rng = Rng::derive(cfg.seed, Stream::Port, i as u64);
            ports.push(Port::new(link.to, link.rate_bps, link.latency, params, rng));
        }
        let salts = (0..topo.switches.len() as u64)
            .map(|s| Rng::derive(cfg.seed, Stream::SwitchSalt, s).next_u32())
            .collect();
        let hosts = (0..topo.hosts)
            .map(|_| HostState {
                ready: VecDeque::new(),
            })
            .collect();
        let mut sim = Simulation {
            topo,
            now: 0,
            events: EventQueue::new(),
            pkts: Arena::new(),
            ports,
            port_host,
            salts,
            hosts,
            flows: Vec::new(),
            rto: 0,
            max_base_rtt: 0,
            counters: Counters::default(),
            lb_records: Vec::new(),
            completions: Vec::new(),
            collector: None,
            routing: None,
            faults: None,
            ecmp_every: 0,
            fast_increase_from: cfg.transport.fast_increase_after.unwrap_or(Time::MAX),
            fast_increase_on: false,
            cfg,
        };
        sim.routing = crate::routing::build(
            &sim.cfg.switch_routing,
            &crate::routing::RoutingContext { salts: &sim.salts },
        )
        .map_err(SetupError::Invalid)?;
        sim.max_base_rtt = sim.network_max_rtt();
        let host_rate = sim.topo.links[sim.topo.host_uplink[0] as usize].rate_bps;
        sim.rto = sim.cfg.transport.rto.unwrap_or_else(|| {
            sim.max_base_rtt
                + (4 * sim.cfg.queue.capacity as u128 * 8 * SEC as u128 / host_rate as u128) as Time
        });
        for spec in flows {
            sim.add_flow(spec)?;
        }
        Ok(sim)
    }

    fn network_max_rtt(&self) -> Time {
        let per_tor = (self.topo.hosts / self.topo.edge_count()).max(1);
        (1..self.topo.hosts)
            .filter(|h| h % per_tor == 0 || *h == 1)
            .map(|h| self.base_rtt(0, h))
            .max()
            .unwrap_or(0)
    }

    /// Unloaded RTT between two hosts: a full data packet out and a header back, on the path
    /// every switch's first candidate gives (all equal-cost paths have the same length).
    pub fn base_rtt(&self, src: u32, dst: u32) -> Time {
        let t = &self.cfg.transport;
        self.topo
            .first_path(src, dst)
            .iter()
            .map(|&l| {
                let link = &self.topo.links[l as usize];
                2 * link.latency
                    + serialization(t.mtu, link.rate_bps)
                    + serialization(t.header, link.rate_bps)
            })
            .sum()
    }

    /// Adds a connection; it starts at `spec.start` (or now, if that is in the past).
    pub fn add_flow(&mut self, spec: FlowSpec) -> Result<u32, SetupError> {
        let hosts = self.topo.hosts;
        let bad = |why: String| SetupError::BadFlow { id: spec.id, why };
        if spec.src >= hosts || spec.dst >= hosts {
            return Err(bad(format!(
                "host {} does not exist (hosts are 0..{hosts})",
                spec.src.max(spec.dst)
            )));
        }
        if spec.src == spec.dst {
            return Err(bad(format!(
                "source and destination are both host {}",
                spec.src
            )));
        }
        if spec.bytes == 0 {
            return Err(bad("size must be positive".into()));
        }
        let t = &self.cfg.transport;
        let mss = t.mtu - t.header;
        let packets = spec.bytes.div_ceil(mss as u64);
        if packets > u32::MAX as u64 / 2 {
            return Err(bad(format!(
                "{} bytes is too large for one connection",
                spec.bytes
            )));
        }
        let index = self.flows.len() as u32;
        let start = spec.start.max(self.now);
        self.flows.push(Flow {
            base_rtt: self.base_rtt(spec.src, spec.dst),
            key: flow_key(spec.src, spec.dst),
            sizes: Sizes {
                bytes: spec.bytes,
                packets: packets as u32,
                mss,
                header: t.header,
            },
            spec,
            phase: Phase::Waiting,
            finish: None,
            stats: FlowStats::default(),
            delivered: 0,
            sender: None,
            receiver: None,
        });
        self.events.push(start, Event::FlowStart(index));
        Ok(index)
    }

    /// Current simulated time.
    pub fn now(&self) -> Time {
        self.now
    }

    /// Whether the timed fast-increase switch (`fast_increase_after`) has turned on.
    pub fn fast_increase_switched_on(&self) -> bool {
        self.fast_increase_on
    }

    /// The retransmission timeout every connection uses.
    pub fn rto(&self) -> Time {
        self.rto
    }

    /// The largest unloaded RTT between two hosts.
    pub fn max_base_rtt(&self) -> Time {
        self.max_base_rtt
    }

    /// The topology.
    pub fn topology(&self) -> &Topology {
        &self.topo
    }

    /// The configuration.
    pub fn config(&self) -> &SimConfig {
        &self.cfg
    }

    /// All connections, in the order they were added.
    pub fn flows(&self) -> &[Flow] {
        &self.flows
    }

    /// Global counters.
    pub fn counters(&self) -> Counters {
        self.counters
    }

    /// Counters of every port (index = link id).
    pub fn port_stats(&self) -> Vec<PortStats> {
        self.ports.iter().map(|p| p.stats).collect()
    }

    /// Starts collecting time series (see [`crate::metrics::collect`]); replaces any collector.
    pub fn enable_collection(&mut self, cfg: CollectConfig) -> Result<(), SetupError> {
        if cfg.bucket == 0 {
            return Err(SetupError::Invalid(
                "collection bucket must be positive".into(),
            ));
        }
        let ports = cfg.resolve(&self.topo).map_err(SetupError::Invalid)?;
        let kmin = ports
            .iter()
            .map(|&p| self.ports[p as usize].params.ecn_min)
            .collect();
        self.collector = Some(Box::new(Collector::new(cfg, self.ports.len(), ports, kmin)));
        Ok(())
    }

    /// The collector, if collection is enabled.
    pub fn collector(&self) -> Option<&Collector> {
        self.collector.as_deref()
    }

    /// Load-balancer actions recorded so far.
    pub fn lb_records(&self) -> &[LbRecord] {
        &self.lb_records
    }

    /// Data packets currently inside the network: waiting in a port's FIFOs, on a wire, or in a
    /// switch's forwarding pipeline. Counted by walking the queues and pending events, so it is
    /// an independent check of the counters (O(network size)).
    pub fn data_in_network(&self) -> u64 {
        let is_data = |h: &Handle| self.pkts.get(*h).kind == Kind::Data;
        let mut n = 0;
        for p in &self.ports {
            n += p.data.iter().filter(|h| is_data(h)).count() as u64;
            n += p.headers.iter().filter(|h| is_data(h)).count() as u64;
        }
        for ev in self.events.pending() {
            if let Event::Arrive(h) | Event::Egress(h) = ev {
                if is_data(&h) {
                    n += 1;
                }
            }
        }
        n
    }

    /// Packets of any kind alive in the arena.
    pub fn live_packets(&self) -> usize {
        self.pkts.live()
    }

    /// Connections that finished since the last call (indices into [`Self::flows`]).
    pub fn take_completions(&mut self) -> Vec<u32> {
        std::mem::take(&mut self.completions)
    }

    /// Number of pending events.
    pub fn pending_events(&self) -> usize {
        self.events.len()
    }

    /// Largest number of packets alive at once.
    pub fn peak_packets(&self) -> usize {
        self.pkts.peak()
    }

    /// True when every connection has finished.
    pub fn all_done(&self) -> bool {
        self.flows.iter().all(|f| f.phase == Phase::Done)
    }

    /// Processes events up to and including time `until` (never past the configured end).
    /// Returns false when nothing is left to do before the end.
    pub fn run_until(&mut self, until: Time) -> bool {
        let limit = until.min(self.cfg.end.saturating_sub(1));
        while let Some(t) = self.events.peek_time() {
            if t > limit {
                return t < self.cfg.end;
            }
            let (t, ev) = self.events.pop().expect("peeked");
            self.now = t;
            self.counters.events += 1;
            match ev {
                Event::Arrive(h) => self.on_arrive(h),
                Event::PortWake(p) => {
                    self.ports[p as usize].wakeup_pending = false;
                    self.start_next(p);
                }
                Event::Timer(f) => self.on_timer(f),
                Event::FlowStart(f) => self.on_flow_start(f),
                Event::Egress(h) => {
                    let port = self.pkts.get(h).egress;
                    self.enqueue_switch(port, h);
                }
                Event::Fault(i) => self.on_fault(i),
                Event::Reroute(i) => self.on_reroute(i),
            }
        }
        false
    }

    /// Runs until no event is left before the end time.
    pub fn run_until_idle(&mut self) {
        self.run_until(Time::MAX);
    }

    // ----- ports -------------------------------------------------------------------------

    fn kick(&mut self, port: u32) {
        let p = &mut self.ports[port as usize];
        if p.wakeup_pending {
            return;
        }
        if p.busy(self.now) {
            p.wakeup_pending = true;
            self.events.push(p.busy_until, Event::PortWake(port));
        } else {
            self.start_next(port);
        }
    }

    fn start_next(&mut self, port: u32) {
        let host = self.port_host[port as usize];
        let marks_before = self.ports[port as usize].stats.ecn_marks;
        let next = if host == NO_HOST {
            self.ports[port as usize].dequeue(&mut self.pkts)
        } else {
            match self.ports[port as usize].headers.pop_front() {
                Some(h) => Some(h),
                None => self.pull_data(host),
            }
        };
        let Some(h) = next else { return };
        let deliver = self.faults.is_none() || self.fault_on_wire(port, h);
        let now = self.now;
        let p = &mut self.ports[port as usize];
        let pkt = self.pkts.get_mut(h);
        let ser = serialization(pkt.size, p.rate_bps);
        p.busy_until = now + ser;
        p.stats.tx_packets += 1;
        p.stats.tx_bytes += pkt.size as u64;
        pkt.next_node = p.to_node;
        if let Some(c) = self.collector.as_deref_mut() {
            c.on_tx(port, now, pkt.size, p.stats.ecn_marks != marks_before);
        }
        if deliver {
            self.events.push(now + ser + p.latency, Event::Arrive(h));
        }
        let more =
            !p.is_empty() || (host != NO_HOST && !self.hosts[host as usize].ready.is_empty());
        if more {
            p.wakeup_pending = true;
            self.events.push(p.busy_until, Event::PortWake(port));
        }
        if !deliver {
            self.fault_drop(h);
        }
    }

    fn enqueue_switch(&mut self, port: u32, h: Handle) {
        if self.now > self.fast_increase_from {
            self.switch_on_fast_increase();
        }
        if let Some(c) = self.collector.as_deref_mut() {
            if !self.pkts.get(h).is_header() {
                c.on_data_arrival(
                    port,
                    self.now,
                    self.ports[port as usize].occupancy(self.now),
                );
            }
        }
        match self.ports[port as usize].enqueue(h, &mut self.pkts, self.now) {
            Admission::Queued => {}
            Admission::Trimmed(_) => {
                self.counters.trims += 1;
                if let Some(c) = self.collector.as_deref_mut() {
                    c.on_trim(port, self.now);
                }
            }
            Admission::Dropped(v) => {
                self.counters.data_dropped += 1;
                self.pkts.free(v);
                if let Some(c) = self.collector.as_deref_mut() {
                    c.on_drop(port, self.now);
                }
            }
        }
        self.kick(port);
    }

    /// The timed fast-increase switch: every running sender and every later one gets MPRDMA
    /// fast increase (the reference flips one global flag at the first switch-queue arrival after
    /// 650 us in its `-failed 42` scenario).
    #[cold]
    fn switch_on_fast_increase(&mut self) {
        self.fast_increase_from = Time::MAX;
        self.fast_increase_on = true;
        for flow in &mut self.flows {
            if let Some(s) = flow.sender.as_mut() {
                s.cc.set_fast_increase(true);
            }
        }
    }

    fn on_arrive(&mut self, h: Handle) {
        if self.faults.is_some() && !self.fault_off_wire(h) {
            return;
        }
        let pkt = self.pkts.get(h);
        let node = pkt.next_node;
        if node < self.topo.hosts {
            match pkt.kind {
                Kind::Data => self.on_data(h),
                Kind::Ack | Kind::Nack => self.on_control(h),
                Kind::Rts => self.on_rts(h),
            }
            return;
        }
        let s = node - self.topo.hosts;
        let cands = self.topo.candidates(s, pkt.dst);
        let port = match cands.len() {
            1 => cands[0],
            0 => return self.no_route(node, h),
            _ if self.routing.is_some() => self.route_by_scheme(s, h),
            n => {
                cands[ecmp_pick(
                    pkt.flow_key,
                    pkt.ev as u32,
                    self.salts[s as usize],
                    n as u32,
                ) as usize]
            }
        };
        let latency = self.topo.switches[s as usize].latency;
        if latency > 0 {
            self.pkts.get_mut(h).egress = port;
            self.events.push(self.now + latency, Event::Egress(h));
        } else {
            self.enqueue_switch(port, h);
        }
    }

    /// Port chosen by a switch-side routing scheme (kept out of line: ECMP is the hot path).
    #[inline(never)]
    fn route_by_scheme(&mut self, s: u32, h: Handle) -> u32 {
        let pkt = self.pkts.get(h);
        let cands = self.topo.candidates(s, pkt.dst);
        let view = crate::routing::PortView {
            ports: &self.ports,
            now: self.now,
            header_size: self.cfg.transport.header,
        };
        let routing = self.routing.as_deref_mut().expect("checked by the caller");
        cands[routing.select(s, pkt, cands, &view)]
    }

    // ----- hosts: sending ----------------------------------------------------------------

    fn mark_ready(&mut self, f: u32) {
        let flow = &mut self.flows[f as usize];
        let Some(s) = flow.sender.as_mut() else {
            return;
        };
        if s.in_ready_list || !s.can_send() {
            return;
        }
        s.in_ready_list = true;
        let src = flow.spec.src;
        self.hosts[src as usize].ready.push_back(f);
        let port = self.topo.host_uplink[src as usize];
        self.kick(port);
    }

    fn pull_data(&mut self, host: u32) -> Option<Handle> {
        loop {
            let f = self.hosts[host as usize].ready.pop_front()?;
            let flow = &mut self.flows[f as usize];
            let s = flow.sender.as_mut().expect("ready flows have a sender");
            s.in_ready_list = false;
            if !s.can_send() {
                continue;
            }
            let h = self.make_data(f);
            let s = self.flows[f as usize].sender.as_mut().expect("sender");
            if s.can_send() {
                s.in_ready_list = true;
                self.hosts[host as usize].ready.push_back(f);
            }
            return Some(h);
        }
    }

    fn make_data(&mut self, f: u32) -> Handle {
        let now = self.now;
        let flow = &mut self.flows[f as usize];
        let s = flow.sender.as_mut().expect("sender");
        let tx = s.transmit(now, &flow.sizes);
        let (psn, ev, wire) = (tx.psn, tx.ev, tx.wire);
        let mut fl = 0;
        if tx.retransmit {
            fl |= flags::RETRANSMIT | flags::ACK_REQUEST;
            flow.stats.retransmissions += 1;
        }
        if tx.last || s.in_flight >= s.window() {
            fl |= flags::ACK_REQUEST;
        }
        if !s.timer_pending {
            s.timer_pending = true;
            self.events.push(now + self.rto, Event::Timer(f));
        }
        flow.stats.data_sent += 1;
        self.counters.data_sent += 1;
        self.pkts.alloc(Packet {
            flow: f,
            psn,
            dst: flow.spec.dst,
            flow_key: flow.key,
            sent_at: now,
            ev,
            flags: fl,
            ..Packet::blank(Kind::Data, wire)
        })
    }

    fn on_flow_start(&mut self, f: u32) {
        let background = self.is_background(f);
        let flow = &mut self.flows[f as usize];
        if flow.phase != Phase::Waiting {
            return;
        }
        let t = &self.cfg.transport;
        let link_rate =
            self.topo.links[self.topo.host_uplink[flow.spec.src as usize] as usize].rate_bps;
        let bdp = (flow.base_rtt as u128 * link_rate as u128 / (8 * SEC as u128)) as u64;
        let max_cwnd = ((bdp as f64 * t.max_cwnd_bdp) as u64).max(t.mtu as u64);
        let params = CcParams {
            mtu: t.mtu,
            base_rtt: flow.base_rtt,
            bdp,
            max_cwnd,
            initial_cwnd: t.initial_cwnd.unwrap_or(max_cwnd),
            fast_increase: t.fast_increase || self.fast_increase_on,
        };
        let cc = cc::build(&t.cc, &params).expect("checked in new()");
        let mut rng = Rng::derive(self.cfg.seed, Stream::Flow, f as u64);
        let ctx = LbContext {
            flow_index: f,
            base_rtt: flow.base_rtt,
            rto: self.rto,
            bdp_packets: (bdp / t.mtu as u64).max(1) as u32,
            trimming: self.cfg.queue.trimming,
        };
        let name = if background {
            "ecmp"
        } else {
            self.cfg.lb.as_str()
        };
        let lb = lb::build(name, &self.cfg.lb_options, &ctx, &mut rng).expect("checked in new()");
        flow.sender = Some(Sender::new(flow.sizes.packets, cc, lb, rng));
        flow.receiver = Some(Receiver::new(flow.sizes.packets));
        flow.phase = Phase::Running;
        self.mark_ready(f);
    }

    fn on_timer(&mut self, f: u32) {
        let now = self.now;
        let rto = self.rto;
        let flow = &mut self.flows[f as usize];
        if flow.phase != Phase::Running {
            return;
        }
        let s = flow.sender.as_mut().expect("running flows have a sender");
        s.timer_pending = false;
        let Some((sent_at, psn)) = s.oldest_in_flight() else {
            return;
        };
        if now < sent_at + rto {
            s.timer_pending = true;
            self.events.push(sent_at + rto, Event::Timer(f));
            return;
        }
        if self.faults.is_some() && self.fault_gave_up(f) {
            return;
        }
        let flow = &mut self.flows[f as usize];
        let s = flow.sender.as_mut().expect("running flows have a sender");
        // Only the oldest outstanding packet is declared lost per expiry, like the reference.
        s.send_order.pop_front();
        let rtx_was_empty = s.next_retransmission().is_none();
        let ev = s.records[psn as usize].ev;
        let wire = s.declare_lost(psn);
        s.cc.on_timeout(wire, now);
        let event = s.lb.on_timeout(ev, now);
        flow.stats.timeouts += 1;
        if let Some((next, _)) = s.oldest_in_flight() {
            s.timer_pending = true;
            self.events.push((next + rto).max(now), Event::Timer(f));
        }
        self.record_lb(f, event);
        self.mark_ready(f);
        if self.cfg.transport.rts && rtx_was_empty {
            self.maybe_send_rts(f, wire);
        }
    }

    /// After a timeout (whose retransmission was queued and, window and NIC permitting, already
    /// sent): if the window has no room for a packet of the lost one's size, send an RTS, at
    /// most one per RTO. As in the reference, the RTS takes a PSN and an EV, gets a send record
    /// (so a lost RTS times out and goes again as a header-sized data packet) but adds nothing to
    /// `in_flight`.
    fn maybe_send_rts(&mut self, f: u32, lost_wire: u64) {
        let now = self.now;
        let rto = self.rto;
        let header = self.cfg.transport.header;
        let flow = &mut self.flows[f as usize];
        let s = flow.sender.as_mut().expect("running flows have a sender");
        if !s.rts_due(now, lost_wire, rto) {
            return;
        }
        let ev = s.lb.next_ev(now, &mut s.rng);
        let psn = s.register_rts(now, ev, header);
        if !s.timer_pending {
            s.timer_pending = true;
            self.events.push(now + rto, Event::Timer(f));
        }
        flow.stats.rts += 1;
        self.counters.rts_sent += 1;
        let h = self.pkts.alloc(Packet {
            flow: f,
            psn,
            dst: flow.spec.dst,
            flow_key: flow.key,
            sent_at: now,
            ev,
            flags: flags::ACK_REQUEST,
            ..Packet::blank(Kind::Rts, header)
        });
        let port = self.topo.host_uplink[flow.spec.src as usize];
        self.ports[port as usize].headers.push_back(h);
        self.kick(port);
    }

    fn record_lb(&mut self, flow: u32, event: Option<LbEvent>) {
        if let Some(event) = event {
            self.lb_records.push(LbRecord {
                time: self.now,
                flow,
                event,
            });
        }
    }

    // ----- hosts: receiving --------------------------------------------------------------

    fn on_data(&mut self, h: Handle) {
        let pkt = *self.pkts.get(h);
        let f = pkt.flow;
        let flow = &mut self.flows[f as usize];
        let Some(r) = flow
            .receiver
            .as_mut()
            .filter(|_| flow.phase == Phase::Running)
        else {
            // The connection already finished: a late copy.
            self.counters.data_duplicates += 1;
            self.pkts.free(h);
            return;
        };
        let sizes = flow.sizes;
        let trimmed = pkt.has(flags::TRIMMED);
        let kind;
        if trimmed {
            self.counters.trimmed_arrivals += 1;
            kind = if pkt.psn < r.expected || r.has(pkt.psn) {
                Kind::Ack
            } else {
                Kind::Nack
            };
        } else {
            if r.accept(pkt.psn) {
                // A retransmitted RTS travels as a header-sized data packet: no payload.
                let payload = (pkt.size - sizes.header) as u64;
                flow.delivered += payload;
                self.counters.data_delivered += 1;
                flow.stats.max_reorder = flow.stats.max_reorder.max(r.out_of_order);
            } else {
                self.counters.data_duplicates += 1;
            }
            r.unacked_bytes += pkt.size as u64;
            let ack_now = r.unacked_bytes >= self.cfg.transport.ack_every
                || pkt.has(flags::ECN)
                || pkt.has(flags::ACK_REQUEST)
                || pkt.psn == 0
                || flow.delivered == flow.spec.bytes;
            if !ack_now {
                self.pkts.free(h);
                return;
            }
            kind = Kind::Ack;
        }
        r.unacked_bytes = 0;
        let (sack_base, sack_bits) = r.sack(pkt.psn);
        let cum_ack = r.expected;
        let reply = self.pkts.get_mut(h);
        reply.kind = kind;
        reply.size = sizes.header;
        reply.dst = flow.spec.src;
        reply.cum_ack = cum_ack;
        reply.sack_base = sack_base;
        reply.sack_bits = sack_bits;
        reply.flags &= flags::ECN;
        if kind == Kind::Ack {
            self.counters.acks_sent += 1;
        } else {
            self.counters.nacks_sent += 1;
        }
        let port = self.topo.host_uplink[flow.spec.dst as usize];
        self.ports[port as usize].headers.push_back(h);
        self.kick(port);
    }

    /// An RTS reaches its receiver: its PSN counts as received and it is acknowledged at once
    /// (with its EV, never ECN-marked), as a data packet would be; it carries no payload and
    /// does not count towards ACK coalescing.
    fn on_rts(&mut self, h: Handle) {
        let pkt = *self.pkts.get(h);
        let flow = &mut self.flows[pkt.flow as usize];
        let Some(r) = flow
            .receiver
            .as_mut()
            .filter(|_| flow.phase == Phase::Running)
        else {
            self.pkts.free(h);
            return;
        };
        r.accept(pkt.psn);
        let (sack_base, sack_bits) = r.sack(pkt.psn);
        let reply = self.pkts.get_mut(h);
        reply.kind = Kind::Ack;
        reply.dst = flow.spec.src;
        reply.cum_ack = r.expected;
        reply.sack_base = sack_base;
        reply.sack_bits = sack_bits;
        reply.flags = 0;
        self.counters.acks_sent += 1;
        let port = self.topo.host_uplink[flow.spec.dst as usize];
        self.ports[port as usize].headers.push_back(h);
        self.kick(port);
    }

    fn on_control(&mut self, h: Handle) {
        let now = self.now;
        let pkt = *self.pkts.get(h);
        self.pkts.free(h);
        self.counters.control_arrived += 1;
        let f = pkt.flow;
        let flow = &mut self.flows[f as usize];
        if flow.phase != Phase::Running {
            return;
        }
        let s = flow.sender.as_mut().expect("running flows have a sender");
        let ecn = pkt.has(flags::ECN);
        let rec = s.records[pkt.psn as usize];
        let event = if pkt.kind == Kind::Nack {
            flow.stats.nacks += 1;
            if rec.state == PsnState::InFlight && rec.sent_at == pkt.sent_at {
                let wire = s.declare_lost(pkt.psn);
                s.cc.on_nack(wire, now);
                s.lb.on_nack(pkt.ev, now)
            } else {
                None
            }
        } else {
            flow.stats.acks += 1;
            if ecn {
                flow.stats.ecn_acks += 1;
            }
            // The RTT sample, as the reference takes it: from the PSN's latest transmission, and
            // only while that PSN is still outstanding.
            let rtt = (rec.state == PsnState::InFlight).then(|| now - rec.sent_at);
            let psns = s.psns();
            let mut newly = s.mark_acked(pkt.psn);
            for psn in s.cum_acked..pkt.cum_ack.min(psns) {
                newly += s.mark_acked(psn);
            }
            let mut bits = pkt.sack_bits;
            while bits != 0 {
                let psn = pkt.sack_base + bits.trailing_zeros();
                bits &= bits - 1;
                if psn < psns {
                    newly += s.mark_acked(psn);
                }
            }
            s.advance_cumulative();
            s.cc.on_ack(newly, ecn, rtt, now);
            s.lb.on_ack(pkt.ev, ecn, rtt, now)
        };
        if let Some(c) = self.collector.as_deref_mut() {
            c.on_cwnd(f, now, s.cc.cwnd());
        }
        self.record_lb(f, event);
        let flow = &mut self.flows[f as usize];
        let s = flow.sender.as_mut().expect("sender");
        if s.finished() {
            flow.phase = Phase::Done;
            flow.finish = Some(now);
            s.release();
            if let Some(r) = flow.receiver.as_mut() {
                r.release();
            }
            self.completions.push(f);
        } else {
            self.mark_ready(f);
        }
    }
}
