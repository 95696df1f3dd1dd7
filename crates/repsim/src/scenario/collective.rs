//! `[workload] type = "collective"`: a collective over some of the hosts (see
//! [`crate::workload::collective`]).
//!
//! ```toml
//! [workload]
//! type = "collective"
//! collective = "ring_allreduce"   # reduce_scatter, all_gather, ring_reference,
//!                                 # butterfly_allreduce, alltoall, ps_allreduce, allscatter,
//!                                 # ring_step (one step of a ring, every rank at once)
//! size = "64MiB"                  # the buffer S
//! ranks = 16                      # default: every host
//! placement = "spread"            # rack_local (default), spread, or [0, 9, 18, ...]
//! iterations = 2
//! compute_gap = "20us"
//! ```
use super::{LoadedScenario, ScenarioError, WorkloadSection};
use crate::engine::rng::Stream;
use crate::engine::{Rng, Time};
use crate::net::Topology;
use crate::workload::collective::{collective_flows, CollectiveKind, CollectiveSpec};
use crate::workload::FlowSpec;

impl LoadedScenario {
    /// The flows of a collective workload.
    pub(super) fn collective(
        &self,
        w: &WorkloadSection,
        at: &str,
        topo: &Topology,
        seed: u64,
        bytes: u64,
        start: Time,
    ) -> Result<Vec<FlowSpec>, ScenarioError> {
        let name = w.collective.as_deref().ok_or_else(|| {
            self.err(
                &format!("{at}.collective"),
                "required for type = \"collective\"",
            )
        })?;
        let kind = match name {
            "ring_allreduce" => CollectiveKind::RingAllReduce,
            "reduce_scatter" => CollectiveKind::ReduceScatter,
            "all_gather" => CollectiveKind::AllGather,
            "ring_reference" => CollectiveKind::RingReference {
                group: w.group.unwrap_or(8),
            },
            "butterfly_allreduce" => CollectiveKind::Butterfly,
            "alltoall" => CollectiveKind::AllToAll {
                concurrency: w.concurrency.unwrap_or(u32::MAX),
            },
            "ps_allreduce" => CollectiveKind::ParameterServer,
            "allscatter" => CollectiveKind::AllScatter,
            "ring_step" => CollectiveKind::RingStep,
            other => {
                return Err(self.err(
                    &format!("{at}.collective"),
                    format!(
                        "unknown '{other}'; allowed: ring_allreduce, reduce_scatter, all_gather, \
                         ring_reference, butterfly_allreduce, alltoall, ps_allreduce, allscatter, \
                         ring_step"
                    ),
                ))
            }
        };
        let ranks = self.placement(w, at, topo)?;
        let spec = CollectiveSpec {
            kind,
            ranks,
            bytes,
            iterations: w.iterations.unwrap_or(1),
            compute_gap: w.compute_gap.map_or(0, |g| g.0),
            start,
            first_id: 1,
        };
        let mut rng = Rng::derive(seed, Stream::Workload, 3);
        collective_flows(&spec, &mut rng).map_err(|e| self.err(at, e))
    }

    /// Hosts of the collective's ranks.
    fn placement(
        &self,
        w: &WorkloadSection,
        at: &str,
        topo: &Topology,
    ) -> Result<Vec<u32>, ScenarioError> {
        let hosts = topo.hosts;
        let n = w.ranks.unwrap_or(hosts);
        if n < 2 || n > hosts {
            return Err(self.err(
                &format!("{at}.ranks"),
                format!("must be in 2..={hosts} (the topology's hosts)"),
            ));
        }
        let rack = |h: u32| topo.links[topo.host_uplink[h as usize] as usize].to;
        match &w.placement {
            None => Ok((0..n).collect()),
            Some(toml::Value::String(p)) if p == "rack_local" => Ok((0..n).collect()),
            Some(toml::Value::String(p)) if p == "spread" => {
                // Round robin over racks: rank r goes to the next rack in turn.
                let mut racks: Vec<(u32, Vec<u32>)> = Vec::new();
                for h in 0..hosts {
                    match racks.iter_mut().find(|(r, _)| *r == rack(h)) {
                        Some((_, v)) => v.push(h),
                        None => racks.push((rack(h), vec![h])),
                    }
                }
                let mut out = Vec::new();
                let mut slot = 0;
                while out.len() < n as usize {
                    for (_, members) in &racks {
                        if let Some(&h) = members.get(slot) {
                            if out.len() < n as usize {
                                out.push(h);
                            }
                        }
                    }
                    slot += 1;
                }
                Ok(out)
            }
            Some(toml::Value::Array(list)) => {
                let out: Option<Vec<u32>> = list
                    .iter()
                    .map(|v| v.as_integer().and_then(|h| u32::try_from(h).ok()))
                    .collect();
                let out = out
                    .filter(|o| o.iter().all(|&h| h < hosts))
                    .ok_or_else(|| {
                        self.err(
                            &format!("{at}.placement"),
                            format!("list hosts as numbers in 0..{hosts}"),
                        )
                    })?;
                if w.ranks.is_some_and(|r| r as usize != out.len()) {
                    return Err(self.err(
                        &format!("{at}.ranks"),
                        "differs from the number of hosts in placement",
                    ));
                }
                Ok(out)
            }
            Some(_) => Err(self.err(
                &format!("{at}.placement"),
                "write \"rack_local\", \"spread\" or a list of hosts",
            )),
        }
    }
}
