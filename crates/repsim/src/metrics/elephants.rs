//! Elephant flows per link over time, whatever the load balancer (`[metrics] elephants`): the
//! collision plots of Reunion Fig. 3, where LetFlow, CONGA and ConWeave leave several elephants
//! on one path.
//!
//! An elephant is a flow whose size is at least `min_size` (the workload's truth, not a
//! sketch's estimate, so every scheme is judged by the same rule). Every `every`, each link
//! between two switches reports how many distinct elephants had a data packet arrive over it
//! during that period; links without elephants report nothing. Reunion's own count (its
//! sketch's elephants, at its interval ends) answers the same question from the scheme's view;
//! with `[metrics] elephants` set, this count replaces it in `elephants.csv` for every run.
//!
//! Cost: nothing when off (one `Option` test per arriving packet); when on, one flow lookup per
//! data packet arriving at a switch, and for elephants a scan of the few elephants already
//! seen on that link in the period.
use serde::{Deserialize, Serialize};

use crate::engine::time::MS;
use crate::engine::Time;
use crate::net::Topology;
use crate::routing::LinkSample;
use crate::units::{Size, SizeQ, TimeQ};

/// `[metrics] elephants`: how elephants per link are sampled.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ElephantsConfig {
    /// Sampling period (default 1 ms).
    #[serde(default = "default_every")]
    pub every: TimeQ,
    /// Smallest flow that counts as an elephant (default 10 MB).
    #[serde(default = "default_min_size")]
    pub min_size: SizeQ,
}

fn default_every() -> TimeQ {
    TimeQ(MS)
}

fn default_min_size() -> SizeQ {
    SizeQ(Size::Bytes(10_000_000))
}

impl ElephantsConfig {
    /// The rule in picoseconds and bytes, for packets of `mtu` bytes.
    pub fn rule(&self, mtu: u32) -> ElephantsRule {
        ElephantsRule {
            every: self.every.0,
            min_bytes: self.min_size.0.bytes(mtu),
        }
    }
}

impl Default for ElephantsConfig {
    fn default() -> Self {
        ElephantsConfig {
            every: default_every(),
            min_size: default_min_size(),
        }
    }
}

/// The counting rule, resolved to simulation units ([`ElephantsConfig::rule`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ElephantsRule {
    /// Sampling period (positive).
    pub every: Time,
    /// Smallest flow, in bytes, that counts as an elephant.
    pub min_bytes: u64,
}

/// Counts distinct elephants per switch-to-switch link and period.
pub struct ElephantCounter {
    config: ElephantsRule,
    /// Whether each link joins two switches (only those are counted).
    fabric_link: Vec<bool>,
    /// Index of the period being counted.
    period: u64,
    /// Elephants seen on each link in the current period (distinct flow ids).
    seen: Vec<Vec<u32>>,
    /// Links with an entry in `seen` (first-seen order).
    touched: Vec<u32>,
    /// Finished periods' counts, in time order, by link within a period.
    samples: Vec<LinkSample>,
}

impl ElephantCounter {
    /// A counter over `topo`'s switch-to-switch links.
    pub fn new(config: ElephantsRule, topo: &Topology) -> Self {
        assert!(config.every > 0, "a positive sampling period");
        ElephantCounter {
            config,
            fabric_link: topo
                .links
                .iter()
                .map(|l| l.from >= topo.hosts && l.to >= topo.hosts)
                .collect(),
            period: 0,
            seen: vec![Vec::new(); topo.links.len()],
            touched: Vec::new(),
            samples: Vec::new(),
        }
    }

    /// True if a flow of `bytes` is an elephant.
    #[inline]
    pub fn is_elephant(&self, bytes: u64) -> bool {
        bytes >= self.config.min_bytes
    }

    /// Whether `link` joins two switches.
    #[inline]
    pub fn counts_link(&self, link: u32) -> bool {
        self.fabric_link[link as usize]
    }

    /// A data packet of elephant `flow` arrived over `link` at `now` (time never decreases).
    pub fn on_elephant_packet(&mut self, now: Time, link: u32, flow: u32) {
        let period = now / self.config.every;
        if period != self.period {
            self.close_period();
            self.period = period;
        }
        let on_link = &mut self.seen[link as usize];
        if on_link.contains(&flow) {
            return;
        }
        if on_link.is_empty() {
            self.touched.push(link);
        }
        on_link.push(flow);
    }

    /// The current period's counts so far, by link, stamped at the period's end.
    fn current_period(&self) -> Vec<LinkSample> {
        let end = (self.period + 1) * self.config.every;
        let mut rows: Vec<LinkSample> = self
            .touched
            .iter()
            .map(|&link| LinkSample {
                time: end,
                link,
                elephants: self.seen[link as usize].len() as u32,
            })
            .collect();
        rows.sort_unstable_by_key(|r| r.link);
        rows
    }

    /// Reports the current period's counts and starts an empty one (once per period).
    fn close_period(&mut self) {
        let rows = self.current_period();
        self.samples.extend_from_slice(&rows);
        for &link in &self.touched {
            self.seen[link as usize].clear();
        }
        self.touched.clear();
    }

    /// Takes in the counts of `other`, which counted the other links of the same run (a
    /// partition of a run split over threads: each counts the links into its nodes), once
    /// both have stopped counting: the rows come out as one counter's, by time, then link.
    pub fn absorb(&mut self, other: &ElephantCounter) {
        let mut all = self.samples();
        all.extend(other.samples());
        all.sort_by_key(|r| (r.time, r.link));
        for &link in &self.touched {
            self.seen[link as usize].clear();
        }
        self.touched.clear();
        self.samples = all;
    }

    /// Every finished period's counts, then the current period's so far.
    pub fn samples(&self) -> Vec<LinkSample> {
        let mut all = self.samples.clone();
        all.extend(self.current_period());
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::time::US;
    use crate::net::LeafSpineSpec;

    fn counter(every: Time) -> (ElephantCounter, Topology) {
        let topo = LeafSpineSpec::at_100g(2, 2, 2)
            .build()
            .expect("a valid fabric");
        let config = ElephantsRule {
            every,
            min_bytes: 1000,
        };
        (ElephantCounter::new(config, &topo), topo)
    }

    #[test]
    fn counts_distinct_elephants_per_link_and_period() {
        let (mut c, topo) = counter(100 * US);
        let fabric: Vec<u32> = (0..topo.links.len() as u32)
            .filter(|&l| c.counts_link(l))
            .collect();
        let host_link = topo.host_uplink[0];
        assert!(!c.counts_link(host_link), "host links are not counted");
        assert_eq!(fabric.len(), 8, "2 leaves x 2 spines, both ways");
        let (a, b) = (fabric[3], fabric[1]);
        // Period 0: flows 7 and 9 on a (7 twice), flow 7 on b.
        c.on_elephant_packet(10 * US, a, 7);
        c.on_elephant_packet(20 * US, a, 9);
        c.on_elephant_packet(30 * US, a, 7);
        c.on_elephant_packet(40 * US, b, 7);
        // Period 2 (period 1 had nothing): flow 9 on a.
        c.on_elephant_packet(250 * US, a, 9);
        let s = c.samples();
        let row = |time, link, elephants| LinkSample {
            time,
            link,
            elephants,
        };
        assert_eq!(
            s,
            vec![
                row(100 * US, b, 1),
                row(100 * US, a, 2),
                row(300 * US, a, 1)
            ]
        );
        assert!(c.is_elephant(1000) && !c.is_elephant(999));
    }

    #[test]
    fn counters_of_disjoint_links_absorb_into_one_counters_rows() {
        let (mut whole, topo) = counter(100 * US);
        let fabric: Vec<u32> = (0..topo.links.len() as u32)
            .filter(|&l| whole.counts_link(l))
            .collect();
        let (a, b) = (fabric[1], fabric[3]);
        let packets = [
            (10, a, 7),
            (20, b, 7),
            (150, b, 9),
            (160, b, 7),
            (420, a, 9),
        ];
        let (mut part_a, _) = counter(100 * US);
        let (mut part_b, _) = counter(100 * US);
        for (t, link, flow) in packets {
            whole.on_elephant_packet(t * US, link, flow);
            let part = if link == a { &mut part_a } else { &mut part_b };
            part.on_elephant_packet(t * US, link, flow);
        }
        part_a.absorb(&part_b);
        assert_eq!(part_a.samples(), whole.samples());
        assert_eq!(part_a.samples().len(), 4);
    }
}
