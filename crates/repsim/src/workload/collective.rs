//! Collectives as flows with dependencies: each flow waits for the flows whose data it needs,
//! so a collective's steps run as fast as the network lets them, step by step per rank.
//!
//! Every flow is tagged `iteration << 20 | step` (steps from 1), so per-step times can be read
//! back from the results ([`step_of`]). `ranks[r]` is the host of rank r.
//!
//! | kind | flows |
//! |---|---|
//! | ring AllReduce | 2(n-1) steps; in each, rank r sends `S / n` to rank r+1, once it has sent its previous chunk and received its predecessor's |
//! | reduce-scatter, all-gather | the first (or last) n-1 of those steps |
//! | reference ring | the REPS reference generator's: ranks in groups of g; from each member a chain of 2g-1 transfers of `S` around its group, each after the previous one |
//! | butterfly AllReduce | recursive doubling, n a power of two: log2 n stages; in stage d rank r exchanges `S` with rank r XOR 2^d, once it has sent and received stage d-1 |
//! | AllToAll | every rank sends `S` to every other (to r+1, r+2, ... in turn), at most k at once |
//! | parameter-server AllReduce | every rank sends `S` to rank 0, then rank 0 sends `S` to every rank |
//! | AllScatter | rank 0 sends `S` to every other rank at once |
//! | ring step | one step of a ring: every rank sends `S` to rank r+1 at once (the simultaneous elephants of one step of a ring AllReduce, Reunion's workload) |
//!
//! Several iterations run back to back: the first flows of iteration i+1 wait for every flow
//! of iteration i, plus a compute gap.
use super::FlowSpec;
use crate::engine::{Rng, Time};

/// Which collective.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CollectiveKind {
    /// Ring AllReduce (reduce-scatter then all-gather).
    RingAllReduce,
    /// The reduce-scatter half of the ring.
    ReduceScatter,
    /// The all-gather half of the ring.
    AllGather,
    /// The REPS reference generator's ring: chains of `2 group - 1` transfers per member.
    RingReference {
        /// Ranks per ring.
        group: u32,
    },
    /// Recursive-doubling (butterfly) AllReduce.
    Butterfly,
    /// All-to-all with at most `concurrency` connections per rank at once.
    AllToAll {
        /// Connections a rank keeps open at once.
        concurrency: u32,
    },
    /// All to rank 0, then rank 0 to all.
    ParameterServer,
    /// Rank 0 to all at once.
    AllScatter,
    /// One ring step: every rank r sends `S` to rank r+1 at once.
    RingStep,
}

/// A collective's parameters.
#[derive(Clone, Debug)]
pub struct CollectiveSpec {
    /// Which one.
    pub kind: CollectiveKind,
    /// Host of each rank.
    pub ranks: Vec<u32>,
    /// The buffer `S` in bytes (see the module table for what each flow carries).
    pub bytes: u64,
    /// Runs back to back.
    pub iterations: u32,
    /// Gap between an iteration's end and the next one's start.
    pub compute_gap: Time,
    /// Start of the first iteration.
    pub start: Time,
    /// Id of the first flow (the others follow).
    pub first_id: u64,
}

/// Tag of a flow of `iteration` (from 0) and `step` (from 1).
pub fn tag_of(iteration: u32, step: u32) -> u64 {
    ((iteration as u64) << 20) | step as u64
}

/// (iteration, step) of a collective flow's tag.
pub fn step_of(tag: u64) -> (u32, u32) {
    ((tag >> 20) as u32, (tag & 0xF_FFFF) as u32)
}

/// The flows of a collective; the message says what is wrong with the spec.
pub fn collective_flows(spec: &CollectiveSpec, rng: &mut Rng) -> Result<Vec<FlowSpec>, String> {
    let n = spec.ranks.len();
    if n < 2 {
        return Err("a collective needs at least two ranks".into());
    }
    if spec.bytes == 0 || spec.iterations == 0 {
        return Err("size and iterations must be positive".into());
    }
    let mut distinct = spec.ranks.clone();
    distinct.sort_unstable();
    distinct.dedup();
    if distinct.len() != n {
        return Err("two ranks are placed on the same host".into());
    }
    match spec.kind {
        CollectiveKind::Butterfly if !n.is_power_of_two() => {
            return Err(format!(
                "a butterfly needs a power-of-two number of ranks, not {n}"
            ))
        }
        CollectiveKind::RingReference { group }
            if group < 2 || !n.is_multiple_of(group as usize) =>
        {
            return Err(format!("group must be at least 2 and divide the {n} ranks"))
        }
        CollectiveKind::AllToAll { concurrency: 0 } => {
            return Err("concurrency must be at least 1".into())
        }
        _ => {}
    }
    let mut b = Builder {
        spec,
        flows: Vec::new(),
    };
    // The reference ring shuffles ranks into groups once, as its generator does.
    let mut order: Vec<usize> = (0..n).collect();
    if matches!(spec.kind, CollectiveKind::RingReference { .. }) {
        rng.shuffle(&mut order);
    }
    let mut previous: Vec<u64> = Vec::new();
    for it in 0..spec.iterations {
        let first = b.flows.len();
        b.iteration(it, &order);
        // The first flows of this iteration (those with no dependency inside it) wait for the
        // whole previous iteration.
        if !previous.is_empty() {
            for f in &mut b.flows[first..] {
                if f.after.is_empty() {
                    f.after = previous.clone();
                    f.delay = spec.compute_gap;
                }
            }
        }
        previous = b.flows[first..].iter().map(|f| f.id).collect();
    }
    Ok(b.flows)
}

struct Builder<'a> {
    spec: &'a CollectiveSpec,
    flows: Vec<FlowSpec>,
}

impl Builder<'_> {
    /// Adds a flow from rank `from` to rank `to` and returns its id.
    fn add(
        &mut self,
        it: u32,
        step: u32,
        from: usize,
        to: usize,
        bytes: u64,
        after: Vec<u64>,
    ) -> u64 {
        let id = self.spec.first_id + self.flows.len() as u64;
        let mut f = FlowSpec::new(
            id,
            self.spec.ranks[from],
            self.spec.ranks[to],
            bytes.max(1),
            self.spec.start,
        );
        f.tag = tag_of(it, step);
        f.after = after;
        self.flows.push(f);
        id
    }

    fn iteration(&mut self, it: u32, order: &[usize]) {
        let n = self.spec.ranks.len();
        let s = self.spec.bytes;
        match self.spec.kind {
            CollectiveKind::RingAllReduce => self.ring(it, 1..=2 * (n as u32 - 1)),
            CollectiveKind::ReduceScatter | CollectiveKind::AllGather => {
                self.ring(it, 1..=n as u32 - 1)
            }
            CollectiveKind::RingReference { group } => {
                let g = group as usize;
                for ring in order.chunks(g) {
                    for start in 0..g {
                        let mut prev: Option<u64> = None;
                        for hop in 0..2 * g - 1 {
                            let from = ring[(start + hop) % g];
                            let to = ring[(start + hop + 1) % g];
                            let after = prev.into_iter().collect();
                            prev = Some(self.add(it, hop as u32 + 1, from, to, s, after));
                        }
                    }
                }
            }
            CollectiveKind::Butterfly => {
                let stages = n.trailing_zeros();
                // sent[r]: rank r's flow of the previous stage; to[r]: the flow it received.
                let mut sent: Vec<Option<u64>> = vec![None; n];
                let mut got: Vec<Option<u64>> = vec![None; n];
                for d in 0..stages {
                    let mut now_sent = vec![None; n];
                    let mut now_got = vec![None; n];
                    for r in 0..n {
                        let p = r ^ (1 << d);
                        let after = [sent[r], got[r]].into_iter().flatten().collect();
                        let id = self.add(it, d + 1, r, p, s, after);
                        now_sent[r] = Some(id);
                        now_got[p] = Some(id);
                    }
                    sent = now_sent;
                    got = now_got;
                }
            }
            CollectiveKind::AllToAll { concurrency } => {
                let k = concurrency as usize;
                for r in 0..n {
                    let mut mine: Vec<u64> = Vec::new();
                    for off in 1..n {
                        let after = if off > k {
                            vec![mine[off - 1 - k]]
                        } else {
                            Vec::new()
                        };
                        let id = self.add(it, off as u32, r, (r + off) % n, s, after);
                        mine.push(id);
                    }
                }
            }
            CollectiveKind::ParameterServer => {
                let gathered: Vec<u64> = (1..n)
                    .map(|r| self.add(it, 1, r, 0, s, Vec::new()))
                    .collect();
                for r in 1..n {
                    self.add(it, 2, 0, r, s, gathered.clone());
                }
            }
            CollectiveKind::AllScatter => {
                for r in 1..n {
                    self.add(it, 1, 0, r, s, Vec::new());
                }
            }
            CollectiveKind::RingStep => {
                for r in 0..n {
                    self.add(it, 1, r, (r + 1) % n, s, Vec::new());
                }
            }
        }
    }

    /// Ring steps `steps` (numbered from 1): rank r sends `S / n` to r + 1 once it has sent
    /// its own previous chunk and received its predecessor's.
    fn ring(&mut self, it: u32, steps: std::ops::RangeInclusive<u32>) {
        let n = self.spec.ranks.len();
        let chunk = self.spec.bytes / n as u64;
        let mut sent: Vec<Option<u64>> = vec![None; n];
        for step in steps {
            let mut now_sent = vec![None; n];
            for r in 0..n {
                let pred = (r + n - 1) % n;
                let after = [sent[r], sent[pred]].into_iter().flatten().collect();
                now_sent[r] = Some(self.add(it, step, r, (r + 1) % n, chunk, after));
            }
            sent = now_sent;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(kind: CollectiveKind, n: u32) -> CollectiveSpec {
        CollectiveSpec {
            kind,
            ranks: (0..n).collect(),
            bytes: 1 << 20,
            iterations: 1,
            compute_gap: 0,
            start: 0,
            first_id: 1,
        }
    }

    fn flows(kind: CollectiveKind, n: u32) -> Vec<FlowSpec> {
        collective_flows(&spec(kind, n), &mut Rng::new(1)).unwrap()
    }

    #[test]
    fn shapes_and_dependencies() {
        let ring = flows(CollectiveKind::RingAllReduce, 8);
        assert_eq!(ring.len(), 8 * 14);
        assert!(ring
            .iter()
            .all(|f| f.bytes == (1 << 20) / 8 && f.dst == (f.src + 1) % 8));
        // Step 2 of rank 3 waits for rank 3's and rank 2's step-1 flows.
        let f = ring
            .iter()
            .find(|f| f.src == 3 && step_of(f.tag).1 == 2)
            .unwrap();
        let deps: Vec<(u32, u32)> = f
            .after
            .iter()
            .map(|id| {
                let d = &ring[(*id - 1) as usize];
                (d.src, step_of(d.tag).1)
            })
            .collect();
        assert_eq!(deps, vec![(3, 1), (2, 1)]);
        assert_eq!(flows(CollectiveKind::ReduceScatter, 8).len(), 8 * 7);
        let bf = flows(CollectiveKind::Butterfly, 8);
        assert_eq!(bf.len(), 8 * 3);
        assert!(bf
            .iter()
            .all(|f| f.src ^ f.dst == 1 << (step_of(f.tag).1 - 1)));
        let a2a = flows(CollectiveKind::AllToAll { concurrency: 2 }, 5);
        assert_eq!(a2a.len(), 20);
        // Rank 0's third flow waits for its first.
        let third = a2a.iter().filter(|f| f.src == 0).nth(2).unwrap();
        assert_eq!(third.after, vec![1]);
        let ps = flows(CollectiveKind::ParameterServer, 4);
        assert_eq!(ps.len(), 6);
        assert!(ps[3..]
            .iter()
            .all(|f| f.src == 0 && f.after == vec![1, 2, 3]));
        let rr = flows(CollectiveKind::RingReference { group: 4 }, 8);
        assert_eq!(
            rr.len(),
            2 * 4 * 7,
            "2 rings x 4 chains x (2g - 1) transfers"
        );
        assert_eq!(flows(CollectiveKind::AllScatter, 6).len(), 5);
        let step = flows(CollectiveKind::RingStep, 5);
        assert_eq!(step.len(), 5, "one flow per rank");
        assert!(step
            .iter()
            .all(|f| f.after.is_empty() && step_of(f.tag) == (0, 1)));
        let mut receivers: Vec<u32> = step.iter().map(|f| f.dst).collect();
        receivers.sort_unstable();
        receivers.dedup();
        assert_eq!(receivers.len(), 5, "every rank receives exactly one flow");
    }

    #[test]
    fn iterations_chain_with_a_gap() {
        let s = CollectiveSpec {
            iterations: 2,
            compute_gap: 7,
            ..spec(CollectiveKind::AllScatter, 4)
        };
        let f = collective_flows(&s, &mut Rng::new(1)).unwrap();
        assert_eq!(f.len(), 6);
        assert!(f[3..]
            .iter()
            .all(|x| x.after == vec![1, 2, 3] && x.delay == 7));
        assert_eq!(step_of(f[4].tag), (1, 1));
    }

    #[test]
    fn bad_specs_say_why() {
        let e = |s: CollectiveSpec| collective_flows(&s, &mut Rng::new(1)).unwrap_err();
        assert!(e(spec(CollectiveKind::Butterfly, 6)).contains("power-of-two"));
        assert!(e(spec(CollectiveKind::RingReference { group: 3 }, 8)).contains("divide"));
        assert!(e(spec(CollectiveKind::RingAllReduce, 1)).contains("two ranks"));
        assert!(e(CollectiveSpec {
            ranks: vec![1, 1, 2],
            ..spec(CollectiveKind::RingAllReduce, 3)
        })
        .contains("same host"));
    }
}
