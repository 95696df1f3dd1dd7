//! The simulation: the passive network ([`World`]) plus the components that act on it (host
//! endpoints with their congestion controls and load balancers, the switch scheme, the fault
//! timeline, workload sources, collectors and an observer), and the loop that routes every
//! event to its owner.
//!
//! A packet's path: a host NIC (`host`) pulls it from a sender and puts it on its wire; at
//! each switch (`switch`) the scheme (ECMP by default, or the packet's explicit route) picks
//! an egress port, where it queues (trimmed or dropped if the buffer is full) until the port
//! serializes it onto the next wire; at the destination host the receiver answers with an ACK
//! or NACK that travels back the same way; the ACK drives the sender's congestion control and
//! load balancer.
//!
//! Pending events are kept few: one service-completion per busy port (queued packets wait in
//! the port's FIFOs, not in the event list), one arrival per packet on a wire, and one lazily
//! re-armed retransmission timer per connection.
use std::collections::{BTreeMap, VecDeque};

use crate::engine::rng::Stream;
use crate::engine::time::SEC;
use crate::engine::{Arena, EventOrder, EventQueue, Rng, Time};
use crate::lb::{LbRecord, Route};
use crate::metrics::collect::{CollectConfig, Collector};
use crate::net::paths::{self, PathTable};
use crate::net::port::{
    Port, PortClass, PortClasses, PortCold, PortStats, QueueBytes, QueueParams, SWITCH_PORT,
};
use crate::net::world::{Counters, World, MAX_LINKS};
use crate::net::{RunContext, Topology};
use crate::routing::{SchemeAction, SchemeSetup, SwitchScheme};
use crate::transport::{FlowStats, Receiver, Sender, Sizes, TransportParams};
use crate::workload::{FlowSource, FlowSpec};

mod access;
mod books;
mod connect;
mod credit;
mod event_loop;
mod fabric;
mod faults;
mod flow_table;
mod flows;
mod host;
mod memory;
mod observer;
pub mod parallel;
mod pfc;
mod ports;
mod prefetch;
mod retire;
mod shard;
mod spec;
mod split_run;
mod summary;
mod switch;
mod timeouts;
mod triggers;

pub use books::PacketBooks;
pub use memory::MemoryItem;
pub use observer::{DropCause, Injector, Observer, PacketDrop, OBSERVER_SLICE};
pub use pfc::PfcLinkStats;
pub use spec::{RunSpec, SimConfig, TrafficClass};
pub use split_run::SplitSimulation;

/// Why a simulation cannot be set up.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    /// A flow is malformed.
    #[error("flow {id}: {why}")]
    BadFlow {
        /// The flow's id.
        id: u64,
        /// What is wrong.
        why: String,
    },
    /// A setting cannot run (the same check a scenario file gets).
    #[error(transparent)]
    Config(#[from] crate::error::ConfigError),
    /// Something else is inconsistent.
    #[error("{0}")]
    Invalid(String),
}

/// Lifecycle of a connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Waiting for the flows it depends on.
    Blocked,
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
///
/// Laid out by hand (`repr(C)`, asserted below): what every packet of the flow reads at its
/// hosts (sender, receiver, timeout, phase, flags, and the spec's `src` and `dst`) shares the
/// first cache line, and the per-packet counters open the statistics on a line of their own,
/// so that the event loop fetches two lines of a flow ahead of its packets (`prefetch.rs`)
/// instead of stalling on fields spread over five (the compiler's own order).
#[repr(C, align(64))]
pub struct Flow {
    /// Boxed so that a finished flow waiting to be streamed out (or kept for the summary) costs
    /// a pointer, not the whole transport state.
    sender: Option<Box<Sender>>,
    /// Boxed for the same reason as `sender`.
    receiver: Option<Box<Receiver>>,
    /// Its retransmission timeout: the run's, or longer on longer explicit routes (set at start).
    pub rto: Time,
    /// Payload bytes the receiver delivered (each once).
    pub delivered: u64,
    /// Lifecycle phase.
    pub phase: Phase,
    /// Listed in its host's ready-to-send list.
    in_ready_list: bool,
    /// A pacing wake-up is scheduled.
    pacing_pending: bool,
    /// Its congestion control or load balancer uses timers.
    control_timers: bool,
    /// Flag bits every packet of the flow carries (its class's).
    packet_flags: u8,
    /// What the workload asked for (`repr(C)`: its `src` and `dst` in the first line).
    pub spec: FlowSpec,
    /// Unloaded round-trip time of its shortest path.
    pub base_rtt: Time,
    /// The earliest control (congestion control, load balancer) wake-up scheduled.
    control_timer_at: Option<Time>,
    /// Counters (`repr(C)`: the per-packet ones in their first line).
    pub stats: FlowStats,
    /// Flows it still waits for.
    deps_left: u32,
    /// When it really started (its start time, or later: added late, or after its dependencies).
    pub started_at: Option<Time>,
    /// Time the last byte was acknowledged (set only when the flow is [`Phase::Done`]).
    pub finish: Option<Time>,
    sizes: Sizes,
}

// The layout the docs above describe.
const _: () = {
    use std::mem::offset_of;
    let spec = offset_of!(Flow, spec);
    assert!(offset_of!(Flow, packet_flags) < 64);
    assert!(spec + offset_of!(FlowSpec, dst) + 4 <= 64);
    assert!(offset_of!(Flow, stats) % 64 == 0);
    assert!(offset_of!(FlowStats, max_reorder) + 4 <= 64);
    assert!(offset_of!(FlowStats, rts) + 8 <= 64);
};

impl Flow {
    /// Flow completion time: from its effective start to its last acknowledged byte.
    pub fn fct(&self) -> Option<Time> {
        Some(self.finish? - self.started_at?)
    }

    /// When it started: its effective start (dependencies done) once it has, else the time
    /// its workload asked for.
    pub fn start(&self) -> Time {
        self.started_at.unwrap_or(self.spec.start)
    }

    /// Its sender, while running.
    pub fn sender(&self) -> Option<&Sender> {
        self.sender.as_deref()
    }

    /// Its receiver, while running.
    pub fn receiver(&self) -> Option<&Receiver> {
        self.receiver.as_deref()
    }

    /// A copy of everything but its sender and receiver (what an observer is handed of a
    /// finished flow).
    fn without_endpoints(&self) -> Flow {
        Flow {
            sender: None,
            receiver: None,
            rto: self.rto,
            delivered: self.delivered,
            phase: self.phase,
            in_ready_list: self.in_ready_list,
            pacing_pending: self.pacing_pending,
            control_timers: self.control_timers,
            packet_flags: self.packet_flags,
            spec: self.spec.clone(),
            base_rtt: self.base_rtt,
            control_timer_at: self.control_timer_at,
            stats: self.stats,
            deps_left: self.deps_left,
            started_at: self.started_at,
            finish: self.finish,
            sizes: self.sizes,
        }
    }
}

/// A finished flow handed out by [`Simulation::retire_finished`].
#[derive(Clone, Debug, PartialEq)]
pub struct FinishedFlow {
    /// Its index.
    pub index: u32,
    /// What the workload asked for.
    pub spec: FlowSpec,
    /// Effective start.
    pub started_at: Time,
    /// Last byte acknowledged.
    pub finish: Time,
    /// Counters.
    pub stats: FlowStats,
}

/// A host NIC's scheduling state.
#[derive(Default)]
struct HostState {
    /// Flows with something to send, served round robin.
    ready: VecDeque<u32>,
}

/// The switch scheme, with hash-only forwarding inlined.
enum Switching {
    /// Hash on the forwarding table's group (the hot path), for schemes that forward by the
    /// hash alone ([`crate::routing::RoutingScheme::hashes_only`]).
    Hashed,
    /// Any other scheme.
    Scheme {
        scheme: Box<dyn SwitchScheme>,
        /// Each switch's own random stream: its draws do not depend on other switches'.
        rngs: Vec<Rng>,
        egress_hook: bool,
        /// The counts and samples of every partition's scheme, once a run split over threads
        /// is folded (each partition's instance saw only its own switches).
        folded: Option<Box<SchemeOutputs>>,
    },
}

/// A switch scheme's outputs: its counts ([`SwitchScheme::stats`]) and link samples.
#[derive(Clone, Debug, Default)]
struct SchemeOutputs {
    stats: Vec<(&'static str, u64)>,
    link_samples: Vec<crate::routing::LinkSample>,
}

/// A port's host and the flow its next pull from the host's ready list is expected to serve.
#[derive(Clone, Copy, Debug)]
struct PortHost {
    /// The host whose NIC it is, or `SWITCH_PORT` for a switch port.
    host: u32,
    /// The flow at the front of the host's ready list when the NIC last pulled or a flow
    /// joined an empty list ([`NO_PULL`] if none): only a hint for the prefetcher, which
    /// reaches the flow in one load this way instead of through the host and its list.
    next_pull: u32,
}

/// [`PortHost::next_pull`] with no flow expected.
const NO_PULL: u32 = u32::MAX;

/// A complete simulation: build it, run it, read its flows and counters.
pub struct Simulation {
    label: String,
    cfg: SimConfig,
    /// The switch queues' settings in bytes at the run's MTU.
    queue: QueueBytes,
    /// The transport settings, resolved.
    transport: TransportParams,
    world: World,
    hosts: Vec<HostState>,
    /// Per port, the host whose NIC it is and the flow its next pull is expected to serve: a
    /// compact array apart from the ports, which the prefetcher can read before the port itself
    /// arrives.
    port_hosts: Vec<PortHost>,
    /// Egress ports the prefetcher computed for the events ahead.
    hints: prefetch::Hints,
    flows: flow_table::FlowTable,
    /// Flow id -> index, for dependencies.
    flow_index: BTreeMap<u64, u32>,
    /// Flow id -> indices of flows waiting for it.
    dependents: BTreeMap<u64, Vec<u32>>,
    /// Triggers (`.cm` collectives).
    triggers: triggers::Triggers,
    classes: Vec<TrafficClass>,
    /// Labels of the scenario's workloads (empty: the outputs do not name them).
    workloads: Vec<String>,
    /// Makes each starting flow's sender and receiver; holds the run's RTO and the finished
    /// connections kept for reuse.
    connections: connect::ConnectionFactory,
    switching: Switching,
    scheme_actions: Vec<SchemeAction>,
    /// Scratch copy of a switch's candidate ports for schemes.
    candidates: Vec<u32>,
    /// Scratch for next hops found by graph search.
    search_buf: Vec<u32>,
    /// Data packets a switch scheme holds.
    held_data: u64,
    books: PacketBooks,
    faults: Option<Box<faults::Faults>>,
    /// Faults, random loss or elephant counting look at every arriving packet.
    arrival_hooks: bool,
    sources: Vec<(Box<dyn FlowSource>, Option<FlowSpec>)>,
    collector: Option<Box<Collector>>,
    observer: Option<Box<dyn Observer>>,
    /// What observers hear of is noted (an observer is set, or a caller tells it on threads).
    observing: bool,
    /// Noted since the last slice end, for the observer.
    noted: Vec<observer::Noted>,
    /// The next instant at which the noted events are told (a multiple of the slice).
    next_telling: Time,
    /// The key (time and tie-break) of the event running now.
    current_key: u128,
    lb_records: Vec<LbRecord>,
    completions: Vec<u32>,
    /// Candidate explicit routes per (source host, destination host, k), for source routing.
    routes: BTreeMap<(u32, u32, u32), Vec<Route>>,
    /// Heap bytes the senders and receivers of finished flows held when they let them go
    /// (for the memory breakdown).
    endpoint_bytes_released: usize,
    /// Flows offered by observers or sources that could not be added.
    rejected: Vec<String>,
    /// The congestion control's timed switch has turned on.
    timed_switch_on: bool,
    /// Time of the latest event processed.
    last_event: Time,
    /// Receiving hosts' pull pacers, when some traffic class is credit paced.
    credit: Option<credit::CreditPacing>,
    /// Priority flow control and the switches' shared-buffer MMU (`None`: off).
    pfc: Option<Box<pfc::PfcState>>,
    /// Statistics of the flows dropped from the table, once streaming is on.
    retired: Option<Box<retire::RetiredTotals>>,
    /// Random loss, candidate-route next hops, receiver reordering.
    fabric: fabric::FabricExtras,
    /// Why the run stopped before its end, if it did (a PFC deadlock): no event is processed
    /// after it.
    halt: Option<String>,
    /// Which part of a network split over threads this simulation runs (`None`: all of it).
    shard: Option<Box<shard::Shard>>,
    /// The partitions it ran as, side by side (1: unsplit; more once they are folded).
    ran_as: u32,
}

impl Simulation {
    /// Builds a run: its network, flows, faults and traffic classes.
    pub fn new(spec: RunSpec) -> Result<Self, SetupError> {
        let RunSpec {
            label,
            config: cfg,
            topology: topo,
            flows,
            sources,
            triggers,
            faults,
            classes,
            workloads,
        } = spec;
        cfg.validate(&topo)?;
        faults.check(topo.links.len())?;
        let transport = cfg.transport.resolve()?;
        let t = &transport;
        let ctx = RunContext::new(t.mtu, t.header).on(&topo);
        let mut all_classes = vec![TrafficClass {
            name: "main".into(),
            lb: None,
            cc: None,
            switch_exempt: false,
        }];
        all_classes.extend(classes);
        let specs =
            std::iter::once(&cfg.lb).chain(all_classes.iter().filter_map(|c| c.lb.as_ref()));
        for lb in specs {
            lb.validate(&ctx)
                .map_err(|e| SetupError::Invalid(format!("load balancer {}: {e}", lb.name())))?;
        }
        let ccs =
            || std::iter::once(&cfg.cc).chain(all_classes.iter().filter_map(|c| c.cc.as_ref()));
        for cc in ccs() {
            cc.validate(&ctx).map_err(|e| {
                SetupError::Invalid(format!("congestion control {}: {e}", cc.name()))
            })?;
        }
        t.check_congestion_controls(ccs())?;
        cfg.switch.validate(&ctx).map_err(|e| {
            SetupError::Invalid(format!("switch scheme {}: {e}", cfg.switch.name()))
        })?;
        if topo.links.len() >= MAX_LINKS as usize {
            return Err(SetupError::Invalid(format!(
                "the topology has {} links; at most {} can be simulated",
                topo.links.len(),
                MAX_LINKS - 1
            )));
        }
        let queue = cfg.queue.bytes(t.mtu);
        let mut ports = Vec::with_capacity(topo.links.len());
        crate::engine::hugepage::advise(&ports);
        let mut port_cold = Vec::with_capacity(topo.links.len());
        let mut port_classes = PortClasses::new();
        for (i, link) in topo.links.iter().enumerate() {
            let nic = link.from < topo.hosts;
            let mut params = if nic {
                QueueBytes::host_params(t.header)
            } else {
                let scale = link.buffer_scale * queue.rate_scale(link.rate_bps);
                queue.port_params(scale, t.header)
            };
            if cfg.pfc.enabled {
                // Lossless: the shared-buffer MMU, not the queue's own limit, admits data.
                params.capacity = QueueParams::OFF;
            }
            let rng = Rng::derive(cfg.seed, Stream::Port, i as u64);
            let class = port_classes.intern(PortClass {
                rate_bps: link.rate_bps,
                latency: link.latency,
                params,
            });
            ports.push(Port::new(class));
            port_cold.push(PortCold::new(rng));
        }
        let salts: Vec<u32> = (0..topo.switches.len() as u64)
            .map(|s| Rng::derive(cfg.seed, Stream::SwitchSalt, s).next_u32())
            .collect();
        let switching = match &cfg.switch {
            hashed if hashed.hashes_only() => Switching::Hashed,
            other => {
                let scheme = other.build(&SchemeSetup {
                    topology: &topo,
                    salts: &salts,
                    next_hops: cfg.next_hops,
                });
                Switching::Scheme {
                    egress_hook: scheme.hooks().egress,
                    scheme,
                    rngs: (0..topo.switches.len() as u64)
                        .map(|s| Rng::derive(cfg.seed, Stream::SwitchScheme, s))
                        .collect(),
                    folded: None,
                }
            }
        };
        let pfc = if cfg.pfc.enabled {
            let state = pfc::PfcState::new(&cfg.pfc.bytes(t.mtu), &topo, t.mtu, t.header)
                .map_err(|e| SetupError::Invalid(format!("pfc: {e}")))?;
            Some(Box::new(state))
        } else {
            None
        };
        let fabric = fabric::FabricExtras::new(&cfg, &topo, t.mtu);
        let hosts = (0..topo.hosts).map(|_| HostState::default()).collect();
        let port_hosts = (topo.links.iter())
            .map(|l| PortHost {
                host: if l.from < topo.hosts {
                    l.from
                } else {
                    SWITCH_PORT
                },
                next_pull: NO_PULL,
            })
            .collect();
        let mut sim = Simulation {
            label,
            world: World {
                now: 0,
                events: EventQueue::new(),
                order: EventOrder::new(topo.nodes() + 1),
                departures_first: cfg.queue.departures_first,
                pkts: Arena::new(),
                port_to: topo.links.iter().map(|l| l.to).collect(),
                port_from: topo.links.iter().map(|l| l.from).collect(),
                ports,
                port_cold,
                port_classes,
                topo,
                paths: PathTable::new(),
                salts,
                counters: Counters::default(),
                outbox: None,
                payloads: Default::default(),
            },
            hosts,
            port_hosts,
            hints: prefetch::Hints::default(),
            flows: flow_table::FlowTable::new(),
            flow_index: BTreeMap::new(),
            dependents: BTreeMap::new(),
            triggers: triggers::Triggers::default(),
            classes: all_classes,
            workloads,
            // Timed once the network's RTTs are known, below.
            connections: connect::ConnectionFactory::new(cfg.seed, 0, 0, 0),
            switching,
            scheme_actions: Vec::new(),
            candidates: Vec::new(),
            search_buf: Vec::new(),
            held_data: 0,
            books: PacketBooks::default(),
            faults: None,
            arrival_hooks: false,
            sources: Vec::new(),
            collector: None,
            observer: None,
            observing: false,
            noted: Vec::new(),
            next_telling: 0,
            current_key: 0,
            lb_records: Vec::new(),
            completions: Vec::new(),
            routes: BTreeMap::new(),
            endpoint_bytes_released: 0,
            rejected: Vec::new(),
            timed_switch_on: false,
            last_event: 0,
            credit: None,
            queue,
            transport,
            pfc,
            retired: None,
            fabric,
            halt: None,
            shard: None,
            ran_as: 1,
            cfg,
        };
        let max_base_rtt = sim
            .transport
            .network_rtt
            .unwrap_or_else(|| sim.network_max_rtt());
        let topo = &sim.world.topo;
        let slowest_nic = topo
            .host_uplink
            .iter()
            .map(|&l| topo.links[l as usize].rate_bps)
            .min()
            .unwrap_or(1)
            .max(1);
        // The RTO allows for draining four full queues at the slowest host NIC.
        let queue_drain =
            (4 * sim.queue.capacity as u128 * 8 * SEC as u128 / slowest_nic as u128) as Time;
        let rto = sim
            .transport
            .fixed_rto()
            .unwrap_or(max_base_rtt + queue_drain);
        sim.connections =
            connect::ConnectionFactory::new(sim.cfg.seed, max_base_rtt, queue_drain, rto);
        sim.setup_credit();
        sim.add_triggers(triggers)?;
        sim.add_flows(flows)?;
        for source in sources {
            sim.add_source(source);
        }
        let setup = faults::FaultSetup {
            seed: sim.cfg.seed,
            rto: sim.connections.rto,
            header: sim.transport.header,
            mtu: sim.transport.mtu as u64,
            queue: sim.queue,
        };
        sim.faults = faults::Faults::install(faults, &mut sim.world, setup).map(Box::new);
        if let Some(at) = sim.cfg.cc.timed_switch_at() {
            let timer = crate::net::world::Timer {
                owner: crate::net::world::Owner::CcSwitch,
                kind: 0,
                gen: 0,
                id: 0,
            };
            sim.world.set_timer(at, timer);
        }
        sim.arrival_hooks = sim.faults.is_some()
            || sim.fabric.random_loss.is_some()
            || sim.fabric.elephants.is_some();
        Ok(sim)
    }

    /// The largest unloaded RTT between two hosts (over pairs of edge switches' first hosts).
    fn network_max_rtt(&self) -> Time {
        let t = &self.world.topo;
        let mut first_host = vec![u32::MAX; t.switches.len()];
        for h in (0..t.hosts).rev() {
            first_host[t.host_edge[h as usize] as usize] = h;
        }
        let mut max = 0;
        for &a in &t.edges {
            for &b in &t.edges {
                let (src, dst) = (first_host[a as usize], first_host[b as usize]);
                if src != dst {
                    max = max.max(self.base_rtt(src, dst));
                }
            }
        }
        // Two hosts on one edge switch only.
        if max == 0 && t.hosts > 1 {
            max = self.base_rtt(0, 1);
        }
        max
    }

    /// Unloaded RTT between two hosts: a full data packet out and a header back on the
    /// shortest path (every switch's first candidate).
    pub fn base_rtt(&self, src: u32, dst: u32) -> Time {
        let t = &self.transport;
        paths::round_trip(
            &self.world.topo,
            &self.world.topo.first_path(src, dst),
            t.mtu,
            t.header,
        )
    }
}

// The simulation holds only owned, `Send` parts, so a run can move to another thread.
const _: fn() = || {
    fn is_send<T: Send>() {}
    is_send::<Simulation>();
};
