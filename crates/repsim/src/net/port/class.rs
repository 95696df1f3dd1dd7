//! What ports of one kind share: link speed and latency and the queue's buffer and ECN
//! parameters, each distinct combination stored once per run ([`PortClasses`]) and named by
//! index from every port, so that it stays in the cache however many ports there are.
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::engine::time::{serialization, PRODUCT_FITS_BELOW, SEC};
use crate::engine::Time;
use crate::error::ConfigError;
use crate::units::{RateQ, Size, SizeQ};

/// Buffer and marking parameters of a switch egress queue, in bytes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct QueueParams {
    /// Data-lane capacity.
    pub capacity: u64,
    /// ECN: no marking at or below this many queued bytes.
    pub ecn_min: u64,
    /// ECN: always mark above this many queued bytes.
    pub ecn_max: u64,
    /// ECN: marking probability reached at `ecn_max` (RED's Pmax; 1 in the REPS reference).
    pub ecn_pmax: f64,
    /// Trim overflowing packets to a header (true) or drop them (false).
    pub trimming: bool,
    /// Size of a trimmed packet.
    pub header_size: u32,
    /// Header-lane budget in bytes: a header that would take the lane past it is dropped
    /// ([`QueueParams::OFF`]: no limit).
    pub header_limit: u64,
    /// ECN is decided when a data packet's last bit leaves, on the data bytes then waiting
    /// (false: when it starts serialization, on the bytes behind it then).
    pub ecn_at_departure: bool,
}

impl QueueParams {
    /// A size no queue reaches: a capacity or an ECN threshold that is off.
    pub const OFF: u64 = u64::MAX / 2;

    /// `new` (the queue's sizes at another rate or buffer) for this port, keeping what the run
    /// turned off here at set-up: a lossless port's capacity (PFC's MMU admits data) and ECN at
    /// the last hop (receiver-paced congestion control). What a rate fault gives a port.
    pub fn rescaled(&self, mut new: QueueParams) -> QueueParams {
        if self.capacity == Self::OFF {
            new.capacity = Self::OFF;
            new.header_limit = Self::OFF;
        }
        if self.ecn_min == Self::OFF {
            new.ecn_min = Self::OFF;
            new.ecn_max = Self::OFF;
        }
        new
    }
}

/// `[queue]`: the switch egress queues of a run, as a scenario or a library user writes them
/// (sizes in bytes or packets of the run's MTU; each key not given takes its default).
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct QueueConfig {
    /// Data buffer per switch egress port (at most [`super::QUEUE_BYTES_MAX`]).
    pub size: SizeQ,
    /// ECN Kmin.
    pub ecn_min: SizeQ,
    /// ECN Kmax.
    pub ecn_max: SizeQ,
    /// ECN Pmax: marking probability just below Kmax (RED; DCQCN fabrics use 0.2).
    pub ecn_pmax: f64,
    /// Trim overflowing packets (true) or drop them (false).
    pub trimming: bool,
    /// The sizes above are for ports of this speed; a port of another speed scales them by its
    /// speed (LAPS keys its ECN thresholds by port speed: 400/1600 KB at 100 Gb/s, 800/3200 KB
    /// at 200 Gb/s). Absent: every port uses them as they are.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub per_rate: Option<RateQ>,
    /// Header-lane budget per port (ACKs, NACKs, pulls and trimmed packets): a header that
    /// would take the lane past it is dropped, and its sender waits for a timeout. The UEC
    /// reference drops beyond twice the data buffer (`repsim htsim` sets that). Absent: no
    /// limit, as in the REPS reference and in a switch that trims into a reserved buffer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub header_limit: Option<SizeQ>,
    /// Decide ECN when a data packet's last bit leaves the port, on the data bytes waiting
    /// then (uet-htsim's queue marks at its service completion, so the packets that arrived
    /// while it was on the wire count); false: when it starts serialization, on the bytes
    /// behind it then (the REPS reference). On a link without latency the decision stays at
    /// the start.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub ecn_at_departure: bool,
    /// At a tie, a port that finishes a packet starts its next one before the packets that
    /// reach its node in the same picosecond are queued: htsim's order for back-to-back
    /// trains, whose pipe schedules each delivery after the one before it, so after the
    /// service that the earlier delivery began. False: the engine's order, by delay class
    /// (an arrival, scheduled a link latency ahead, runs first). It applies to every port.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub departures_first: bool,
}

impl Default for QueueConfig {
    /// 100 packets, ECN from 20 to 80 packets with certainty at the top, trimming.
    fn default() -> Self {
        QueueConfig {
            size: SizeQ(Size::Packets(100.0)),
            ecn_min: SizeQ(Size::Packets(20.0)),
            ecn_max: SizeQ(Size::Packets(80.0)),
            ecn_pmax: 1.0,
            trimming: true,
            per_rate: None,
            header_limit: None,
            ecn_at_departure: false,
            departures_first: false,
        }
    }
}

impl QueueConfig {
    /// Checks the settings for packets of `mtu` bytes; the error names the `[queue]` key.
    pub fn check(&self, mtu: u32) -> Result<(), ConfigError> {
        let q = self.bytes(mtu);
        if !(q.ecn_pmax > 0.0 && q.ecn_pmax <= 1.0) {
            return Err(ConfigError::new("queue.ecn_pmax", "must be in (0, 1]"));
        }
        if q.capacity < u64::from(mtu) {
            return Err(ConfigError::new(
                "queue.size",
                format!("must hold at least one packet ({mtu}B)"),
            ));
        }
        if q.ecn_min > q.ecn_max {
            return Err(ConfigError::new(
                "queue.ecn_min",
                "must not exceed queue.ecn_max",
            ));
        }
        if q.header_limit < 64 {
            return Err(ConfigError::new(
                "queue.header_limit",
                format!(
                    "must hold at least one header (64B), not {}B",
                    q.header_limit
                ),
            ));
        }
        if q.capacity > super::QUEUE_BYTES_MAX {
            return Err(ConfigError::new(
                "queue.size",
                format!(
                    "must be at most {}B (a port counts its queued bytes in 32 \
                     bits), not {}B",
                    super::QUEUE_BYTES_MAX,
                    q.capacity
                ),
            ));
        }
        Ok(())
    }

    /// The settings in bytes, for packets of `mtu` bytes.
    pub fn bytes(&self, mtu: u32) -> QueueBytes {
        QueueBytes {
            capacity: self.size.0.bytes(mtu),
            ecn_min: self.ecn_min.0.bytes(mtu),
            ecn_max: self.ecn_max.0.bytes(mtu),
            ecn_pmax: self.ecn_pmax,
            trimming: self.trimming,
            per_rate: self.per_rate.map(|r| r.0),
            header_limit: self
                .header_limit
                .map_or(QueueParams::OFF, |l| l.0.bytes(mtu)),
            ecn_at_departure: self.ecn_at_departure,
        }
    }
}

/// Switch egress queue settings of a run, in bytes (scaled per port for degraded links).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct QueueBytes {
    /// Data buffer per egress port.
    pub capacity: u64,
    /// ECN Kmin.
    pub ecn_min: u64,
    /// ECN Kmax.
    pub ecn_max: u64,
    /// ECN Pmax: the marking probability just below Kmax (above Kmax every packet is marked).
    pub ecn_pmax: f64,
    /// Trim (true) or drop (false) packets that overflow.
    pub trimming: bool,
    /// The sizes above are for ports of this speed (bit/s), see [`QueueConfig::per_rate`].
    pub per_rate: Option<u64>,
    /// Header-lane budget ([`QueueParams::OFF`]: none), see [`QueueConfig::header_limit`].
    pub header_limit: u64,
    /// See [`QueueConfig::ecn_at_departure`].
    pub ecn_at_departure: bool,
}

impl QueueBytes {
    /// The factor the sizes are scaled by on a port of `rate_bps` (see `per_rate`).
    pub fn rate_scale(&self, rate_bps: u64) -> f64 {
        self.per_rate
            .map_or(1.0, |r| rate_bps as f64 / r.max(1) as f64)
    }

    /// The parameters of one switch port whose buffer and ECN thresholds are `scale` times the
    /// configured ones (degraded or rate-changed links).
    pub fn port_params(&self, scale: f64, header_size: u32) -> QueueParams {
        let scaled = |b: u64| (b as f64 * scale).round() as u64;
        QueueParams {
            capacity: scaled(self.capacity),
            ecn_min: scaled(self.ecn_min),
            ecn_max: scaled(self.ecn_max),
            ecn_pmax: self.ecn_pmax,
            trimming: self.trimming,
            header_size,
            header_limit: if self.header_limit == QueueParams::OFF {
                QueueParams::OFF
            } else {
                scaled(self.header_limit)
            },
            ecn_at_departure: self.ecn_at_departure,
        }
    }

    /// A host NIC's queue: it never drops or marks (the NIC only sends what the window allows).
    pub fn host_params(header_size: u32) -> QueueParams {
        QueueParams {
            capacity: QueueParams::OFF,
            ecn_min: QueueParams::OFF,
            ecn_max: QueueParams::OFF,
            ecn_pmax: 1.0,
            trimming: false,
            header_size,
            header_limit: QueueParams::OFF,
            ecn_at_departure: false,
        }
    }
}

/// What ports of one kind share: their link's speed and latency and their queue parameters.
/// Kept out of [`super::Port`] (which holds its class's index) so that a port is one cache line.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PortClass {
    /// Link bit rate.
    pub rate_bps: u64,
    /// Link propagation latency.
    pub latency: Time,
    /// Buffer and ECN parameters (already scaled for degraded links).
    pub params: QueueParams,
}

impl PortClass {
    /// The bits that tell two classes apart (the float by its bit pattern). Destructured in
    /// full, so that a field added to either struct cannot be left out of the key.
    fn key(&self) -> [u64; 10] {
        let PortClass {
            rate_bps,
            latency,
            params:
                QueueParams {
                    capacity,
                    ecn_min,
                    ecn_max,
                    ecn_pmax,
                    trimming,
                    header_size,
                    header_limit,
                    ecn_at_departure,
                },
        } = *self;
        [
            rate_bps,
            latency,
            capacity,
            ecn_min,
            ecn_max,
            ecn_pmax.to_bits(),
            trimming as u64,
            header_size as u64,
            header_limit,
            ecn_at_departure as u64,
        ]
    }
}

/// The distinct port classes of a run, each stored once; ports name theirs by index.
#[derive(Clone, Debug, Default)]
pub struct PortClasses {
    classes: Vec<PortClass>,
    /// Per class, picoseconds per byte where the rate divides 8 bits' worth of picoseconds
    /// exactly (every usual rate), else 0: serializing is then a multiplication instead of a
    /// 64-bit division per packet.
    ps_per_byte: Vec<u64>,
    /// Class key -> index (looked up when a port is set up or changes class).
    index: BTreeMap<[u64; 10], u32>,
}

impl PortClasses {
    /// No classes yet.
    pub fn new() -> Self {
        PortClasses::default()
    }

    /// The index of `class`, added if it is new.
    pub fn intern(&mut self, class: PortClass) -> u32 {
        let next = self.classes.len() as u32;
        let i = *self.index.entry(class.key()).or_insert(next);
        if i == next {
            let bit_ps = 8 * SEC;
            let exact = class.rate_bps > 0 && bit_ps.is_multiple_of(class.rate_bps);
            self.ps_per_byte
                .push(if exact { bit_ps / class.rate_bps } else { 0 });
            self.classes.push(class);
        }
        i
    }

    /// Class number `i`.
    #[inline(always)]
    pub fn get(&self, i: u32) -> &PortClass {
        &self.classes[i as usize]
    }

    /// How long `bytes` take to serialize on a port of class `i`: exactly
    /// [`serialization`] at its rate.
    #[inline(always)]
    pub fn serialization(&self, i: u32, bytes: u32) -> Time {
        match self.ps_per_byte[i as usize] {
            k if k > 0 && bytes < PRODUCT_FITS_BELOW => bytes as u64 * k,
            _ => serialization(bytes, self.classes[i as usize].rate_bps),
        }
    }

    /// Number of distinct classes.
    pub fn len(&self) -> usize {
        self.classes.len()
    }

    /// True when there is none.
    pub fn is_empty(&self) -> bool {
        self.classes.is_empty()
    }

    /// Heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.classes.capacity() * std::mem::size_of::<PortClass>()
            + self.ps_per_byte.capacity() * std::mem::size_of::<u64>()
            + self.index.len() * (std::mem::size_of::<[u64; 10]>() + 4)
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    #[test]
    fn thresholds_scale_with_port_speed_only_when_asked() {
        let mut q = QueueBytes {
            capacity: 10 << 20,
            ecn_min: 400_000,
            ecn_max: 1_600_000,
            ecn_pmax: 0.8,
            trimming: false,
            per_rate: None,
            header_limit: QueueParams::OFF,
            ecn_at_departure: false,
        };
        assert_eq!(q.rate_scale(200_000_000_000), 1.0);
        // LAPS: 400/1600 KB at 100 Gb/s, 800/3200 KB at 200 Gb/s, 100/400 KB at 25 Gb/s.
        q.per_rate = Some(100_000_000_000);
        let at = |rate: u64| q.port_params(q.rate_scale(rate), 48);
        assert_eq!(
            (at(200_000_000_000).ecn_min, at(200_000_000_000).ecn_max),
            (800_000, 3_200_000)
        );
        assert_eq!(
            (at(25_000_000_000).ecn_min, at(25_000_000_000).ecn_max),
            (100_000, 400_000)
        );
        assert_eq!(at(100_000_000_000).ecn_min, 400_000);
    }

    /// A small queue (3,000 B, ECN between 1,000 and 2,000 B) for the port tests.
    pub(in crate::net::port) fn params(trimming: bool) -> QueueParams {
        QueueParams {
            capacity: 3 * 1000,
            ecn_min: 1000,
            ecn_max: 2000,
            ecn_pmax: 1.0,
            trimming,
            header_size: 64,
            header_limit: QueueParams::OFF,
            ecn_at_departure: false,
        }
    }

    #[test]
    fn classes_are_stored_once_and_told_apart_by_every_field() {
        let base = PortClass {
            rate_bps: 400_000_000_000,
            latency: 1_000_000,
            params: params(true),
        };
        let mut classes = PortClasses::new();
        assert_eq!(classes.intern(base), 0);
        assert_eq!(classes.intern(base), 0);
        let mut other = base;
        other.params.ecn_pmax = 0.5;
        assert_eq!(classes.intern(other), 1);
        other = base;
        other.latency += 1;
        assert_eq!(classes.intern(other), 2);
        assert_eq!(classes.len(), 3);
        assert_eq!(
            *classes.get(1),
            PortClass {
                params: QueueParams {
                    ecn_pmax: 0.5,
                    ..base.params
                },
                ..base
            }
        );
    }

    /// A class serializes exactly as `engine::time::serialization` does at its rate, by
    /// multiplication where the rate divides a bit's picoseconds and by division elsewhere.
    #[test]
    fn class_serialization_matches_the_rate() {
        let mut classes = PortClasses::new();
        let rates = [
            400_000_000_000,
            100_000_000_000,
            25_000_000_000,
            396_000_000_000,
            3_000_000_000_000,
            1,
        ];
        for rate_bps in rates {
            let i = classes.intern(PortClass {
                rate_bps,
                latency: 0,
                params: params(true),
            });
            for bytes in [
                0,
                1,
                64,
                1500,
                4150,
                9000,
                PRODUCT_FITS_BELOW - 1,
                PRODUCT_FITS_BELOW,
                u32::MAX,
            ] {
                assert_eq!(
                    classes.serialization(i, bytes),
                    serialization(bytes, rate_bps),
                    "{bytes} B at {rate_bps} b/s"
                );
            }
        }
        assert_eq!(classes.ps_per_byte, [20, 80, 320, 0, 0, 8 * SEC]);
    }
}
