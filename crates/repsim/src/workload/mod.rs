//! Workloads: the flows a run offers, as lists or lazy sources, with dependencies between
//! flows ("start 2 us after flows 3 and 4 finish"), so that collectives and trace-driven
//! arrivals are one mechanism.
pub mod cdf;
pub mod cm;
pub mod collective;
pub mod source;
pub mod trace;

pub use source::{FlowSource, ListSource};

use crate::engine::rng::Stream;
use crate::engine::{Rng, Time};

/// One flow (connection) of the workload (`repr(C)`: `src` and `dst` within its first 16
/// bytes, which the simulation's flow record keeps in the line its packets read).
#[derive(Clone, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct FlowSpec {
    /// User-visible id (from the workload file, or 1.. in order); unique within a run.
    pub id: u64,
    /// Sending host.
    pub src: u32,
    /// Receiving host.
    pub dst: u32,
    /// Payload bytes.
    pub bytes: u64,
    /// Earliest start time.
    pub start: Time,
    /// A label of the caller's (e.g. a collective's step), carried into the outputs.
    pub tag: u64,
    /// Ids of flows that must finish before this one starts.
    pub after: Vec<u64>,
    /// How long after the last of `after` finishes it starts (never before `start`).
    pub delay: Time,
    /// Traffic class: index into the run's classes (0: the run's own load balancer and
    /// congestion control).
    pub class: u16,
    /// The scenario workload it belongs to (index into the run's workload labels; 0 when the
    /// scenario has one).
    pub workload: u16,
    /// The trigger that starts it (the reference's `.cm` `trigger k`), if any; it also waits
    /// for `after` and `start`.
    pub trigger: Option<u64>,
    /// The trigger its completion activates (`send_done_trigger k`), if any.
    pub fires: Option<u64>,
    /// A slice of this flow of the workload (its id): the flow completes with its last
    /// slice.
    pub slice_of: Option<u64>,
}

/// How a trigger releases the flows waiting on it (the reference's `.cm` trigger lines).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TriggerKind {
    /// The first activation starts every flow waiting on it.
    Oneshot,
    /// Each activation starts the next waiting flow, in the order they were added.
    Multishot,
    /// The `count`-th activation starts every waiting flow.
    Barrier {
        /// Activations needed.
        count: u32,
    },
}

/// A trigger: flows name it to wait on it or to activate it when they complete.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Trigger {
    /// Its id.
    pub id: u64,
    /// How it releases its waiting flows.
    pub kind: TriggerKind,
    /// Whether its activations and releases travel between hosts as notices, one crossing
    /// of the fabric each (`false`: at once, as htsim's triggers; see `docs/workloads.md`).
    pub notice: bool,
}

impl FlowSpec {
    /// A flow with no dependencies, tag or class.
    pub fn new(id: u64, src: u32, dst: u32, bytes: u64, start: Time) -> Self {
        FlowSpec {
            id,
            src,
            dst,
            bytes,
            start,
            tag: 0,
            after: Vec::new(),
            delay: 0,
            class: 0,
            workload: 0,
            trigger: None,
            fires: None,
            slice_of: None,
        }
    }
}

/// Splits every flow into `k` concurrent slices of (nearly) equal size, which together carry
/// its bytes (Reunion's flow slicing); slice j of flow `id` gets id `id * k + j`, and a flow
/// waiting for `id` waits for all its slices. Flows with triggers cannot be sliced.
pub fn slice(flows: Vec<FlowSpec>, k: u32) -> Result<Vec<FlowSpec>, String> {
    if k <= 1 {
        return Ok(flows);
    }
    let k64 = k as u64;
    let new_id = |id: u64, j: u64| {
        id.checked_mul(k64)
            .and_then(|x| x.checked_add(j))
            .ok_or_else(|| format!("flow id {id} is too large to slice {k} ways"))
    };
    let mut out = Vec::with_capacity(flows.len() * k as usize);
    for f in flows {
        if f.trigger.is_some() || f.fires.is_some() {
            return Err(format!(
                "flow {} has triggers; triggered flows cannot be sliced",
                f.id
            ));
        }
        let mut after = Vec::with_capacity(f.after.len() * k as usize);
        for &d in &f.after {
            for j in 0..k64 {
                after.push(new_id(d, j)?);
            }
        }
        let part = f.bytes / k64;
        for j in 0..k64 {
            let bytes = if j + 1 == k64 {
                f.bytes - part * (k64 - 1)
            } else {
                part
            };
            if bytes == 0 {
                return Err(format!(
                    "flow {} ({} B) is too small for {k} slices",
                    f.id, f.bytes
                ));
            }
            out.push(FlowSpec {
                id: new_id(f.id, j)?,
                bytes,
                after: after.clone(),
                slice_of: Some(f.id),
                ..f.clone()
            });
        }
    }
    Ok(out)
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
        .map(|s| FlowSpec::new(s as u64 + 1, s, dst[s as usize], bytes, start))
        .collect()
}

/// Tornado: host i sends to host (i + hosts/2) mod hosts.
pub fn tornado(hosts: u32, bytes: u64, start: Time) -> Vec<FlowSpec> {
    (0..hosts)
        .map(|s| FlowSpec::new(s as u64 + 1, s, (s + hosts / 2) % hosts, bytes, start))
        .collect()
}

/// Incast: `senders` hosts, drawn with the seed from every host but `dst`, each send `bytes` to
/// `dst`; flow ids follow the senders' host numbers.
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
        .map(|(i, s)| FlowSpec::new(i as u64 + 1, s, dst, bytes, start))
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

    #[test]
    fn slicing_splits_bytes_and_dependencies() {
        let mut b = FlowSpec::new(2, 1, 2, 10, 5);
        b.after = vec![1];
        let s = slice(vec![FlowSpec::new(1, 0, 1, 10, 0), b], 3).unwrap();
        assert_eq!(s.len(), 6);
        assert_eq!(
            s.iter().map(|f| f.bytes).collect::<Vec<_>>(),
            [3, 3, 4, 3, 3, 4]
        );
        assert_eq!(
            s.iter().map(|f| f.id).collect::<Vec<_>>(),
            [3, 4, 5, 6, 7, 8]
        );
        assert!(s[3..]
            .iter()
            .all(|f| f.after == [3, 4, 5] && f.slice_of == Some(2)));
        assert!(slice(vec![FlowSpec::new(1, 0, 1, 2, 0)], 3)
            .unwrap_err()
            .contains("too small"));
        assert_eq!(
            slice(vec![FlowSpec::new(1, 0, 1, 2, 0)], 1).unwrap().len(),
            1
        );
    }
}
