//! Dragonfly: groups of routers, every group a full mesh, groups joined by global links.
//!
//! Group g holds routers `g * a .. g * a + a` (named `sw<i>`), each with `p` hosts. Every router
//! has `h` global ports; the j-th global port of group g (port `j = l * h + k` of router l)
//! leads to group `g + 1 + (j mod (G - 1))` (mod G), and in round `r = j div (G - 1)` pairs with
//! the port of that group that leads back, so `a * h` must be a multiple of `G - 1` and every
//! pair of groups gets `a * h / (G - 1)` global links. With `a * h = G - 1` this is the
//! "consecutive" arrangement of the LAPS topology (9 groups x 4 routers x 4 hosts, 2 global
//! links per router): router (g, l) reaches groups g + 2l + 1 and g + 2l + 2, and the link to
//! group g lands in group t on its router ((g - t - 1) mod 9) div 2.
//!
//! Links are created host by host (up, down), then group by group the local mesh (router pairs
//! l1 < l2, one way then back), then the global cables from the lower-numbered group.
use serde::{Deserialize, Serialize};

use super::builder::{positive, positive_rate, BuildError, FileReader, TopologyBuilder};
use super::{bad, check_size, Family, Topology, TopologyError};
use crate::engine::time::US;
use crate::engine::Time;
use crate::units::{RateQ, TimeQ};

/// A Dragonfly.
#[derive(Clone, Debug, PartialEq)]
pub struct DragonflySpec {
    /// Groups (G).
    pub groups: u32,
    /// Routers per group (a).
    pub routers_per_group: u32,
    /// Hosts per router (p).
    pub hosts_per_router: u32,
    /// Global links per router (h).
    pub global_links_per_router: u32,
    /// Host-router link speed.
    pub host_rate_bps: u64,
    /// Speed of the links inside a group.
    pub local_rate_bps: u64,
    /// Speed of the links between groups.
    pub global_rate_bps: u64,
    /// Propagation latency of host and local links.
    pub link_latency: Time,
    /// Propagation latency of global links.
    pub global_latency: Time,
    /// Forwarding latency of every router.
    pub switch_latency: Time,
}

impl DragonflySpec {
    /// The LAPS paper's Dragonfly: 9 groups x 4 routers x 4 hosts, 2 global links per router,
    /// every link 100 Gb/s and 1 us.
    pub fn example() -> Self {
        DragonflySpec {
            groups: 9,
            routers_per_group: 4,
            hosts_per_router: 4,
            global_links_per_router: 2,
            host_rate_bps: 100_000_000_000,
            local_rate_bps: 100_000_000_000,
            global_rate_bps: 100_000_000_000,
            link_latency: crate::engine::time::US,
            global_latency: crate::engine::time::US,
            switch_latency: 0,
        }
    }

    /// Builds the Dragonfly.
    pub fn build(&self) -> Result<Topology, TopologyError> {
        let (g, a, p, h) = (
            self.groups,
            self.routers_per_group,
            self.hosts_per_router,
            self.global_links_per_router,
        );
        if g < 2 || a == 0 || p == 0 || h == 0 {
            return bad("a Dragonfly needs at least 2 groups and positive routers_per_group, hosts_per_router and global_links_per_router");
        }
        let routers64 = u64::from(g) * u64::from(a);
        let hosts64 = routers64 * u64::from(p);
        let links = 2 * (hosts64 + routers64 * (u64::from(a) + u64::from(h)));
        check_size(hosts64, routers64, links)?;
        if !(a * h).is_multiple_of(g - 1) {
            return bad(format!(
                "routers_per_group x global_links_per_router ({}) must be a multiple of groups - 1 ({}) so that every pair of groups gets the same number of global links",
                a * h,
                g - 1
            ));
        }
        let routers = g * a;
        let hosts = routers * p;
        let mut t = Topology::empty(
            hosts,
            Family::Dragonfly {
                groups: g,
                routers: a,
            },
        );
        for r in 0..routers {
            t.add_switch_in("sw", r, 1, r / a, self.switch_latency);
        }
        let router = |group: u32, local: u32| hosts + group * a + local;
        for host in 0..hosts {
            t.add_cable(
                host,
                hosts + host / p,
                self.host_rate_bps,
                self.link_latency,
            );
        }
        for group in 0..g {
            for l1 in 0..a {
                for l2 in l1 + 1..a {
                    t.add_cable(
                        router(group, l1),
                        router(group, l2),
                        self.local_rate_bps,
                        self.link_latency,
                    );
                }
            }
        }
        for group in 0..g {
            for j in 0..a * h {
                let (round, offset) = (j / (g - 1), j % (g - 1));
                let to = (group + 1 + offset) % g;
                if to < group {
                    continue; // created from the lower-numbered group
                }
                // The port of group `to` that leads back to `group`, in the same round.
                let back = round * (g - 1) + (group + g - to - 1) % g;
                t.add_cable(
                    router(group, j / h),
                    router(to, back / h),
                    self.global_rate_bps,
                    self.global_latency,
                );
            }
        }
        t.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn laps_dragonfly_matches_the_reference_wiring() {
        let t = DragonflySpec::example().build().unwrap();
        assert_eq!(t.hosts, 144);
        assert_eq!(t.switches.len(), 36);
        // 144 host cables, 9 x 6 local cables, 36 global cables, each two links.
        assert_eq!(t.links.len(), 2 * (144 + 54 + 36));
        let sw = |group: u32, local: u32| t.hosts + group * 4 + local;
        for group in 0..9 {
            for local in 0..4 {
                // 4 hosts + 3 local + 2 global ports.
                assert_eq!(t.out_of(sw(group, local)).len(), 9);
                for k in 1..=2 {
                    let far_group = (group + 2 * local + k) % 9;
                    let far_local = ((group + 9 - far_group - 1) % 9) / 2;
                    assert_eq!(
                        t.links_between(sw(group, local), sw(far_group, far_local))
                            .len(),
                        1,
                        "router ({group},{local}) to group {far_group}"
                    );
                }
            }
        }
        // Exactly one cable between every pair of groups.
        for x in 0..9u32 {
            for y in 0..9u32 {
                if x == y {
                    continue;
                }
                let n: usize = (0..4)
                    .flat_map(|i| (0..4).map(move |j| (i, j)))
                    .map(|(i, j)| t.links_between(sw(x, i), sw(y, j)).len())
                    .sum();
                assert_eq!(n, 1, "groups {x} and {y}");
            }
        }
        // Minimal routes: intra-group 1 hop, inter-group at most 3 switch hops.
        assert_eq!(t.first_path(0, 4).len(), 3);
        assert!(t.first_path(0, 143).len() <= 5);
    }

    #[test]
    fn bad_global_link_counts_are_rejected() {
        let mut d = DragonflySpec::example();
        d.global_links_per_router = 3;
        let e = d.build().unwrap_err().to_string();
        assert!(e.contains("multiple of groups - 1"), "{e}");
        // Twice the links: two cables between every pair of groups.
        d.global_links_per_router = 4;
        let t = d.build().unwrap();
        assert_eq!(t.links.len(), 2 * (144 + 54 + 72));
    }
}

/// `[topology] type = "dragonfly"` (defaults: the LAPS paper's 9 x 4 x 4 at 100 Gb/s).
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct DragonflyConfig {
    /// Groups.
    pub groups: u32,
    /// Routers per group.
    pub routers_per_group: u32,
    /// Hosts per router.
    pub hosts_per_router: u32,
    /// Global links per router (routers x this must be a multiple of groups - 1).
    pub global_links_per_router: u32,
    /// Speed of host and local links.
    pub link_speed: RateQ,
    /// Speed of global links (default: `link_speed`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub global_speed: Option<RateQ>,
    /// Propagation latency of host and local links.
    pub link_latency: TimeQ,
    /// Propagation latency of global links (default: `link_latency`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub global_latency: Option<TimeQ>,
    /// Forwarding latency of every router.
    pub switch_latency: TimeQ,
}

impl Default for DragonflyConfig {
    fn default() -> Self {
        DragonflyConfig {
            groups: 9,
            routers_per_group: 4,
            hosts_per_router: 4,
            global_links_per_router: 2,
            link_speed: RateQ(100_000_000_000),
            global_speed: None,
            link_latency: TimeQ(US),
            global_latency: None,
            switch_latency: TimeQ(0),
        }
    }
}

impl TopologyBuilder for DragonflyConfig {
    fn build(&self, _files: &FileReader) -> Result<Topology, BuildError> {
        let spec = DragonflySpec {
            groups: self.groups,
            routers_per_group: self.routers_per_group,
            hosts_per_router: self.hosts_per_router,
            global_links_per_router: self.global_links_per_router,
            host_rate_bps: positive_rate(self.link_speed, "link_speed")?,
            local_rate_bps: positive_rate(self.link_speed, "link_speed")?,
            global_rate_bps: positive_rate(
                self.global_speed.unwrap_or(self.link_speed),
                "global_speed",
            )?,
            link_latency: positive(self.link_latency, "link_latency")?,
            global_latency: positive(
                self.global_latency.unwrap_or(self.link_latency),
                "global_latency",
            )?,
            switch_latency: self.switch_latency.0,
        };
        Ok(spec.build()?)
    }

    fn resolved(&self) -> Self {
        let mut c = self.clone();
        c.global_speed.get_or_insert(c.link_speed);
        c.global_latency.get_or_insert(c.link_latency);
        c
    }
}
