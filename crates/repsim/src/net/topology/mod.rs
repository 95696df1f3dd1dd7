//! Topologies as graphs: which nodes exist, which directed links join them, and the forwarding
//! tables and explicit paths computed from that graph.
//!
//! Nodes are numbered hosts first (`0..hosts`), then switches (`hosts + s`). Every directed link
//! has exactly one egress port (queue) at its upstream end, so "link" and "port" share one index.
//! A host may have several NICs (links out of it); its first one is the one it sends on unless a
//! source route says otherwise, and the switch it attaches to is its *edge switch*. Switches with
//! hosts attached are the edge switches; forwarding tables are indexed by (switch, destination
//! edge switch).
//!
//! One builder per family produces a [`Topology`]: [`FatTreeSpec`] (2 and 3 tiers,
//! oversubscription, bundles; also what `.topo` files describe), [`LeafSpineSpec`],
//! [`DragonflySpec`] and [`RailSpec`]. Builders only add switches and links; [`Topology::finish`]
//! derives the rest (adjacency, host attachment, forwarding), so every family routes by the same
//! computation: ECMP over shortest paths (see [`crate::net::forwarding`]).
use std::fmt;

use crate::engine::Time;
use crate::net::forwarding::{self, Forwarding};

pub mod builder;
pub mod dragonfly;
pub mod fat_tree;
pub mod leaf_spine;
pub mod partition;
pub mod rail;
pub mod topo_file;

pub use builder::{BuildError, FileReader, TopologyBuilder, TopologySpec};
pub use dragonfly::DragonflySpec;
pub use fat_tree::{FatTreeSpec, TierSpec};
pub use leaf_spine::LeafSpineSpec;
pub use partition::{PartitionRule, Partitioning};
pub use rail::RailSpec;

/// "No such node / port / edge switch".
pub const NONE: u32 = u32::MAX;

/// One switch.
#[derive(Clone, Debug, PartialEq)]
pub struct Switch {
    /// Name prefix of its kind (`tor`, `agg`, `core`, `leaf`, `spine`, `sw`, `rail`, `nic`,
    /// `nvl`); its name is the prefix followed by `index`.
    pub prefix: &'static str,
    /// Index among the switches of its kind.
    pub index: u32,
    /// Level above the hosts: 1 for switches hosts attach to (ToR, leaf, Dragonfly router, rail
    /// NIC switch), 2 for the next tier (agg, spine, rail, NVLink), 3 for cores.
    pub level: u8,
    /// Group it belongs to (fat-tree pod, Dragonfly group, rail cluster), or [`NONE`].
    pub group: u32,
    /// Forwarding latency from ingress to egress queue.
    pub latency: Time,
}

/// One directed link and the egress queue feeding it.
#[derive(Clone, Debug, PartialEq)]
pub struct Link {
    /// Upstream node (host or switch id).
    pub from: u32,
    /// Downstream node.
    pub to: u32,
    /// Bit rate.
    pub rate_bps: u64,
    /// Propagation latency.
    pub latency: Time,
    /// Multiplier applied to the queue's buffer and ECN thresholds (1.0 normally).
    pub buffer_scale: f64,
}

/// Which builder made a topology, with its headline numbers (for messages).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Family {
    /// A 2- or 3-tier fat tree.
    FatTree {
        /// Number of tiers.
        tiers: u32,
    },
    /// A two-level leaf-spine fabric.
    LeafSpine,
    /// A Dragonfly.
    Dragonfly {
        /// Groups.
        groups: u32,
        /// Routers per group.
        routers: u32,
    },
    /// A rail-optimised cluster.
    Rail {
        /// Rails (hosts per cluster).
        rails: u32,
        /// Clusters (hosts per rail).
        clusters: u32,
    },
    /// Anything else, built link by link.
    Custom,
}

/// Why a topology description cannot be built.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct TopologyError(pub String);

pub(crate) fn bad<T>(msg: impl Into<String>) -> Result<T, TopologyError> {
    Err(TopologyError(msg.into()))
}

/// Most hosts a topology may have (about a million).
pub const MAX_HOSTS: u64 = 1 << 20;
/// Most switches a topology may have.
pub const MAX_SWITCHES: u64 = 1 << 20;
/// Most directed links (ports) a topology may have (about 16 million).
pub const MAX_LINKS: u64 = 1 << 24;

/// Most forwarding-table entries (switches x edge switches; 4 bytes each, 1 GiB).
pub const MAX_FORWARDING_ENTRIES: u64 = 1 << 28;

/// Rejects a description whose counts (computed in `u64` by the builder, before any `u32`
/// product can wrap) exceed [`MAX_HOSTS`], [`MAX_SWITCHES`] or [`MAX_LINKS`]: a typo such as
/// an extra zero must not exhaust memory before the run says anything.
pub(crate) fn check_size(hosts: u64, switches: u64, links: u64) -> Result<(), TopologyError> {
    for (what, n, max) in [
        ("hosts", hosts, MAX_HOSTS),
        ("switches", switches, MAX_SWITCHES),
        ("directed links", links, MAX_LINKS),
    ] {
        if n > max {
            return bad(format!(
                "{n} {what} is more than this simulator builds (at most {max})"
            ));
        }
    }
    Ok(())
}

/// A complete network: nodes, links, adjacency and forwarding tables.
#[derive(Clone, Debug)]
pub struct Topology {
    /// Number of hosts (node ids `0..hosts`).
    pub hosts: u32,
    /// Switches (node id = `hosts + index`).
    pub switches: Vec<Switch>,
    /// Directed links (index = port id).
    pub links: Vec<Link>,
    /// The builder.
    pub family: Family,
    /// First NIC (link out of the host) of each host: where it sends by default.
    pub host_uplink: Vec<u32>,
    /// The link from each host's edge switch down to its first NIC.
    pub host_downlink: Vec<u32>,
    /// Edge switch (switch index) each host's first NIC attaches to.
    pub host_edge: Vec<u32>,
    /// Compact index of each switch among the edge switches, or [`NONE`].
    pub edge_index: Vec<u32>,
    /// Edge switches (switch indices) in index order.
    pub edges: Vec<u32>,
    /// ECMP forwarding tables (shortest paths, recomputed on reconvergence).
    pub routes: Forwarding,
    /// Out-going links of every node: `out_links[out_start[n]..out_start[n + 1]]`.
    out_start: Vec<u32>,
    out_links: Vec<u32>,
}

impl Topology {
    /// Bytes its node, link and adjacency lists hold on the heap (forwarding tables apart).
    pub fn heap_bytes(&self) -> usize {
        use std::mem::size_of;
        self.switches.capacity() * size_of::<Switch>()
            + self.links.capacity() * size_of::<Link>()
            + (self.host_uplink.capacity()
                + self.host_downlink.capacity()
                + self.host_edge.capacity()
                + self.edge_index.capacity()
                + self.edges.capacity()
                + self.out_start.capacity()
                + self.out_links.capacity())
                * size_of::<u32>()
    }

    /// An empty network of `hosts` hosts; add switches and links, then call [`Self::finish`].
    pub fn empty(hosts: u32, family: Family) -> Self {
        Topology {
            hosts,
            switches: Vec::new(),
            links: Vec::new(),
            family,
            host_uplink: Vec::new(),
            host_downlink: Vec::new(),
            host_edge: Vec::new(),
            edge_index: Vec::new(),
            edges: Vec::new(),
            routes: Forwarding::default(),
            out_start: Vec::new(),
            out_links: Vec::new(),
        }
    }

    /// Adds a switch of no group; returns its node id.
    pub fn add_switch(
        &mut self,
        prefix: &'static str,
        index: u32,
        level: u8,
        latency: Time,
    ) -> u32 {
        self.add_switch_in(prefix, index, level, NONE, latency)
    }

    /// Adds a switch belonging to `group`; returns its node id.
    pub fn add_switch_in(
        &mut self,
        prefix: &'static str,
        index: u32,
        level: u8,
        group: u32,
        latency: Time,
    ) -> u32 {
        self.switches.push(Switch {
            prefix,
            index,
            level,
            group,
            latency,
        });
        self.hosts + self.switches.len() as u32 - 1
    }

    /// Adds one directed link; returns its id (= its egress port).
    pub fn add_link(&mut self, from: u32, to: u32, rate_bps: u64, latency: Time) -> u32 {
        self.links.push(Link {
            from,
            to,
            rate_bps,
            latency,
            buffer_scale: 1.0,
        });
        self.links.len() as u32 - 1
    }

    /// Adds both directions of a cable (`a -> b` first); returns their ids.
    pub fn add_cable(&mut self, a: u32, b: u32, rate_bps: u64, latency: Time) -> (u32, u32) {
        (
            self.add_link(a, b, rate_bps, latency),
            self.add_link(b, a, rate_bps, latency),
        )
    }

    /// Derives adjacency, host attachment and forwarding tables once every switch and link is
    /// in place; checks that every host has a NIC and every pair of hosts is connected.
    pub fn finish(mut self) -> Result<Self, TopologyError> {
        check_size(
            u64::from(self.hosts),
            self.switches.len() as u64,
            self.links.len() as u64,
        )?;
        let nodes = (self.hosts + self.switches.len() as u32) as usize;
        for (i, l) in self.links.iter().enumerate() {
            if l.from as usize >= nodes || l.to as usize >= nodes || l.from == l.to {
                return bad(format!(
                    "link {i} joins nodes {} and {} (there are {nodes} nodes)",
                    l.from, l.to
                ));
            }
            if l.rate_bps == 0 {
                return bad(format!("link {i} has no bit rate"));
            }
            if l.from < self.hosts && l.to < self.hosts {
                return bad(format!("link {i} joins two hosts directly"));
            }
        }
        // Adjacency, in link order.
        let mut count = vec![0u32; nodes + 1];
        for l in &self.links {
            count[l.from as usize + 1] += 1;
        }
        for i in 1..=nodes {
            count[i] += count[i - 1];
        }
        let mut fill = count.clone();
        let mut out = vec![0u32; self.links.len()];
        for (i, l) in self.links.iter().enumerate() {
            out[fill[l.from as usize] as usize] = i as u32;
            fill[l.from as usize] += 1;
        }
        self.out_start = count;
        self.out_links = out;
        // Hosts: first NIC, edge switch and the way back down.
        self.host_uplink = Vec::with_capacity(self.hosts as usize);
        self.host_edge = Vec::with_capacity(self.hosts as usize);
        self.host_downlink = Vec::with_capacity(self.hosts as usize);
        for h in 0..self.hosts {
            let Some(&nic) = self.out_of(h).first() else {
                return bad(format!("host {h} has no link"));
            };
            self.host_uplink.push(nic);
            self.host_edge
                .push(self.links[nic as usize].to.saturating_sub(self.hosts));
        }
        // The way back down: the first link (in link order, as the adjacency lists are) from
        // each host's edge switch to it, found in one pass over the links (searching the edge
        // switch's list per host is quadratic in the hosts per switch).
        self.host_downlink = vec![NONE; self.hosts as usize];
        for (i, l) in self.links.iter().enumerate() {
            let h = l.to as usize;
            if l.to < self.hosts
                && self.host_downlink[h] == NONE
                && l.from == self.host_edge[h] + self.hosts
            {
                self.host_downlink[h] = i as u32;
            }
        }
        if let Some(h) = self.host_downlink.iter().position(|&d| d == NONE) {
            let edge = self.host_edge[h] + self.hosts;
            return bad(format!(
                "no link from {} back to host {h}",
                self.node_name(edge)
            ));
        }
        self.edge_index = vec![NONE; self.switches.len()];
        for &e in &self.host_edge {
            self.edge_index[e as usize] = 0;
        }
        self.edges = (0..self.switches.len() as u32)
            .filter(|&s| self.edge_index[s as usize] == 0)
            .collect();
        for (i, &e) in self.edges.iter().enumerate() {
            self.edge_index[e as usize] = i as u32;
        }
        // The forwarding table has an entry per (switch, edge switch): bound it before it is
        // allocated.
        let entries = self.switches.len() as u64 * self.edges.len() as u64;
        if entries > MAX_FORWARDING_ENTRIES {
            return bad(format!(
                "{} switches x {} edge switches is {entries} forwarding entries, more than this \
                 simulator builds (at most {MAX_FORWARDING_ENTRIES})",
                self.switches.len(),
                self.edges.len()
            ));
        }
        self.routes = forwarding::shortest_paths(&self, &vec![true; self.links.len()]);
        if let Some((a, b)) = forwarding::first_disconnected(&self, &self.routes) {
            return bad(format!(
                "{} cannot reach {}: the topology is not connected",
                self.node_name(self.switch_node(a)),
                self.node_name(self.switch_node(b))
            ));
        }
        Ok(self)
    }

    /// Links leaving `node`, in link order.
    #[inline]
    pub fn out_of(&self, node: u32) -> &[u32] {
        let (a, b) = (
            self.out_start[node as usize] as usize,
            self.out_start[node as usize + 1] as usize,
        );
        &self.out_links[a..b]
    }

    /// Every NIC (link out of the host) of host `h`; the first is its default.
    pub fn nics(&self, h: u32) -> &[u32] {
        self.out_of(h)
    }

    /// Number of nodes (hosts and switches).
    pub fn nodes(&self) -> u32 {
        self.hosts + self.switches.len() as u32
    }

    /// Number of edge switches (switches with hosts attached).
    pub fn edge_count(&self) -> u32 {
        self.edges.len() as u32
    }

    /// Node id of switch `s`.
    #[inline]
    pub fn switch_node(&self, s: u32) -> u32 {
        self.hosts + s
    }

    /// The switch at node `node`, if it is one.
    #[inline]
    pub fn switch_at(&self, node: u32) -> Option<&Switch> {
        node.checked_sub(self.hosts)
            .and_then(|s| self.switches.get(s as usize))
    }

    /// Level of a node: 0 for hosts, the switch's level otherwise.
    pub fn level(&self, node: u32) -> u8 {
        self.switch_at(node).map_or(0, |s| s.level)
    }

    /// Name of a node: `host5`, `tor0`, `agg3`, `core12`, `sw7`, `rail2`, ...
    pub fn node_name(&self, node: u32) -> String {
        match self.switch_at(node) {
            Some(s) => format!("{}{}", s.prefix, s.index),
            None => format!("host{node}"),
        }
    }

    /// Name of a link: `tor0->agg1`.
    pub fn link_name(&self, link: u32) -> String {
        let l = &self.links[link as usize];
        format!("{}->{}", self.node_name(l.from), self.node_name(l.to))
    }

    /// Resolves a node name (`host3`, `tor0`, `agg1`, `spine1`, `core0`, `sw4`, ...). The
    /// fat-tree and leaf-spine names are interchangeable: `leaf` = `tor`, `spine` = `agg`.
    pub fn node_by_name(&self, name: &str) -> Option<u32> {
        let name = name.trim().to_ascii_lowercase();
        let split = name.find(|c: char| c.is_ascii_digit())?;
        let (prefix, idx) = name.split_at(split);
        let idx: u32 = idx.parse().ok()?;
        if prefix == "host" {
            return (idx < self.hosts).then_some(idx);
        }
        let same = |a: &str, b: &str| {
            a == b
                || matches!(
                    (a, b),
                    ("tor", "leaf") | ("leaf", "tor") | ("agg", "spine") | ("spine", "agg")
                )
        };
        self.switches
            .iter()
            .position(|s| same(s.prefix, prefix) && s.index == idx)
            .map(|s| self.hosts + s as u32)
    }

    /// All links from `from` to `to` (several with bundles).
    pub fn links_between(&self, from: u32, to: u32) -> Vec<u32> {
        self.out_of(from)
            .iter()
            .copied()
            .filter(|&l| self.links[l as usize].to == to)
            .collect()
    }

    /// The first link in the opposite direction of `link` (the other half of its cable).
    pub fn reverse(&self, link: u32) -> Option<u32> {
        let l = &self.links[link as usize];
        self.links_between(l.to, l.from).into_iter().next()
    }

    /// Resolves `a->b` to the links it names.
    pub fn links_by_name(&self, spec: &str) -> Result<Vec<u32>, TopologyError> {
        let Some((a, b)) = spec.split_once("->") else {
            return bad(format!(
                "'{spec}' is not a link name; write it as 'tor0->agg1'"
            ));
        };
        let from = self.node_by_name(a).ok_or_else(|| {
            TopologyError(format!("no node named '{}' in this topology", a.trim()))
        })?;
        let to = self.node_by_name(b).ok_or_else(|| {
            TopologyError(format!("no node named '{}' in this topology", b.trim()))
        })?;
        let l = self.links_between(from, to);
        if l.is_empty() {
            return bad(format!(
                "'{}' and '{}' are not directly linked",
                a.trim(),
                b.trim()
            ));
        }
        Ok(l)
    }

    /// The candidate egress ports at switch `s` for a packet to node `dst` (a host, or an edge
    /// switch); empty when no route is left. For other switches, use
    /// [`crate::net::forwarding::next_hops_to_switch`].
    #[inline]
    pub fn candidates(&self, s: u32, dst: u32) -> &[u32] {
        if dst < self.hosts {
            self.candidates_to_host(s, dst)
        } else {
            self.routes
                .group(s, self.edge_index[(dst - self.hosts) as usize])
        }
    }

    /// [`Self::candidates`] for a host destination.
    #[inline(always)]
    pub fn candidates_to_host(&self, s: u32, dst: u32) -> &[u32] {
        let edge = self.host_edge[dst as usize];
        if edge == s {
            return std::slice::from_ref(&self.host_downlink[dst as usize]);
        }
        self.routes
            .group_elsewhere(s, self.edge_index[edge as usize])
    }

    /// The path (list of links) a packet from host `src` to host `dst` takes when every switch
    /// picks its first candidate (shortest paths, so its length is the minimal one).
    pub fn first_path(&self, src: u32, dst: u32) -> Vec<u32> {
        let mut path = vec![self.host_uplink[src as usize]];
        let mut node = self.links[path[0] as usize].to;
        while node != dst {
            // After routing reconvergence a switch may have no route left.
            let Some(&l) = self.candidates(node - self.hosts, dst).first() else {
                break;
            };
            path.push(l);
            node = self.links[l as usize].to;
            if path.len() > self.nodes() as usize {
                break;
            }
        }
        path
    }

    /// Number of switches of each name prefix, in order of first appearance.
    pub fn switch_counts(&self) -> Vec<(&'static str, usize)> {
        let mut out: Vec<(&'static str, usize)> = Vec::new();
        for s in &self.switches {
            match out.iter_mut().find(|(p, _)| *p == s.prefix) {
                Some(e) => e.1 += 1,
                None => out.push((s.prefix, 1)),
            }
        }
        out
    }
}

impl fmt::Display for Topology {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.family {
            Family::FatTree { tiers } => write!(f, "{tiers}-tier fat tree")?,
            Family::LeafSpine => write!(f, "leaf-spine")?,
            Family::Dragonfly { groups, routers } => {
                write!(f, "Dragonfly ({groups} groups x {routers} routers)")?
            }
            Family::Rail { rails, clusters } => write!(
                f,
                "rail-optimised cluster ({rails} rails x {clusters} clusters)"
            )?,
            Family::Custom => write!(f, "network")?,
        }
        write!(f, ": {} hosts", self.hosts)?;
        for (prefix, n) in self.switch_counts() {
            write!(f, ", {n} {prefix}")?;
        }
        write!(f, ", {} links", self.links.len())
    }
}
