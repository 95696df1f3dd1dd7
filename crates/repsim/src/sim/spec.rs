//! What a run is built from: its configuration, traffic classes and the whole run
//! specification a scenario (or a library user) hands to [`super::Simulation::new`].
use crate::cc::CcSpec;
use crate::engine::Time;
use crate::error::ConfigError;
use crate::fault::random_loss::LossConfig;
use crate::fault::FaultPlan;
use crate::lb::LbSpec;
use crate::metrics::MetricsConfig;
use crate::net::candidate_hops::NextHops;
use crate::net::hash::EcmpHash;
use crate::net::mmu::PfcConfig;
use crate::net::port::QueueConfig;
use crate::net::Topology;
use crate::routing::SwitchSpec;
use crate::transport::TransportConfig;
use crate::workload::{FlowSource, FlowSpec, Trigger};

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
    /// Load balancer of the main traffic class.
    pub lb: LbSpec,
    /// Congestion control of the main traffic class.
    pub cc: CcSpec,
    /// Switch scheme.
    pub switch: SwitchSpec,
    /// How results are summarized (`[metrics]`: slowdown buckets, reordering, elephants per
    /// link, percentiles).
    pub metrics: MetricsConfig,
    /// Priority flow control and the switches' shared buffer (off by default).
    pub pfc: PfcConfig,
    /// Random loss at every receiving port (off by default).
    pub loss: LossConfig,
    /// Next hops of hashed and flowlet schemes: shortest paths, or the candidate routes'.
    pub next_hops: NextHops,
    /// The ECMP switches' hash (used when the switch scheme is ECMP).
    pub ecmp_hash: EcmpHash,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            seed: 1,
            end: 100 * crate::engine::time::MS,
            queue: QueueConfig::default(),
            transport: TransportConfig::default(),
            lb: LbSpec::default(),
            cc: CcSpec::default(),
            switch: SwitchSpec::default(),
            metrics: MetricsConfig::default(),
            pfc: PfcConfig::default(),
            loss: LossConfig::default(),
            next_hops: NextHops::Shortest,
            ecmp_hash: EcmpHash::Lookup2,
        }
    }
}

impl SimConfig {
    /// Checks every setting against the others and the topology: the checks a scenario file
    /// gets, with the same fields and messages, so a configuration built in code fails as the
    /// same values written in a scenario do. [`crate::Simulation::new`] calls it.
    pub fn validate(&self, topology: &Topology) -> Result<(), ConfigError> {
        let t = self.transport.resolve()?;
        self.queue.check(t.mtu)?;
        self.pfc.check(t.mtu, topology)?;
        self.metrics.check(t.mtu)?;
        self.loss
            .validate()
            .map_err(|e| ConfigError::new("loss.probability", e))?;
        if self.ecmp_hash != EcmpHash::Lookup2 && !self.switch.hashes_only() {
            return Err(ConfigError::new(
                "routing.switch",
                format!(
                    "an ECMP hash is set, which switch scheme {} does not use",
                    self.switch.name()
                ),
            ));
        }
        for (i, link) in topology.links.iter().enumerate() {
            if link.rate_bps == 0 {
                return Err(ConfigError::new(
                    "topology",
                    format!("link {i} ({} -> {}) has no bit rate", link.from, link.to),
                ));
            }
            if !(link.buffer_scale.is_finite() && link.buffer_scale > 0.0) {
                return Err(ConfigError::new(
                    "topology",
                    format!(
                        "link {i} ({} -> {}) has buffer scale {}; it must be positive",
                        link.from, link.to, link.buffer_scale
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// A traffic class: flows whose [`FlowSpec::class`] is its index use its load balancer and
/// congestion control instead of the run's (e.g. ECMP background traffic under REPS).
#[derive(Clone, Debug, PartialEq)]
pub struct TrafficClass {
    /// Name in outputs (`main`, `background`, ...).
    pub name: String,
    /// Load balancer (`None`: the run's).
    pub lb: Option<LbSpec>,
    /// Congestion control (`None`: the run's).
    pub cc: Option<CcSpec>,
    /// Its packets carry [`crate::net::packet::flags::SWITCH_EXEMPT`]: switch schemes that
    /// honour it hash them as ECMP does instead of rerouting them.
    pub switch_exempt: bool,
}

/// A whole run: what [`crate::Simulation::new`] builds from (a scenario's `build` makes one).
pub struct RunSpec {
    /// Name of the run in outputs (usually the load balancer's name).
    pub label: String,
    /// Configuration.
    pub config: SimConfig,
    /// Network.
    pub topology: Topology,
    /// Flows (more may be added while running, or come from sources).
    pub flows: Vec<FlowSpec>,
    /// Lazy sources of more flows (a trace), each in start order.
    pub sources: Vec<Box<dyn FlowSource>>,
    /// Triggers flows wait on or activate (`.cm` collectives).
    pub triggers: Vec<Trigger>,
    /// Fault timeline (empty for none).
    pub faults: FaultPlan,
    /// Traffic classes after the main one (class 1, 2, ...).
    pub classes: Vec<TrafficClass>,
    /// Labels of the scenario's workloads, by [`FlowSpec::workload`]; empty when the outputs
    /// do not name workloads.
    pub workloads: Vec<String>,
}

impl RunSpec {
    /// Why this run cannot be split over threads yet (empty: it can); as
    /// [`super::Simulation::partition_blockers`] says once it is built.
    pub fn split_blockers(&self) -> Vec<String> {
        super::shard::split_blockers(&self.config.switch)
    }

    /// A run of `flows` on `topology` with no faults and one traffic class.
    pub fn new(config: SimConfig, topology: Topology, flows: Vec<FlowSpec>) -> Self {
        RunSpec {
            label: config.lb.name().to_string(),
            config,
            topology,
            flows,
            sources: Vec::new(),
            triggers: Vec::new(),
            faults: FaultPlan::default(),
            classes: Vec::new(),
            workloads: Vec::new(),
        }
    }
}
