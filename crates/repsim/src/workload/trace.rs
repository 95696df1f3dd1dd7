//! Trace-driven traffic: flow sizes drawn from a CDF, arrivals at a target load, generated
//! lazily in start order (a [`FlowSource`]) so a long trace never sits in memory.
//!
//! Every sender (a host, or an ordered host pair) is its own arrival process with its own
//! random stream, so adding a host does not change the flows of the others:
//!
//! - [`Arrivals::Poisson`]: exponential gaps with mean `mean size / (load x rate x share)`, as
//!   the ConWeave and LAPS generators do; the offered load converges to the target.
//! - [`Arrivals::BackToBack`]: the REPS reference generator's deterministic mode: each flow
//!   starts `size x 8 / (rate x load)` after the previous one of the same host.
//!
//! Destinations: uniform over the other hosts, uniform over hosts of other racks, a fixed
//! partner per host (the reference generator's, with an occasional random host), or one
//! process per ordered pair (all-to-all: each pair carries `1 / (n - 1)` of its host's load).
use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::cdf::SizeCdf;
use super::{FlowSource, FlowSpec};
use crate::engine::rng::Stream;
use crate::engine::time::SEC;
use crate::engine::{Rng, Time};

/// How flows arrive at each sender.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arrivals {
    /// Exponential gaps (a Poisson process at the target load).
    Poisson,
    /// Each flow starts when the previous one would have finished at `load` x line rate.
    BackToBack,
}

/// Where a host's flows go.
#[derive(Clone, Debug, PartialEq)]
pub enum Destinations {
    /// Uniformly over the other hosts.
    Uniform,
    /// Uniformly over the hosts of other racks (`rack[h]` is host h's rack).
    OtherRacks(Vec<u32>),
    /// To one fixed partner per host (`partner[i]` for `hosts[i]`), except with probability
    /// `stray` to a uniformly random other host (the REPS reference generator).
    Partner {
        /// Partner host of each sender, in the order of `hosts`.
        partner: Vec<u32>,
        /// Probability of a random destination instead.
        stray: f64,
    },
    /// One arrival process per ordered pair of hosts (all-to-all).
    AllPairs,
}

/// A trace's parameters.
#[derive(Clone, Debug)]
pub struct TraceSpec {
    /// Flow sizes.
    pub sizes: SizeCdf,
    /// Hosts that send and receive.
    pub hosts: Vec<u32>,
    /// Line rate of each host in `hosts`, bits per second.
    pub rates: Vec<u64>,
    /// Offered load as a fraction of each host's line rate (0 < load).
    pub load: f64,
    /// Arrival process.
    pub arrivals: Arrivals,
    /// Destination rule.
    pub destinations: Destinations,
    /// First arrival time of every sender's process.
    pub start: Time,
    /// No arrival at or after this time.
    pub until: Option<Time>,
    /// At most this many flows.
    pub max_flows: Option<u64>,
    /// Id of the first flow (the others follow in start order).
    pub first_id: u64,
    /// Seed of the random streams.
    pub seed: u64,
}

/// One arrival process.
struct Sender {
    src: u32,
    /// Fixed destination (all-pairs), else chosen per flow.
    dst: Option<u32>,
    /// Bytes per picosecond this sender offers.
    bytes_per_ps: f64,
    /// Index of its source host in `hosts`.
    host_index: usize,
    rng: Rng,
    /// Size of the flow arriving next.
    next_size: u64,
}

/// The lazy source of a trace.
pub struct TraceSource {
    spec: TraceSpec,
    senders: Vec<Sender>,
    /// (arrival time, sender) of every sender's next flow.
    due: BinaryHeap<Reverse<(Time, u32)>>,
    /// Flows made so far.
    made: u64,
    /// Mean of the size distribution, bytes.
    mean_size: f64,
}

impl TraceSource {
    /// A source for `spec`; the message says what is wrong with it.
    pub fn new(spec: TraceSpec) -> Result<Self, String> {
        if spec.hosts.len() < 2 {
            return Err("a trace needs at least two hosts".into());
        }
        if spec.rates.len() != spec.hosts.len() {
            return Err("one line rate per host".into());
        }
        if !(spec.load.is_finite() && spec.load > 0.0) {
            return Err(format!("load must be positive, not {}", spec.load));
        }
        if let Destinations::Partner { partner, stray } = &spec.destinations {
            if partner.len() != spec.hosts.len() || !(0.0..=1.0).contains(stray) {
                return Err("one partner per host and a stray probability in 0..=1".into());
            }
        }
        if let Destinations::OtherRacks(rack) = &spec.destinations {
            let first = rack.get(spec.hosts[0] as usize);
            if spec.hosts.iter().any(|&h| rack.get(h as usize).is_none())
                || spec.hosts.iter().all(|&h| rack.get(h as usize) == first)
            {
                return Err("other-rack destinations need hosts in at least two racks".into());
            }
        }
        let n = spec.hosts.len();
        let mut senders = Vec::new();
        let share =
            |rate: u64, parts: usize| rate as f64 / 8.0 / SEC as f64 * spec.load / parts as f64;
        match spec.destinations {
            Destinations::AllPairs => {
                for (i, &src) in spec.hosts.iter().enumerate() {
                    for &dst in spec.hosts.iter().filter(|&&d| d != src) {
                        senders.push((src, Some(dst), share(spec.rates[i], n - 1), i));
                    }
                }
            }
            _ => {
                for (i, &src) in spec.hosts.iter().enumerate() {
                    senders.push((src, None, share(spec.rates[i], 1), i));
                }
            }
        }
        let mut source = TraceSource {
            mean_size: spec.sizes.mean(),
            senders: senders
                .into_iter()
                .enumerate()
                .map(|(k, (src, dst, bytes_per_ps, host_index))| Sender {
                    src,
                    dst,
                    bytes_per_ps,
                    host_index,
                    rng: Rng::derive(spec.seed, Stream::Workload, 1_000_000 + k as u64),
                    next_size: 0,
                })
                .collect(),
            due: BinaryHeap::new(),
            made: 0,
            spec,
        };
        for k in 0..source.senders.len() {
            let first = source.spec.start + source.first_gap(k);
            source.schedule(k, first);
        }
        Ok(source)
    }

    /// The gap before a sender's first flow: Poisson processes start at a random phase
    /// (an exponential gap), back-to-back ones at the start time.
    fn first_gap(&mut self, k: usize) -> Time {
        match self.spec.arrivals {
            Arrivals::Poisson => self.poisson_gap(k),
            Arrivals::BackToBack => 0,
        }
    }

    fn poisson_gap(&mut self, k: usize) -> Time {
        let s = &mut self.senders[k];
        let mean = self.mean_size / s.bytes_per_ps;
        // 1 - u is in (0, 1], so the logarithm is finite.
        (-(1.0 - s.rng.unit()).ln() * mean).round() as Time
    }

    /// Draws sender k's next flow size and queues its arrival at `at` (unless past the end).
    fn schedule(&mut self, k: usize, at: Time) {
        if self.spec.until.is_some_and(|u| at >= u) {
            return;
        }
        let s = &mut self.senders[k];
        s.next_size = self.spec.sizes.sample(&mut s.rng);
        self.due.push(Reverse((at, k as u32)));
    }

    /// The destination of sender k's next flow.
    fn destination(&mut self, k: usize) -> u32 {
        let hosts = &self.spec.hosts;
        let s = &mut self.senders[k];
        if let Some(d) = s.dst {
            return d;
        }
        let other = |rng: &mut Rng| {
            // Uniform over the hosts other than the source.
            let i = rng.below(hosts.len() as u32 - 1) as usize;
            let i = if i >= s.host_index { i + 1 } else { i };
            hosts[i]
        };
        match &self.spec.destinations {
            Destinations::Uniform | Destinations::AllPairs => other(&mut s.rng),
            Destinations::OtherRacks(rack) => loop {
                let d = other(&mut s.rng);
                if rack[d as usize] != rack[s.src as usize] {
                    break d;
                }
            },
            Destinations::Partner { partner, stray } => {
                if s.rng.unit() < *stray {
                    other(&mut s.rng)
                } else {
                    partner[s.host_index]
                }
            }
        }
    }
}

impl FlowSource for TraceSource {
    fn next_flow(&mut self) -> Option<FlowSpec> {
        if self.spec.max_flows.is_some_and(|m| self.made >= m) {
            return None;
        }
        let Reverse((at, k)) = self.due.pop()?;
        let k = k as usize;
        let dst = self.destination(k);
        let s = &self.senders[k];
        let (src, bytes) = (s.src, s.next_size);
        let gap = match self.spec.arrivals {
            Arrivals::Poisson => self.poisson_gap(k),
            Arrivals::BackToBack => (bytes as f64 / self.senders[k].bytes_per_ps).round() as Time,
        };
        self.schedule(k, at + gap.max(1));
        let id = self.spec.first_id + self.made;
        self.made += 1;
        Some(FlowSpec::new(id, src, dst, bytes, at))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::time::{MS, US};

    fn websearch() -> SizeCdf {
        SizeCdf::parse(
            "0 0\n10000 15\n20000 20\n30000 30\n50000 40\n80000 53\n200000 60\n1000000 70\n\
             2000000 80\n5000000 90\n10000000 97\n30000000 100\n",
        )
        .unwrap()
    }

    fn spec(hosts: u32, arrivals: Arrivals, destinations: Destinations) -> TraceSpec {
        TraceSpec {
            sizes: websearch(),
            hosts: (0..hosts).collect(),
            rates: vec![400_000_000_000; hosts as usize],
            load: 0.8,
            arrivals,
            destinations,
            start: 0,
            until: Some(200 * MS),
            max_flows: None,
            first_id: 1,
            seed: 5,
        }
    }

    fn all(s: TraceSpec) -> Vec<FlowSpec> {
        let mut src = TraceSource::new(s).unwrap();
        std::iter::from_fn(|| src.next_flow()).collect()
    }

    /// Offered bytes per host over the window, as a fraction of its line rate.
    fn loads(flows: &[FlowSpec], hosts: u32, window: Time) -> Vec<f64> {
        let mut bytes = vec![0u64; hosts as usize];
        for f in flows {
            bytes[f.src as usize] += f.bytes;
        }
        let capacity = 400e9 / 8.0 * window as f64 / SEC as f64;
        bytes.iter().map(|&b| b as f64 / capacity).collect()
    }

    #[test]
    fn poisson_arrivals_offer_the_target_load() {
        let flows = all(spec(8, Arrivals::Poisson, Destinations::Uniform));
        assert!(
            flows.windows(2).all(|w| w[0].start <= w[1].start),
            "start order"
        );
        assert!(flows.iter().all(|f| f.src != f.dst && f.start < 200 * MS));
        assert_eq!(flows[0].id, 1);
        assert_eq!(flows.last().unwrap().id, flows.len() as u64);
        let total: f64 = loads(&flows, 8, 200 * MS).iter().sum::<f64>() / 8.0;
        assert!((total / 0.8 - 1.0).abs() < 0.03, "offered {total}");
        let mean = flows.iter().map(|f| f.bytes as f64).sum::<f64>() / flows.len() as f64;
        assert!((mean / websearch().mean() - 1.0).abs() < 0.05, "{mean}");
        // Seeded: the same spec gives the same trace, another seed another one.
        assert_eq!(
            flows,
            all(spec(8, Arrivals::Poisson, Destinations::Uniform))
        );
        let other = all(TraceSpec {
            seed: 6,
            ..spec(8, Arrivals::Poisson, Destinations::Uniform)
        });
        assert_ne!(flows, other);
    }

    #[test]
    fn back_to_back_arrivals_follow_each_flow_s_transmission_time() {
        let s = TraceSpec {
            until: Some(2 * MS),
            ..spec(4, Arrivals::BackToBack, Destinations::Uniform)
        };
        let flows = all(s);
        for h in 0..4 {
            let mine: Vec<&FlowSpec> = flows.iter().filter(|f| f.src == h).collect();
            assert_eq!(mine[0].start, 0);
            for w in mine.windows(2) {
                let gap = (w[0].bytes as f64 * 8.0 / (400e9 * 0.8) * SEC as f64).round() as Time;
                assert_eq!(w[1].start - w[0].start, gap.max(1));
            }
        }
    }

    #[test]
    fn destinations_follow_their_rule() {
        let racks: Vec<u32> = (0..8).map(|h| h / 4).collect();
        let flows = all(TraceSpec {
            until: Some(20 * MS),
            ..spec(
                8,
                Arrivals::Poisson,
                Destinations::OtherRacks(racks.clone()),
            )
        });
        assert!(flows
            .iter()
            .all(|f| racks[f.src as usize] != racks[f.dst as usize]));
        let partner: Vec<u32> = (0..8).map(|h| (h + 3) % 8).collect();
        let flows = all(TraceSpec {
            until: Some(50 * MS),
            ..spec(
                8,
                Arrivals::Poisson,
                Destinations::Partner {
                    partner: partner.clone(),
                    stray: 0.05,
                },
            )
        });
        let strays = flows
            .iter()
            .filter(|f| f.dst != partner[f.src as usize])
            .count();
        let share = strays as f64 / flows.len() as f64;
        assert!(share > 0.02 && share < 0.08, "{share}");
        // All pairs: every ordered pair carries flows, each about 1/(n-1) of a host's load.
        let flows = all(spec(4, Arrivals::Poisson, Destinations::AllPairs));
        for s in 0..4 {
            for d in (0..4).filter(|&d| d != s) {
                assert!(flows.iter().any(|f| f.src == s && f.dst == d));
            }
        }
        let l = loads(&flows, 4, 200 * MS);
        assert!(l.iter().all(|&x| (x / 0.8 - 1.0).abs() < 0.1), "{l:?}");
    }

    #[test]
    fn limits_and_bad_specs() {
        let flows = all(TraceSpec {
            max_flows: Some(10),
            until: None,
            ..spec(4, Arrivals::Poisson, Destinations::Uniform)
        });
        assert_eq!(flows.len(), 10);
        let late = all(TraceSpec {
            start: 5 * US,
            until: Some(5 * US),
            ..spec(4, Arrivals::BackToBack, Destinations::Uniform)
        });
        assert!(late.is_empty());
        let bad = |s: TraceSpec| TraceSource::new(s).err().unwrap();
        assert!(bad(TraceSpec {
            load: 0.0,
            ..spec(4, Arrivals::Poisson, Destinations::Uniform)
        })
        .contains("load"));
        assert!(bad(spec(1, Arrivals::Poisson, Destinations::Uniform)).contains("two hosts"));
        assert!(bad(spec(
            4,
            Arrivals::Poisson,
            Destinations::OtherRacks(vec![0; 4])
        ))
        .contains("two racks"));
    }

    #[test]
    fn every_shipped_cdf_offers_its_target_load_per_host() {
        let mut checked = 0;
        for (name, sizes) in crate::workload::cdf::shipped() {
            // Long enough that three standard deviations of a host's offered bytes stay
            // under 3 % of the target: n >= (3 x CV / 0.03)^2 flows per host.
            let n = (1e4 * sizes.variation().powi(2) * 1.2).clamp(20_000.0, 3_000_000.0);
            let per_flow = sizes.mean() * 8.0 / (400e9 * 0.6);
            let window = (n * per_flow * SEC as f64) as Time;
            let flows = all(TraceSpec {
                sizes: sizes.clone(),
                load: 0.6,
                until: Some(window),
                ..spec(4, Arrivals::Poisson, Destinations::Uniform)
            });
            for (h, l) in loads(&flows, 4, window).iter().enumerate() {
                assert!((l / 0.6 - 1.0).abs() < 0.03, "{name}: host {h} offers {l}");
            }
            let mean = flows.iter().map(|f| f.bytes as f64).sum::<f64>() / flows.len() as f64;
            assert!(
                (mean / sizes.mean() - 1.0).abs() < 0.03,
                "{name}: mean {mean}"
            );
            checked += 1;
        }
        assert!(checked >= 15, "{checked} files");
    }
}
