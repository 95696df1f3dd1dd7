//! `[workload] type = "trace"`: flow sizes from a CDF file, arrivals at a target load,
//! generated lazily while the run goes (see [`crate::workload::trace`]).
//!
//! ```toml
//! [workload]
//! type = "trace"
//! cdf = "../data/cdf/WebSearch_distribution.txt"
//! load = 0.8                    # of each host's link rate
//! arrivals = "poisson"          # or "back_to_back" (the REPS reference generator)
//! destinations = "uniform"      # or "other_racks", "partner", "all_pairs"
//! duration = "10ms"             # and/or count = 100000
//! hosts = 32                    # only hosts 0..32 take part (default: all)
//! ```
use super::workload::workload_seed;
use super::{LoadedScenario, ScenarioError, WorkloadSection};
use crate::engine::rng::Stream;
use crate::engine::Rng;
use crate::net::Topology;
use crate::sim::TrafficClass;
use crate::workload::cdf::SizeCdf;
use crate::workload::trace::{Arrivals, Destinations, TraceSource, TraceSpec};
use crate::workload::FlowSource;

/// Probability that the reference generator sends a flow to a random host instead of the
/// source's partner (5 in 101).
const PARTNER_STRAY: f64 = 5.0 / 101.0;

impl LoadedScenario {
    /// The lazy sources of the workloads (a trace's; none for the other types), numbering
    /// their flows from `first_id`; `classes` are the run's traffic classes (mixed traffic
    /// puts a trace's flows from some hosts in the background class).
    pub(super) fn sources(
        &self,
        topo: &Topology,
        seed: u64,
        first_id: u64,
        classes: &[TrafficClass],
    ) -> Result<Vec<Box<dyn FlowSource>>, ScenarioError> {
        let workloads = &self.scenario.workload;
        let mut sources = Vec::new();
        for (i, w) in workloads.sections().iter().enumerate() {
            if w.kind == "trace" {
                let at = workloads.field(i);
                let wseed = w.seed.unwrap_or_else(|| workload_seed(seed, i));
                let background = Self::background_class(w, classes);
                let mut source = self.trace(w, &at, topo, wseed, first_id)?;
                let workload = i as u16;
                sources.push(Box::new(move || {
                    let mut f = source.next_flow()?;
                    if let Some((n, class)) = background {
                        if f.src.is_multiple_of(n) {
                            f.class = class;
                        }
                    }
                    f.workload = workload;
                    Some(f)
                }) as Box<dyn FlowSource>);
            }
        }
        Ok(sources)
    }

    /// The trace source of workload `w` (`at` names its fields in errors), drawn with `wseed`.
    fn trace(
        &self,
        w: &WorkloadSection,
        at: &str,
        topo: &Topology,
        wseed: u64,
        first_id: u64,
    ) -> Result<TraceSource, ScenarioError> {
        let cdf_file = w
            .cdf
            .as_ref()
            .ok_or_else(|| self.err(&format!("{at}.cdf"), "required for type = \"trace\""))?;
        let (path, text) = self
            .read_relative(cdf_file)
            .map_err(|e| self.err(&format!("{at}.cdf"), e))?;
        let sizes = SizeCdf::parse(&text)
            .map_err(|e| self.err(&format!("{at}.cdf"), format!("{}: {e}", path.display())))?;
        let load = w
            .load
            .ok_or_else(|| self.err(&format!("{at}.load"), "required for a trace, e.g. 0.8"))?;
        if !(load.is_finite() && load > 0.0 && load <= 10.0) {
            return Err(self.err(&format!("{at}.load"), "must be in (0, 10] (1 = line rate)"));
        }
        let oversubscription = w.oversubscription.unwrap_or(1.0);
        if !(oversubscription.is_finite() && oversubscription >= 1.0) {
            return Err(self.err(&format!("{at}.oversubscription"), "must be at least 1"));
        }
        let arrivals = match w.arrivals.as_deref().unwrap_or("poisson") {
            "poisson" => Arrivals::Poisson,
            "back_to_back" => Arrivals::BackToBack,
            other => {
                return Err(self.err(
                    &format!("{at}.arrivals"),
                    format!("unknown '{other}'; allowed: poisson, back_to_back"),
                ))
            }
        };
        let active = w.hosts.unwrap_or(topo.hosts);
        if active < 2 || active > topo.hosts {
            return Err(self.err(
                &format!("{at}.hosts"),
                format!("must be in 2..={} (the topology's hosts)", topo.hosts),
            ));
        }
        let hosts: Vec<u32> = (0..active).collect();
        let rack: Vec<u32> = hosts
            .iter()
            .map(|&h| topo.links[topo.host_uplink[h as usize] as usize].to)
            .collect();
        let destinations = match w.destinations.as_deref().unwrap_or("uniform") {
            "uniform" => Destinations::Uniform,
            "other_racks" => Destinations::OtherRacks(rack),
            "all_pairs" => Destinations::AllPairs,
            "partner" => Destinations::Partner {
                partner: partners(&rack, wseed),
                stray: PARTNER_STRAY,
            },
            other => {
                return Err(self.err(
                    &format!("{at}.destinations"),
                    format!("unknown '{other}'; allowed: uniform, other_racks, partner, all_pairs"),
                ))
            }
        };
        let start = w.start.map(|s| s.0).unwrap_or(0);
        let until = w.duration.map(|d| start + d.0);
        if until.is_none() && w.count.is_none() {
            return Err(self.err(
                &format!("{at}.duration"),
                "a trace needs a duration (e.g. \"10ms\") or a count of flows",
            ));
        }
        if w.count == Some(0) || w.duration.is_some_and(|d| d.0 == 0) {
            return Err(self.err(at, "duration and count must be positive"));
        }
        let rates = hosts
            .iter()
            .map(|&h| topo.links[topo.host_uplink[h as usize] as usize].rate_bps)
            .collect();
        TraceSource::new(TraceSpec {
            sizes,
            hosts,
            rates,
            load: load / oversubscription,
            arrivals,
            destinations,
            start,
            until,
            max_flows: w.count,
            first_id,
            seed: wseed,
        })
        .map_err(|e| self.err(at, e))
    }
}

/// The reference generator's partners: a seeded random derangement that avoids the source's
/// own rack where it can (a host whose only candidates share its rack keeps one of them).
fn partners(rack: &[u32], seed: u64) -> Vec<u32> {
    let n = rack.len();
    let mut rng = Rng::derive(seed, Stream::Workload, 2);
    let mut order: Vec<u32> = (0..n as u32).collect();
    rng.shuffle(&mut order);
    // `order` read cyclically is a single cycle: a host's partner follows it there.
    let mut partner = vec![0u32; n];
    for k in 0..n {
        partner[order[k] as usize] = order[(k + 1) % n];
    }
    // Repair pairs in the same rack by exchanging partners with a host for which both new
    // pairs cross racks.
    for h in 0..n {
        if rack[h] != rack[partner[h] as usize] {
            continue;
        }
        if let Some(g) = (0..n).find(|&g| {
            g != h
                && rack[partner[g] as usize] != rack[h]
                && rack[partner[h] as usize] != rack[g]
                && partner[g] as usize != h
                && partner[h] as usize != g
        }) {
            partner.swap(h, g);
        }
    }
    partner
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partners_avoid_self_and_the_own_rack() {
        let rack: Vec<u32> = (0..128).map(|h| h / 8).collect();
        for seed in 0..10 {
            let p = partners(&rack, seed);
            for (h, &d) in p.iter().enumerate() {
                assert_ne!(h as u32, d);
                assert_ne!(rack[h], rack[d as usize], "seed {seed} host {h}");
            }
        }
    }
}
