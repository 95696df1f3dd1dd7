//! Read-only views of a run and the setters a library user calls before running: clock,
//! topology, flows, counters, collectors, observers, the switch scheme's own counts.
use super::*;

impl Simulation {
    /// Current simulated time.
    pub fn now(&self) -> Time {
        self.world.now
    }

    /// Time of the latest event processed (when the run's activity ended, once idle).
    pub fn last_event_time(&self) -> Time {
        self.last_event
    }

    /// The run's retransmission timeout: the largest base RTT between two hosts plus time to
    /// drain four full queues at the slowest host NIC, unless the scenario sets one. Flows on
    /// explicit routes longer than the shortest paths may have a longer one ([`Flow::rto`]).
    pub fn rto(&self) -> Time {
        self.connections.rto
    }

    /// The run's transport settings, resolved (sizes in bytes, the mode's defaults filled in).
    pub fn transport(&self) -> &crate::transport::TransportParams {
        &self.transport
    }

    /// The largest unloaded RTT between two hosts.
    pub fn max_base_rtt(&self) -> Time {
        self.connections.max_base_rtt
    }

    /// Whether the congestion control's timed switch ([`crate::cc::CcScheme::timed_switch_at`]) has
    /// turned on.
    pub fn timed_switch_turned_on(&self) -> bool {
        self.timed_switch_on
    }

    /// The topology.
    pub fn topology(&self) -> &Topology {
        &self.world.topo
    }

    /// The explicit routes packets used so far.
    pub fn paths(&self) -> &PathTable {
        &self.world.paths
    }

    /// Why the run stopped before its end, if it did: a PFC deadlock, with the paused links
    /// of its cycle ([`crate::net::mmu::PfcConfig::deadlock_after`]). Nothing runs after it.
    pub fn halted(&self) -> Option<&str> {
        self.halt.as_deref()
    }

    /// The configuration.
    pub fn config(&self) -> &SimConfig {
        &self.cfg
    }

    /// Name of the run in outputs.
    pub fn label(&self) -> &str {
        &self.label
    }

    /// Traffic classes, the main one first.
    pub fn classes(&self) -> &[TrafficClass] {
        &self.classes
    }

    /// Name of flow `f`'s traffic class.
    pub fn class_name(&self, f: u32) -> &str {
        &self.classes[self.flows[f as usize].spec.class as usize].name
    }

    /// Labels of the scenario's workloads, by [`crate::workload::FlowSpec::workload`] (empty
    /// when the outputs do not name workloads).
    pub fn workload_labels(&self) -> &[String] {
        &self.workloads
    }

    /// Label of workload `w` (`None` when the outputs do not name workloads).
    pub fn workload_label(&self, w: u16) -> Option<&str> {
        self.workloads.get(w as usize).map(String::as_str)
    }

    /// The connections in the order they were added: all of them, unless streaming dropped
    /// finished ones (then those from index [`Self::first_held_flow`] on).
    pub fn flows(&self) -> &[Flow] {
        self.flows.held()
    }

    /// Connection `index`, unless streaming dropped it.
    pub fn flow(&self, index: u32) -> Option<&Flow> {
        self.flows.get(index as usize)
    }

    /// Global counters.
    pub fn counters(&self) -> Counters {
        self.world.counters
    }

    /// Counters of every port (index = link id).
    pub fn port_stats(&self) -> Vec<PortStats> {
        (0..self.world.ports.len() as u32)
            .map(|p| self.world.port_stats(p))
            .collect()
    }

    /// Current bit rate of a port (changes with `rate` faults).
    pub fn link_rate(&self, port: u32) -> u64 {
        self.world.port_class(port).rate_bps
    }

    /// Starts collecting time series (see [`crate::metrics::collect`]); replaces any collector.
    pub fn enable_collection(&mut self, cfg: CollectConfig) -> Result<(), SetupError> {
        let ports = cfg.check(&self.world.topo)?;
        let kmin = ports
            .iter()
            .map(|&p| self.world.port_class(p).params.ecn_min)
            .collect();
        self.collector = Some(Box::new(Collector::new(
            cfg,
            self.world.ports.len(),
            ports,
            kmin,
        )));
        Ok(())
    }

    /// The collector, if collection is enabled.
    pub fn collector(&self) -> Option<&Collector> {
        self.collector.as_deref()
    }

    /// Attaches an observer, told of completions, load-balancer events and drops at the end
    /// of each slice of simulated time they happen in ([`super::OBSERVER_SLICE`]); replaces
    /// any earlier one.
    pub fn set_observer(&mut self, observer: Box<dyn Observer>) {
        self.observer = Some(observer);
        self.observing = true;
    }

    /// The partitions the run was split into, each on its own thread (1: it ran whole).
    pub fn partitions(&self) -> u32 {
        self.ran_as
    }

    /// Elephants per link and interval: `[metrics] elephants`'s count if on, else the switch
    /// scheme's own (Reunion's; empty for other schemes).
    pub fn elephant_link_samples(&self) -> Vec<crate::routing::LinkSample> {
        if let Some(counter) = self.fabric.elephants.as_deref() {
            return counter.samples();
        }
        match &self.switching {
            Switching::Scheme {
                folded: Some(outputs),
                ..
            } => outputs.link_samples.clone(),
            Switching::Scheme { scheme, .. } => scheme.link_samples().to_vec(),
            Switching::Hashed => Vec::new(),
        }
    }

    /// The switch scheme's own counts (name, value; empty under ECMP).
    pub fn switch_stats(&self) -> Vec<(&'static str, u64)> {
        match &self.switching {
            Switching::Scheme {
                folded: Some(outputs),
                ..
            } => outputs.stats.clone(),
            Switching::Scheme { scheme, .. } => scheme.stats(),
            _ => Vec::new(),
        }
    }

    /// Load-balancer actions recorded so far.
    pub fn lb_records(&self) -> &[LbRecord] {
        &self.lb_records
    }

    /// Data packets currently inside the network: waiting in a port's FIFOs, on a wire, in a
    /// switch's forwarding pipeline or held by a switch scheme. Counted by walking the queues
    /// and pending events, so it is an independent check of the counters (O(network size)).
    pub fn data_in_network(&self) -> u64 {
        self.world.data_in_network() + self.held_data
    }

    /// Packets of any kind alive in the arena.
    pub fn live_packets(&self) -> usize {
        self.world.pkts.live()
    }

    /// Connections that finished since the last call (indices into [`Self::flows`]).
    pub fn take_completions(&mut self) -> Vec<u32> {
        std::mem::take(&mut self.completions)
    }

    /// Number of pending events.
    pub fn pending_events(&self) -> usize {
        self.world.events.len()
    }

    /// Largest number of packets alive at once (a run on threads: the partitions' peaks
    /// added, which is what their arenas held).
    pub fn peak_packets(&self) -> usize {
        self.world.pkts.peak()
    }

    /// True when every connection has finished.
    pub fn all_done(&self) -> bool {
        self.flows.iter().all(|f| f.phase == Phase::Done)
    }
}
