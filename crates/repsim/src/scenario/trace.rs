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
use super::{LoadedScenario, ScenarioError};
use crate::engine::rng::Stream;
use crate::engine::Rng;
use crate::net::Topology;
use crate::workload::cdf::SizeCdf;
use crate::workload::trace::{Arrivals, Destinations, TraceSource, TraceSpec};
use crate::workload::FlowSource;

/// Probability that the reference generator sends a flow to a random host instead of the
/// source's partner (5 in 101).
const PARTNER_STRAY: f64 = 5.0 / 101.0;

impl LoadedScenario {
    /// The lazy sources of the workload (a trace's; none for the other types). `class` puts
    /// a flow from source host h in a traffic class (mixed traffic), if it returns one.
    pub(super) fn sources(
        &self,
        topo: &Topology,
        seed: u64,
        class: impl Fn(u32) -> Option<u16> + Send + 'static,
    ) -> Result<Vec<Box<dyn FlowSource>>, ScenarioError> {
        let w = &self.scenario.workload;
        if w.kind != "trace" {
            return Ok(Vec::new());
        }
        let cdf_file = w
            .cdf
            .as_ref()
            .ok_or_else(|| self.err("workload.cdf", "required for type = \"trace\""))?;
        let (path, text) = self
            .read_relative(cdf_file)
            .map_err(|e| self.err("workload.cdf", e))?;
        let sizes = SizeCdf::parse(&text)
            .map_err(|e| self.err("workload.cdf", format!("{}: {e}", path.display())))?;
        let load = w
            .load
            .ok_or_else(|| self.err("workload.load", "required for a trace, e.g. 0.8"))?;
        if !(load.is_finite() && load > 0.0 && load <= 10.0) {
            return Err(self.err("workload.load", "must be in (0, 10] (1 = line rate)"));
        }
        let oversubscription = w.oversubscription.unwrap_or(1.0);
        if !(oversubscription.is_finite() && oversubscription >= 1.0) {
            return Err(self.err("workload.oversubscription", "must be at least 1"));
        }
        let arrivals = match w.arrivals.as_deref().unwrap_or("poisson") {
            "poisson" => Arrivals::Poisson,
            "back_to_back" => Arrivals::BackToBack,
            other => {
                return Err(self.err(
                    "workload.arrivals",
                    format!("unknown '{other}'; allowed: poisson, back_to_back"),
                ))
            }
        };
        let active = w.hosts.unwrap_or(topo.hosts);
        if active < 2 || active > topo.hosts {
            return Err(self.err(
                "workload.hosts",
                format!("must be in 2..={} (the topology's hosts)", topo.hosts),
            ));
        }
        let hosts: Vec<u32> = (0..active).collect();
        let rack: Vec<u32> = hosts
            .iter()
            .map(|&h| topo.links[topo.host_uplink[h as usize] as usize].to)
            .collect();
        let wseed = w.seed.unwrap_or(seed);
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
                    "workload.destinations",
                    format!("unknown '{other}'; allowed: uniform, other_racks, partner, all_pairs"),
                ))
            }
        };
        let start = w.start.map(|s| s.0).unwrap_or(0);
        let until = w.duration.map(|d| start + d.0);
        if until.is_none() && w.count.is_none() {
            return Err(self.err(
                "workload.duration",
                "a trace needs a duration (e.g. \"10ms\") or a count of flows",
            ));
        }
        if w.count == Some(0) || w.duration.is_some_and(|d| d.0 == 0) {
            return Err(self.err("workload", "duration and count must be positive"));
        }
        let rates = hosts
            .iter()
            .map(|&h| topo.links[topo.host_uplink[h as usize] as usize].rate_bps)
            .collect();
        let mut source = TraceSource::new(TraceSpec {
            sizes,
            hosts,
            rates,
            load: load / oversubscription,
            arrivals,
            destinations,
            start,
            until,
            max_flows: w.count,
            first_id: 1,
            seed: wseed,
        })
        .map_err(|e| self.err("workload", e))?;
        Ok(vec![Box::new(move || {
            let mut f = source.next_flow()?;
            if let Some(c) = class(f.src) {
                f.class = c;
            }
            Some(f)
        })])
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
