//! Opt-in time-series collectors: what the network did, bucket by bucket.
//!
//! A [`Collector`] is attached to a [`crate::Simulation`] with
//! [`crate::Simulation::enable_collection`]. When none is attached the simulation pays one
//! predictable branch per hook. When one is attached, every hook is a few integer operations on
//! a flat `Vec<Cell>` indexed by `bucket * ports + slot`, grown as simulated time advances; no
//! allocation per packet, no hashing.
//!
//! Definitions (the column schema is documented in `docs/output-schema.md`):
//! * bucket `b` covers simulated time `[b * bucket, (b + 1) * bucket)`;
//! * `tx_bytes` / `tx_packets`: wire bytes (headers included) and packets of every kind put on
//!   the link in that bucket, attributed to the bucket in which serialization starts;
//! * drops, trims: data packets lost / trimmed at the port's queue on arrival;
//! * ECN marks: data packets marked when they left the queue (marking happens at dequeue);
//! * queue samples: one per *data packet arriving* at the port's queue, taken before the
//!   admission decision (as the reference simulator's `queueSize` files do): the data-lane
//!   occupancy in bytes, including the data packet still being serialized. `q_above_kmin` counts
//!   samples strictly above the port's ECN Kmin; `q_max` is the largest sample and `q_sum` their
//!   sum (mean = `q_sum / q_samples`).
//! * congestion window: per flow, the window after the first ACK or NACK that arrives in each
//!   bucket (at most one sample per flow and bucket).
use serde::{Deserialize, Serialize};

use crate::engine::time::US;
use crate::engine::Time;
use crate::net::Topology;
use crate::units::TimeQ;

/// Default bucket width: 20 us, as in the REPS paper's microscopic figures.
pub const DEFAULT_BUCKET: Time = 20 * US;

const NONE: u32 = u32::MAX;

/// Which ports to collect.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PortSelection {
    /// Every port (switch egress ports and host NIC uplinks).
    All,
    /// The egress ports of these nodes (`tor0`, `agg3`, `core1`, `host5`).
    Nodes(Vec<String>),
}

/// What to collect: `[collect]` as a scenario or a library user writes it (`switches = "all"`
/// or a list of node names, `bucket`, `queues`, `cwnd`; absent keys take their defaults).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "CollectTable", into = "CollectTable")]
pub struct CollectConfig {
    /// Bucket width.
    pub bucket: Time,
    /// Ports whose counters and queue samples are kept per bucket.
    pub ports: PortSelection,
    /// Keep queue occupancy samples (otherwise only byte, packet, drop, trim and mark counts).
    pub queues: bool,
    /// Keep a congestion-window trace per flow.
    pub cwnd: bool,
}

impl CollectConfig {
    /// Everything, for every port, with the default bucket.
    pub fn all() -> Self {
        CollectConfig {
            bucket: DEFAULT_BUCKET,
            ports: PortSelection::All,
            queues: true,
            cwnd: true,
        }
    }

    /// The link ids this selection names in `topo`, in link order, after checking the whole
    /// configuration (`[collect]` fields in the error).
    pub fn check(&self, topo: &Topology) -> Result<Vec<u32>, crate::error::ConfigError> {
        use crate::error::ConfigError;
        if self.bucket == 0 {
            return Err(ConfigError::new(
                "collect.bucket",
                "must be positive, e.g. \"20us\"",
            ));
        }
        if matches!(&self.ports, PortSelection::Nodes(n) if n.is_empty()) {
            return Err(ConfigError::new(
                "collect.switches",
                "name at least one switch, or write \"all\"",
            ));
        }
        self.resolve(topo)
            .map_err(|m| ConfigError::new("collect.switches", m))
    }

    /// The link ids this selection names in `topo`, in link order.
    pub fn resolve(&self, topo: &Topology) -> Result<Vec<u32>, String> {
        match &self.ports {
            PortSelection::All => Ok((0..topo.links.len() as u32).collect()),
            PortSelection::Nodes(names) => {
                let mut nodes = Vec::new();
                for n in names {
                    let node = topo.node_by_name(n).ok_or_else(|| {
                        format!("no node named '{n}' in this topology (write e.g. \"tor0\", \"agg1\", \"core0\", \"host3\" or \"all\")")
                    })?;
                    nodes.push(node);
                }
                Ok((0..topo.links.len() as u32)
                    .filter(|&l| nodes.contains(&topo.links[l as usize].from))
                    .collect())
            }
        }
    }
}

/// `[collect]`'s keys as they are written: the serde shape of [`CollectConfig`], whose
/// conversion holds the defaults.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct CollectTable {
    /// `"all"`, one node's name or a list of them.
    switches: NodeNames,
    /// Bucket width (default 20us).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    bucket: Option<TimeQ>,
    /// Queue occupancy samples (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    queues: Option<bool>,
    /// Congestion-window trace per flow (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    cwnd: Option<bool>,
}

/// One name or several.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(untagged)]
enum NodeNames {
    One(String),
    Many(Vec<String>),
}

impl From<CollectTable> for CollectConfig {
    fn from(t: CollectTable) -> Self {
        let ports = match t.switches {
            NodeNames::One(s) if s.eq_ignore_ascii_case("all") => PortSelection::All,
            NodeNames::One(s) => PortSelection::Nodes(vec![s]),
            NodeNames::Many(v) => PortSelection::Nodes(v),
        };
        CollectConfig {
            bucket: t.bucket.map_or(DEFAULT_BUCKET, |b| b.0),
            ports,
            queues: t.queues.unwrap_or(true),
            cwnd: t.cwnd.unwrap_or(false),
        }
    }
}

impl From<CollectConfig> for CollectTable {
    fn from(c: CollectConfig) -> Self {
        CollectTable {
            switches: match c.ports {
                PortSelection::All => NodeNames::One("all".into()),
                PortSelection::Nodes(v) => NodeNames::Many(v),
            },
            bucket: Some(TimeQ(c.bucket)),
            queues: Some(c.queues),
            cwnd: Some(c.cwnd),
        }
    }
}

/// Counters of one port in one bucket.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Cell {
    /// Wire bytes put on the link.
    pub tx_bytes: u64,
    /// Sum of queue samples (bytes).
    pub q_sum: u64,
    /// Packets put on the link.
    pub tx_packets: u32,
    /// Data packets dropped.
    pub drops: u32,
    /// Data packets trimmed.
    pub trims: u32,
    /// Data packets ECN-marked.
    pub ecn_marks: u32,
    /// Queue samples taken.
    pub q_samples: u32,
    /// Queue samples strictly above Kmin.
    pub q_above_kmin: u32,
    /// Largest queue sample (bytes, saturating).
    pub q_max: u32,
}

/// One congestion-window sample.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CwndSample {
    /// When.
    pub time: Time,
    /// Connection index.
    pub flow: u32,
    /// Window in bytes.
    pub cwnd: u64,
}

/// Collected time series of one run.
pub struct Collector {
    cfg: CollectConfig,
    /// Slot of every link (`NONE` when not collected).
    slot: Vec<u32>,
    /// Link id of every slot.
    ports: Vec<u32>,
    /// ECN Kmin of every slot (bytes).
    kmin: Vec<u64>,
    cells: Vec<Cell>,
    buckets: usize,
    cur_bucket: usize,
    cur_end: Time,
    cwnd: Vec<CwndSample>,
    cwnd_last: Vec<u32>,
}

impl Collector {
    /// A collector for the given links (`kmin[i]` is the Kmin of `ports[i]`); `links` is the
    /// number of links in the topology.
    pub fn new(cfg: CollectConfig, links: usize, ports: Vec<u32>, kmin: Vec<u64>) -> Self {
        assert!(cfg.bucket > 0, "bucket width must be positive");
        assert_eq!(ports.len(), kmin.len());
        let mut slot = vec![NONE; links];
        for (i, &p) in ports.iter().enumerate() {
            slot[p as usize] = i as u32;
        }
        Collector {
            cur_end: cfg.bucket,
            cfg,
            slot,
            ports,
            kmin,
            cells: Vec::new(),
            buckets: 0,
            cur_bucket: 0,
            cwnd: Vec::new(),
            cwnd_last: Vec::new(),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &CollectConfig {
        &self.cfg
    }

    /// Bucket width.
    pub fn bucket(&self) -> Time {
        self.cfg.bucket
    }

    /// Collected link ids (slot order).
    pub fn ports(&self) -> &[u32] {
        &self.ports
    }

    /// ECN Kmin of every collected port (slot order, bytes).
    pub fn kmin(&self) -> &[u64] {
        &self.kmin
    }

    /// Number of buckets with data so far.
    pub fn buckets(&self) -> usize {
        self.buckets
    }

    /// Counters of slot `slot` in bucket `b`.
    pub fn cell(&self, b: usize, slot: usize) -> Cell {
        self.cells[b * self.ports.len() + slot]
    }

    /// Congestion-window samples in time order.
    pub fn cwnd_samples(&self) -> &[CwndSample] {
        &self.cwnd
    }

    /// Takes the cells of the ports `theirs` names from `other`, a collector of the same run
    /// and selection kept by another partition (each port is counted where it is).
    pub fn absorb_ports(&mut self, other: &Collector, theirs: impl Fn(u32) -> bool) {
        if other.buckets > self.buckets {
            self.buckets = other.buckets;
            self.cells
                .resize(self.buckets * self.ports.len(), Cell::default());
        }
        let width = self.ports.len();
        for (slot, &port) in self.ports.iter().enumerate() {
            if theirs(port) {
                for b in 0..other.buckets {
                    self.cells[b * width + slot] = other.cells[b * width + slot];
                }
            }
        }
    }

    /// Replaces the congestion-window samples (the partitions' samples merged in time order).
    pub fn set_cwnd_samples(&mut self, samples: Vec<CwndSample>) {
        self.cwnd = samples;
    }

    /// Makes sure buckets up to the one containing `now` exist.
    pub fn extend_to(&mut self, now: Time) {
        let b = (now / self.cfg.bucket) as usize;
        if b >= self.buckets {
            self.buckets = b + 1;
            self.cells
                .resize(self.buckets * self.ports.len(), Cell::default());
        }
    }

    #[inline]
    fn bucket_of(&mut self, now: Time) -> usize {
        if now >= self.cur_end {
            self.cur_bucket = (now / self.cfg.bucket) as usize;
            self.cur_end = (self.cur_bucket as Time + 1) * self.cfg.bucket;
            self.extend_to(now);
        } else if self.buckets == 0 {
            self.extend_to(now);
        }
        self.cur_bucket
    }

    #[inline]
    fn at(&mut self, port: u32, now: Time) -> Option<&mut Cell> {
        let slot = self.slot[port as usize];
        if slot == NONE {
            return None;
        }
        let b = self.bucket_of(now);
        Some(&mut self.cells[b * self.ports.len() + slot as usize])
    }

    /// A packet of `bytes` starts serialization on `port`; `marked` when this port ECN-marked
    /// it as it left the queue.
    #[inline]
    pub fn on_tx(&mut self, port: u32, now: Time, bytes: u32, marked: bool) {
        if let Some(c) = self.at(port, now) {
            c.tx_bytes += bytes as u64;
            c.tx_packets += 1;
            c.ecn_marks += marked as u32;
        }
    }

    /// A data packet arrives at `port`'s queue holding `occupancy` data bytes.
    #[inline]
    pub fn on_data_arrival(&mut self, port: u32, now: Time, occupancy: u64) {
        if !self.cfg.queues {
            return;
        }
        let slot = self.slot[port as usize];
        if slot == NONE {
            return;
        }
        let above = occupancy > self.kmin[slot as usize];
        let b = self.bucket_of(now);
        let c = &mut self.cells[b * self.ports.len() + slot as usize];
        c.q_samples += 1;
        c.q_above_kmin += above as u32;
        c.q_sum += occupancy;
        c.q_max = c.q_max.max(occupancy.min(u32::MAX as u64) as u32);
    }

    /// A data packet was trimmed at `port`.
    #[inline]
    pub fn on_trim(&mut self, port: u32, now: Time) {
        if let Some(c) = self.at(port, now) {
            c.trims += 1;
        }
    }

    /// A data packet was dropped at `port`.
    #[inline]
    pub fn on_drop(&mut self, port: u32, now: Time) {
        if let Some(c) = self.at(port, now) {
            c.drops += 1;
        }
    }

    /// Connection `flow` processed an ACK or NACK; `cwnd` is its window afterwards.
    #[inline]
    pub fn on_cwnd(&mut self, flow: u32, now: Time, cwnd: u64) {
        if !self.cfg.cwnd {
            return;
        }
        let b = (now / self.cfg.bucket) as u32;
        let f = flow as usize;
        if f >= self.cwnd_last.len() {
            self.cwnd_last.resize(f + 1, NONE);
        }
        if self.cwnd_last[f] == b {
            return;
        }
        self.cwnd_last[f] = b;
        self.cwnd.push(CwndSample {
            time: now,
            flow,
            cwnd,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_grow_and_attribute() {
        let cfg = CollectConfig {
            bucket: 10,
            ports: PortSelection::All,
            queues: true,
            cwnd: true,
        };
        let mut c = Collector::new(cfg, 4, vec![1, 3], vec![100, 100]);
        c.on_tx(0, 5, 1000, true); // not collected
        c.on_tx(1, 5, 1000, true);
        c.on_tx(1, 6, 1000, true);
        c.on_tx(1, 25, 500, false);
        c.on_data_arrival(3, 26, 150);
        c.on_data_arrival(3, 27, 50);
        c.on_trim(3, 27);
        assert_eq!(c.buckets(), 3);
        assert_eq!(c.cell(0, 0).tx_bytes, 2000);
        assert_eq!(c.cell(0, 0).ecn_marks, 2);
        assert_eq!(c.cell(2, 0).ecn_marks, 0);
        assert_eq!(c.cell(1, 0), Cell::default());
        let q = c.cell(2, 1);
        assert_eq!(
            (q.q_samples, q.q_above_kmin, q.q_max, q.q_sum, q.trims),
            (2, 1, 150, 200, 1)
        );
        c.on_cwnd(7, 1, 10);
        c.on_cwnd(7, 2, 20);
        c.on_cwnd(7, 12, 30);
        assert_eq!(c.cwnd_samples().len(), 2);
    }
}
