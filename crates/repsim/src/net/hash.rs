//! The ECMP hashes switches use. By default Bob Jenkins' 1997 "lookup2" mixing step over
//! (flow key, entropy value, switch salt); optionally a reference simulator's (the LAPS
//! code's): 32-bit MurmurHash3 over (source IP, destination IP, source port), seeded by the
//! switch's node id ([`EcmpHash::Murmur3SwitchSeed`]). The hashes know no load balancer: a run
//! chooses one with the `hash` of its ECMP entry.
//!
//! They are part of the model, so they are written here and never taken from `std` or a crate
//! whose algorithm could change between versions: the same inputs give the same egress port
//! forever.
//!
//! lookup2: all arithmetic is wrapping `u32` with logical shifts. Starting from
//! `a = GOLDEN + flow_key`, `b = GOLDEN + salt`, `c = ev`, nine steps cycle over a, b, c with
//! shift amounts 13, 8, 13, 12, 16, 5, 3, 10, 15; the result is the final `c`.
use serde::{Deserialize, Serialize};

/// Which hash ECMP switches apply (`hash` on an `ecmp` entry of `lb`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EcmpHash {
    /// lookup2 over (flow key, EV, the switch's salt): ours (the default).
    #[default]
    Lookup2,
    /// The LAPS code's: MurmurHash3 (x86, 32-bit) over the 12 bytes (source IP, destination
    /// IP, source port), seeded by the switch's node id; the EV is not an input, so a flow
    /// keeps one path whatever its sender picks. Node ids, addresses and ports are numbered as
    /// the LAPS code numbers them: switches first in our creation order (the LAPS rail file's
    /// order), then hosts; host node n has address 11.x.y.1 ([`murmur3_host_address`]); the k-th
    /// flow of the workload (from 0) has source port 1001 + k ([`murmur3_source_port`]).
    Murmur3SwitchSeed,
}

/// The golden-ratio constant lookup2 starts from.
const GOLDEN: u32 = 0x9e37_79b9;

/// Hashes (flow key, entropy value, per-switch salt) to a 32-bit value; stable across versions.
#[inline]
pub fn ecmp_hash(flow_key: u32, ev: u32, salt: u32) -> u32 {
    let mut a = GOLDEN.wrapping_add(flow_key);
    let mut b = GOLDEN.wrapping_add(salt);
    let mut c = ev;
    a = a.wrapping_sub(b).wrapping_sub(c) ^ (c >> 13);
    b = b.wrapping_sub(c).wrapping_sub(a) ^ (a << 8);
    c = c.wrapping_sub(a).wrapping_sub(b) ^ (b >> 13);
    a = a.wrapping_sub(b).wrapping_sub(c) ^ (c >> 12);
    b = b.wrapping_sub(c).wrapping_sub(a) ^ (a << 16);
    c = c.wrapping_sub(a).wrapping_sub(b) ^ (b >> 5);
    a = a.wrapping_sub(b).wrapping_sub(c) ^ (c >> 3);
    b = b.wrapping_sub(c).wrapping_sub(a) ^ (a << 10);
    c = c.wrapping_sub(a).wrapping_sub(b) ^ (b >> 15);
    c
}

/// Picks one of `choices` candidates (must be > 0) for a packet, as a switch does.
#[inline]
pub fn ecmp_pick(flow_key: u32, ev: u32, salt: u32, choices: u32) -> u32 {
    ecmp_hash(flow_key, ev, salt) % choices
}

/// The flow key a packet between two hosts carries (data and its ACKs carry the same key).
///
/// Unique for fabrics of fewer than 65,536 hosts; beyond that distinct pairs may share a key,
/// which only means they hash alike.
#[inline]
pub fn flow_key(src_host: u32, dst_host: u32) -> u32 {
    (src_host << 16) ^ dst_host
}

/// MurmurHash3 (x86, 32-bit) of `words` read as little-endian bytes, with `seed`.
pub fn murmur3_32(words: &[u32], seed: u32) -> u32 {
    const C1: u32 = 0xcc9e_2d51;
    const C2: u32 = 0x1b87_3593;
    let mut h = seed;
    for &w in words {
        let k = w.wrapping_mul(C1).rotate_left(15).wrapping_mul(C2);
        h = (h ^ k)
            .rotate_left(13)
            .wrapping_mul(5)
            .wrapping_add(0xe654_6b64);
    }
    h ^= (4 * words.len()) as u32;
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^ (h >> 16)
}

/// The IPv4 address (a host-order `u32`) the MurmurHash3 hash gives node `node`, as the
/// reference code numbers them: 11.a.b.1 with a = node / 256 and b = node % 256.
#[inline]
pub fn murmur3_host_address(node: u32) -> u32 {
    0x0b00_0001u32
        .wrapping_add((node / 256) << 16)
        .wrapping_add((node % 256) << 8)
}

/// The source port of the `flow`-th flow (from 0) as the reference code numbers them (its
/// 16-bit port counter starts at 1000 and is incremented before each flow takes it).
#[inline]
pub fn murmur3_source_port(flow: u32) -> u32 {
    u32::from(1001u16.wrapping_add(flow as u16))
}

/// The MurmurHash3 ECMP index among `choices` (> 0) at the switch of node id `switch_node`
/// for a packet between the nodes `src_node` and `dst_node` of flow `flow`.
#[inline]
pub fn murmur3_ecmp_pick(
    switch_node: u32,
    src_node: u32,
    dst_node: u32,
    flow: u32,
    choices: u32,
) -> u32 {
    let key = [
        murmur3_host_address(src_node),
        murmur3_host_address(dst_node),
        murmur3_source_port(flow),
    ];
    murmur3_32(&key, switch_node) % choices
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_is_stable() {
        // Pinned values: if these change, every ECMP result in every saved experiment changes.
        assert_eq!(ecmp_hash(0, 0, 0), 3_175_731_469);
        assert_eq!(ecmp_hash(1234, 7, 99), 2_602_412_851);
        assert_eq!(ecmp_hash(u32::MAX, 65535, 1), 2_812_157_174);
    }

    #[test]
    fn murmur3_matches_the_reference_algorithm() {
        // MurmurHash3_x86_32 of the same little-endian bytes (values from an independent
        // implementation; the empty key with seed 1 is the published 0x514e28b7).
        assert_eq!(murmur3_32(&[], 1), 0x514e_28b7);
        assert_eq!(murmur3_32(&[0, 0, 0], 0), 3_644_920_907);
        assert_eq!(murmur3_32(&[1, 2, 3], 4), 2_497_076_548);
        assert_eq!(
            murmur3_32(&[0x0b00_5101, 0x0b00_5001, 1001], 72),
            2_870_151_435
        );
    }

    #[test]
    fn murmur3_addresses_and_ports_as_the_reference_code_numbers_them() {
        // The rail file's first GPU is node 80: 11.0.80.1.
        assert_eq!(murmur3_host_address(80), 0x0b00_5001);
        assert_eq!(murmur3_host_address(256 + 3), 0x0b01_0301);
        assert_eq!(murmur3_source_port(0), 1001);
        assert_eq!(murmur3_source_port(62), 1063);
        assert_eq!(murmur3_source_port(65_535 - 1001), 65_535);
        assert_eq!(
            murmur3_source_port(65_535 - 1000),
            0,
            "the code's 16-bit counter wraps"
        );
    }

    #[test]
    fn spreads_evs_evenly() {
        let mut counts = [0u32; 8];
        for ev in 0..65536u32 {
            counts[ecmp_pick(flow_key(3, 70), ev, 0xdead_beef, 8) as usize] += 1;
        }
        for c in counts {
            assert!((7700..8700).contains(&c), "uneven: {counts:?}");
        }
    }
}
