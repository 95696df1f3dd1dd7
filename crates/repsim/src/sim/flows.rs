//! Flows: adding them (now, later, from a lazy source), their dependencies, their start (the
//! connection factory, [`super::connect`], makes the sender and receiver of the class's
//! schemes), and their end.
use super::connect::ConnectionRequest;
use super::{FinishedFlow, Flow, Phase, SetupError, Simulation};
use crate::lb::Route;
use crate::net::packet::flags;
use crate::net::world::{Owner, Timer};
use crate::net::{candidates, paths};
use crate::transport::Sizes;
use crate::workload::{FlowSource, FlowSpec};

pub(super) fn start_timer(f: u32) -> Timer {
    Timer {
        owner: Owner::FlowStart,
        kind: 0,
        gen: 0,
        id: f,
    }
}

impl Simulation {
    /// Adds a connection. It starts at `spec.start` (or now, if that is in the past), or, if
    /// it depends on other flows, `spec.delay` after the last of them finishes (never before
    /// `spec.start`). Dependencies name flows already added (by id); a flow may depend on
    /// flows that finished already. Returns the flow's index.
    pub fn add_flow(&mut self, spec: FlowSpec) -> Result<u32, SetupError> {
        let index = self.check_flow(&spec)?;
        self.flow_index.insert(spec.id, index);
        self.push_flow(spec, index);
        Ok(index)
    }

    /// Adds a list of flows whose dependencies may point forwards in the list.
    pub(super) fn add_flows(&mut self, flows: Vec<FlowSpec>) -> Result<(), SetupError> {
        let first = self.flows.len() as u32;
        for (i, spec) in flows.iter().enumerate() {
            let index = first + i as u32;
            if self.flow_index.insert(spec.id, index).is_some() {
                return Err(SetupError::BadFlow {
                    id: spec.id,
                    why: "another flow has the same id".into(),
                });
            }
        }
        for spec in flows {
            let index = self.flows.len() as u32;
            self.check_fields(&spec)?;
            self.check_dependencies(&spec)?;
            self.push_flow(spec, index);
        }
        Ok(())
    }

    fn check_flow(&self, spec: &FlowSpec) -> Result<u32, SetupError> {
        self.check_fields(spec)?;
        if self.flow_index.contains_key(&spec.id) {
            return Err(SetupError::BadFlow {
                id: spec.id,
                why: "another flow has the same id".into(),
            });
        }
        self.check_dependencies(spec)?;
        Ok(self.flows.len() as u32)
    }

    fn check_fields(&self, spec: &FlowSpec) -> Result<(), SetupError> {
        let hosts = self.world.topo.hosts;
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
        let t = &self.transport;
        let packets = spec.bytes.div_ceil((t.mtu - t.header) as u64);
        if packets > u32::MAX as u64 / 2 {
            return Err(bad(format!(
                "{} bytes is too large for one connection (at most {} bytes: {} packets of {} \
                 payload bytes)",
                spec.bytes,
                u32::MAX as u64 / 2 * (t.mtu - t.header) as u64,
                u32::MAX / 2,
                t.mtu - t.header
            )));
        }
        if spec.class as usize >= self.classes.len() {
            return Err(bad(format!(
                "traffic class {} does not exist (there are {})",
                spec.class,
                self.classes.len()
            )));
        }
        Ok(())
    }

    fn check_dependencies(&self, spec: &FlowSpec) -> Result<(), SetupError> {
        self.check_triggers(spec)?;
        for id in &spec.after {
            if !self.flow_index.contains_key(id) {
                return Err(SetupError::BadFlow {
                    id: spec.id,
                    why: format!("it waits for flow {id}, which does not exist"),
                });
            }
            if *id == spec.id {
                return Err(SetupError::BadFlow {
                    id: spec.id,
                    why: "it waits for itself".into(),
                });
            }
        }
        Ok(())
    }

    /// Adds a checked flow at `index` and schedules its start (or files it under the flows it
    /// waits for).
    fn push_flow(&mut self, spec: FlowSpec, index: u32) {
        let t = &self.transport;
        let sizes = Sizes::new(spec.bytes, t.mtu, t.header);
        let mut deps_left = 0;
        let mut ready_at = spec.start.max(self.world.now);
        for id in &spec.after {
            let dep = self.flow_index[id] as usize;
            match self.flows.get(dep).and_then(|d| d.finish) {
                Some(done) => ready_at = ready_at.max(done + spec.delay),
                None => {
                    deps_left += 1;
                    self.dependents.entry(*id).or_default().push(index);
                }
            }
        }
        let trigger = spec.trigger;
        if self.enter_triggers(&spec, index) {
            deps_left += 1;
        }
        let base_rtt = self.base_rtt(spec.src, spec.dst);
        // Source routes are interned as flows are added, in the same order in every
        // partition of a run split over threads, so that a route id in a packet names the
        // same path everywhere (not as flows start, which each partition sees only for its
        // own hosts).
        let class = &self.classes[spec.class as usize];
        let wanted = class.lb.as_ref().unwrap_or(&self.cfg.lb).routes_wanted();
        if wanted > 0 {
            self.routes_between(spec.src, spec.dst, wanted);
        }
        self.flows.push(Flow {
            base_rtt,
            rto: self.connections.rto,
            sizes,
            phase: if deps_left > 0 {
                Phase::Blocked
            } else {
                Phase::Waiting
            },
            started_at: None,
            finish: None,
            stats: Default::default(),
            delivered: 0,
            sender: None,
            receiver: None,
            in_ready_list: false,
            pacing_pending: false,
            control_timer_at: None,
            control_timers: false,
            deps_left,
            packet_flags: 0,
            spec,
        });
        if deps_left == 0 {
            self.world.set_timer(ready_at, start_timer(index));
        }
        if let Some(k) = trigger {
            self.release_if_open(k, index);
        }
    }

    /// Adds a lazy source of flows: each is added when simulated time reaches its start (a
    /// start that has passed, or one earlier than the previous flow's, means now). Flows the
    /// simulation refuses are listed by [`Self::rejected_flows`].
    pub fn add_source(&mut self, mut source: Box<dyn FlowSource>) {
        let i = self.sources.len() as u32;
        let next = source.next_flow();
        if let Some(spec) = &next {
            // A start in the past means now, as for add_flow.
            self.world.set_timer(
                spec.start.max(self.world.now),
                Timer {
                    owner: Owner::Source,
                    kind: 0,
                    gen: 0,
                    id: i,
                },
            );
        }
        self.sources.push((source, next));
    }

    /// True while a workload source still has flows to start (the run's total payload is not
    /// known yet).
    pub fn flows_to_come(&self) -> bool {
        self.sources.iter().any(|(_, next)| next.is_some())
    }

    /// A source's next flow is due.
    pub(super) fn on_source(&mut self, i: u32) {
        let (source, pending) = &mut self.sources[i as usize];
        let Some(spec) = pending.take() else { return };
        let next = source.next_flow();
        if let Some(n) = &next {
            self.world.set_timer(
                n.start.max(self.world.now),
                Timer {
                    owner: Owner::Source,
                    kind: 0,
                    gen: 0,
                    id: i,
                },
            );
        }
        self.sources[i as usize].1 = next;
        if let Err(e) = self.add_flow(spec) {
            self.rejected.push(e.to_string());
        }
    }

    /// Candidate explicit routes from host `src` to host `dst` (at most `k`, shortest first,
    /// leaving by the host's first NIC: LAPS's candidate set on Dragonfly and rail fabrics,
    /// the k shortest elsewhere; see [`candidates`]), interned in the path table, each with its
    /// own unloaded RTT and one-way baselines; cached per host pair. Source-routed load
    /// balancers get these.
    pub fn routes_between(&mut self, src: u32, dst: u32, k: usize) -> Vec<Route> {
        if let Some(r) = self.routes.get(&(src, dst, k as u32)) {
            return r.clone();
        }
        let t = &self.transport;
        let nic = self.world.topo.host_uplink[src as usize];
        let found = candidates::candidate_routes(&self.world.topo, src, dst, k);
        let routes: Vec<Route> = found
            .into_iter()
            .filter(|r| r[0] == nic)
            .map(|r| Route {
                id: self
                    .world
                    .paths
                    .intern(&self.world.topo, &r)
                    .expect("candidate routes are valid routes"),
                hops: r.len() as u32,
                base_rtt: paths::round_trip(&self.world.topo, &r, t.mtu, t.header),
                one_way: candidates::unloaded_latency(&self.world.topo, &r, t.mtu),
                slowest_rate: candidates::slowest_rate(&self.world.topo, &r),
            })
            .collect();
        self.routes.insert((src, dst, k as u32), routes.clone());
        routes
    }

    /// Flow `f` starts: its sender and receiver come to life.
    pub(super) fn on_flow_start(&mut self, f: u32) {
        match self.flows[f as usize].phase {
            Phase::Waiting => {}
            // A partition that holds only the receiving end of a flow that waited for
            // others: the release ran at the source; this is the start's replica.
            Phase::Blocked if !self.owns(self.flows[f as usize].spec.src) => {}
            _ => return,
        }
        let now = self.world.now;
        let flow = &self.flows[f as usize];
        let (src, dst) = (flow.spec.src, flow.spec.dst);
        let class = &self.classes[flow.spec.class as usize];
        let lb = class.lb.clone().unwrap_or_else(|| self.cfg.lb.clone());
        let packet_flags = if class.switch_exempt {
            flags::SWITCH_EXEMPT
        } else {
            0
        };
        let line_rate =
            self.world.topo.links[self.world.topo.host_uplink[src as usize] as usize].rate_bps;
        let routes = match lb.routes_wanted() {
            0 => Vec::new(),
            k => self.routes_between(src, dst, k),
        };
        let flow = &self.flows[f as usize];
        let class = &self.classes[flow.spec.class as usize];
        let connection = self.connections.open(&ConnectionRequest {
            flow: f,
            pair: (src, dst, flow.spec.class),
            sizes: flow.sizes,
            base_rtt: flow.base_rtt,
            line_rate,
            lb: &lb,
            cc: class.cc.as_ref().unwrap_or(&self.cfg.cc),
            routes: &routes,
            timed_switch_on: self.timed_switch_on,
            transport: &self.transport,
            trimming: self.queue.trimming,
        });
        let flow = &mut self.flows[f as usize];
        flow.rto = connection.rto;
        flow.packet_flags = packet_flags;
        flow.control_timers = connection.sender.has_control_timers();
        let (sender, receiver) = (connection.sender, connection.receiver);
        flow.phase = Phase::Running;
        flow.started_at = Some(now);
        // A partition holds the halves of the hosts it owns (both, unsplit).
        let (sends, receives) = (self.owns(src), self.owns(dst));
        if receives {
            // The receiving host's pull pacer learns of the connection as it starts: it acts
            // only on the connection's packets, which come later.
            self.credit_flow_started(f, &sender);
            self.flows[f as usize].receiver = Some(Box::new(receiver));
        }
        if !sends {
            return;
        }
        self.flows[f as usize].sender = Some(Box::new(sender));
        self.mark_ready(f);
        self.arm_control_timer(f);
    }

    /// Flow `f` has every byte acknowledged. Its receiver hears of it one crossing of the
    /// fabric later ([`Self::on_sender_finished`]).
    pub(super) fn finish_flow(&mut self, f: u32) {
        let now = self.world.now;
        self.endpoint_bytes_released += super::memory::sender_bytes(&self.flows[f as usize]);
        let flow = &mut self.flows[f as usize];
        flow.phase = super::Phase::Done;
        flow.finish = Some(now);
        if self.transport.reuse_connections {
            if let Some(s) = flow.sender.take() {
                let pair = (flow.spec.src, flow.spec.dst, flow.spec.class);
                self.connections.park(pair, s.into_state());
            }
        } else if let Some(s) = flow.sender.as_mut() {
            s.release();
        }
        if self.retired.is_some() {
            // Streaming: a finished flow may wait a long time behind a slow one before it
            // leaves the table; it waits without its sender (late ACKs are discarded, as
            // after it leaves).
            flow.sender = None;
        }
        let (src, dst, id) = (flow.spec.src, flow.spec.dst, flow.spec.id);
        let notice = Timer {
            owner: Owner::Receiver,
            kind: 0,
            gen: 0,
            id: f,
        };
        let at = now + self.one_way_latency(src, dst);
        self.set_timer_at(dst, at, notice);
        // While observing, completions are handed out once the observer heard of them.
        if !self.observing {
            self.completions.push(f);
        }
        for d in self.dependents.remove(&id).unwrap_or_default() {
            self.notify_dependent(d, src);
        }
        if let Some(k) = self.flows[f as usize].spec.fires {
            self.activate_trigger(k, src);
        }
        if self.observing {
            self.note(src, super::observer::Heard::Completed(f));
        }
    }

    /// Flow `f`'s receiver hears that its sender finished (or gave up): it lets its state go,
    /// and data that still arrives is discarded from now on. Until now it answered late copies as a real
    /// receiver would (it cannot know the sender has every ACK it needs); the notice takes one
    /// crossing of the fabric, so that no host learns of another's state sooner than a packet
    /// could tell it (the same at any split of the network over threads).
    pub(super) fn on_sender_finished(&mut self, f: u32) {
        let Some(flow) = self.flows.get(f as usize) else {
            return;
        };
        self.endpoint_bytes_released += super::memory::receiver_bytes(flow);
        self.flows[f as usize].receiver = None;
        // Its pull pacer stops granting it credit (until now it may have, for nothing).
        self.credit_flow_finished(f);
    }

    /// The unloaded one-way propagation latency from host `src` to host `dst` on their first
    /// path (links only).
    pub(super) fn one_way_latency(&self, src: u32, dst: u32) -> crate::engine::Time {
        let topo = &self.world.topo;
        (topo.first_path(src, dst).iter())
            .map(|&l| topo.links[l as usize].latency)
            .sum()
    }

    /// Flows an observer or a source offered that could not be added, one message each.
    pub fn rejected_flows(&self) -> &[String] {
        &self.rejected
    }

    /// Hands out every finished flow not handed out before and frees its per-flow state, so
    /// that long runs keep only what is still running. The flows stay listed in
    /// [`Self::flows`] with their spec and counters.
    pub fn retire_finished(&mut self) -> Vec<FinishedFlow> {
        let mut out = Vec::new();
        let base = self.flows.base() as usize;
        for (i, flow) in self.flows.iter_mut().enumerate() {
            let i = base + i;
            if flow.phase != Phase::Done || flow.sender.is_none() {
                continue;
            }
            flow.sender = None;
            flow.receiver = None;
            out.push(FinishedFlow {
                index: i as u32,
                spec: flow.spec.clone(),
                started_at: flow.started_at.unwrap_or(0),
                finish: flow.finish.unwrap_or(0),
                stats: flow.stats,
            });
            flow.spec.after = Vec::new();
        }
        out
    }
}
