//! The ECMP hash every switch uses: Bob Jenkins' 1997 "lookup2" mixing step.
//!
//! It is part of the model, so it is written here and never taken from `std` or a crate whose
//! algorithm could change between versions: the same inputs give the same egress port forever.
//!
//! Inputs are the packet's flow key, its entropy value (EV) and the switch's salt. All arithmetic
//! is wrapping `u32` with logical shifts. Starting from `a = GOLDEN + flow_key`,
//! `b = GOLDEN + salt`, `c = ev`, nine steps cycle over a, b, c with shift amounts
//! 13, 8, 13, 12, 16, 5, 3, 10, 15; the result is the final `c`.

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
