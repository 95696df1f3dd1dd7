//! Workloads: the flows a run offers (source, destination, size, start time).
pub mod cm;

use crate::engine::rng::Stream;
use crate::engine::{Rng, Time};

/// One flow (connection) of the workload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlowSpec {
    /// User-visible id (from the workload file, or 1.. in order).
    pub id: u64,
    /// Sending host.
    pub src: u32,
    /// Receiving host.
    pub dst: u32,
    /// Payload bytes.
    pub bytes: u64,
    /// Start time.
    pub start: Time,
}

/// A seeded random permutation: every host sends to and receives from exactly one other host.
pub fn permutation(hosts: u32, bytes: u64, start: Time, seed: u64) -> Vec<FlowSpec> {
    assert!(hosts >= 2, "a permutation needs at least two hosts");
    let mut rng = Rng::derive(seed, Stream::Workload, 0);
    let mut dst: Vec<u32> = (0..hosts).collect();
    rng.shuffle(&mut dst);
    // Remove self-pairs by swapping with the next position (cyclically), until none remain.
    loop {
        let mut fixed = true;
        for i in 0..hosts as usize {
            if dst[i] == i as u32 {
                let j = (i + 1) % hosts as usize;
                dst.swap(i, j);
                fixed = false;
            }
        }
        if fixed {
            break;
        }
    }
    (0..hosts)
        .map(|s| FlowSpec {
            id: s as u64 + 1,
            src: s,
            dst: dst[s as usize],
            bytes,
            start,
        })
        .collect()
}

/// Tornado: host i sends to host (i + hosts/2) mod hosts.
pub fn tornado(hosts: u32, bytes: u64, start: Time) -> Vec<FlowSpec> {
    (0..hosts)
        .map(|s| FlowSpec {
            id: s as u64 + 1,
            src: s,
            dst: (s + hosts / 2) % hosts,
            bytes,
            start,
        })
        .collect()
}

/// Incast: `senders` hosts (chosen from 1.. in a seeded order) each send `bytes` to host `dst`.
pub fn incast(
    hosts: u32,
    senders: u32,
    dst: u32,
    bytes: u64,
    start: Time,
    seed: u64,
) -> Vec<FlowSpec> {
    let mut rng = Rng::derive(seed, Stream::Workload, 1);
    let mut pool: Vec<u32> = (0..hosts).filter(|&h| h != dst).collect();
    rng.shuffle(&mut pool);
    pool.truncate(senders as usize);
    pool.sort_unstable();
    pool.into_iter()
        .enumerate()
        .map(|(i, s)| FlowSpec {
            id: i as u64 + 1,
            src: s,
            dst,
            bytes,
            start,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permutation_is_a_derangement_and_seeded() {
        for seed in 0..20 {
            let p = permutation(33, 100, 0, seed);
            let mut seen = [false; 33];
            for f in &p {
                assert_ne!(f.src, f.dst);
                assert!(!seen[f.dst as usize]);
                seen[f.dst as usize] = true;
            }
            assert_eq!(p, permutation(33, 100, 0, seed));
        }
        assert_ne!(permutation(64, 1, 0, 1), permutation(64, 1, 0, 2));
    }

    #[test]
    fn tornado_and_incast_shapes() {
        let t = tornado(8, 1, 0);
        assert_eq!(t[1].dst, 5);
        assert_eq!(t[6].dst, 2);
        let i = incast(16, 8, 0, 1, 0, 3);
        assert_eq!(i.len(), 8);
        assert!(i.iter().all(|f| f.dst == 0 && f.src != 0));
    }
}
