//! Recycled balls-into-bins: the model of REPS at one switch (paper Section 5.1, Appendix B).
//!
//! There are `n` bins, a set of `b * n` colours (entropy values) and a threshold `tau`. Each step:
//!
//! 1. every non-empty bin removes its oldest ball (FIFO). Let `x` be the bin's load just before
//!    the removal. If `x <= tau`, the ball's colour remembers this bin, unless it already
//!    remembers another one, and the colour is recycled; if `x > tau` (an ECN-marked packet), the
//!    colour forgets whatever bin it remembered;
//! 2. `lambda * n` balls are thrown (`n` at full rate): a colour that remembers a bin throws its
//!    ball there, a colour that remembers nothing throws its ball into a uniformly random bin.
//!
//! Which colours are thrown in step 2 is set by [`Feedback`]. The default,
//! [`Feedback::Immediate`], is ACK-clocked like REPS itself: recycled colours queue in a FIFO
//! return buffer and are reused first, oldest first; only when the buffer is empty is a fresh
//! colour taken, round-robin over the colour set, and thrown at random (REPS "explores"). This
//! is the process the proof of Theorem 5.1 analyses: every ball leaving a bin with at most `tau`
//! balls is replaced by one ball into the same bin, so a non-empty bin stays non-empty, the total
//! stops growing once all bins are busy, and the drift of an overfull bin is `k/n - 1`.
//! [`Feedback::RoundRobin`] is the literal "cycle through the colours in batches of `n`" reading,
//! in which a colour throws only on its round-robin turn; it is kept for comparison (see there).
//!
//! Choices this implementation makes explicit:
//!
//! * `tau` may be real (the paper's `4 ln n`); "at most tau balls" means `x <= floor(tau)`.
//! * `b` is rounded **up** to an integer number of colours per bin, so there are exactly
//!   `ceil(b) * n` colours (`ceil(b) >= b` keeps Theorem 5.1's condition). In the round-robin
//!   reading a converged state needs every bin to own exactly `colours / n` colours, which exists
//!   only when `n` divides the number of colours.
//! * Arrivals per step are `lambda * n` with the fractional part as a Bernoulli extra ball
//!   ([`crate::rng::batch_size`]).
//! * ACK coalescing (Appendix C.1): with ratio `k`, each bin counts its departures and only every
//!   `k`-th departure returns its colour to the sender, which then applies the rule of step 1.
//!   The colour of any other departing ball is not returned, so it forgets its bin and the sender
//!   explores instead (REPS reuses only entropies that come back on an ACK). `k = 1` is the plain
//!   model.

use std::collections::VecDeque;

use crate::rng::{batch_size, Rng};

/// Sentinel for "this colour remembers no bin".
const NONE: u32 = u32::MAX;

/// Parameters of the recycled process.
#[derive(Clone, Debug, PartialEq)]
pub struct RecycledParams {
    /// Number of bins (output ports).
    pub n: usize,
    /// Colours per bin (integer `b`); there are `colours_per_bin * n` colours.
    pub colours_per_bin: usize,
    /// Integer threshold: a colour is kept when its bin held at most this many balls.
    pub tau: usize,
    /// Mean arrivals per step divided by `n` (1.0 = full rate).
    pub lambda: f64,
    /// ACK coalescing ratio `k`: only every `k`-th departure of a bin recycles its colour.
    pub ack_every: usize,
    /// When a recycled colour is thrown again.
    pub feedback: Feedback,
}

/// When a colour that came back from a departure is thrown again.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Feedback {
    /// ACK-clocked (default): returned colours wait in a FIFO return buffer (REPS's circular
    /// buffer) and the next balls thrown reuse them, oldest first; a ball is thrown at random with
    /// a fresh colour (round-robin over the colour set) only when the buffer is empty.
    #[default]
    Immediate,
    /// Literal round-robin: the colour set is cycled in batches of `n`, and a colour remembering a
    /// bin throws there on its turn, however long ago it left. At full rate this needs an exact
    /// `colours_per_bin`-regular assignment and, starting from empty bins, in practice does not
    /// converge (bins owning too few colours drain empty and the total load only grows).
    RoundRobin,
}

impl Feedback {
    /// Every value's name, in declaration order.
    pub const NAMES: &'static [&'static str] = &["immediate", "round-robin"];

    /// The value's name, as `FromStr` reads it.
    pub fn name(self) -> &'static str {
        match self {
            Feedback::Immediate => "immediate",
            Feedback::RoundRobin => "round-robin",
        }
    }
}

impl std::str::FromStr for Feedback {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "immediate" => Ok(Feedback::Immediate),
            "round-robin" => Ok(Feedback::RoundRobin),
            _ => Err(format!(
                "unknown feedback '{s}': expected one of {}",
                Self::NAMES.join(", ")
            )),
        }
    }
}

impl std::fmt::Display for Feedback {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl RecycledParams {
    /// The paper's parameters for `n` bins: `tau = 4 ln n`, `b = 2.4 ln n`, full rate, no coalescing.
    pub fn paper(n: usize) -> Self {
        Self::with(n, None, None)
    }

    /// `n` bins with real-valued `tau` and `b` (defaults `4 ln n`, `2.4 ln n`), rounded as documented.
    pub fn with(n: usize, tau: Option<f64>, b: Option<f64>) -> Self {
        let ln = (n as f64).ln();
        let tau = tau.unwrap_or(4.0 * ln);
        let b = b.unwrap_or(2.4 * ln);
        Self {
            n,
            colours_per_bin: (b.ceil() as usize).max(1),
            tau: tau.floor().max(0.0) as usize,
            lambda: 1.0,
            ack_every: 1,
            feedback: Feedback::Immediate,
        }
    }

    /// Total number of colours.
    pub fn colours(&self) -> usize {
        self.colours_per_bin * self.n
    }
}

/// What happened in one step.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StepStats {
    /// Maximum load after the arrivals.
    pub max_load: u32,
    /// Balls thrown uniformly at random (by colours that remembered no bin).
    pub random_throws: u32,
    /// Colours that forgot a remembered bin in this step's departures.
    pub forgets: u32,
    /// Balls in the system after the arrivals.
    pub total_balls: u64,
}

impl StepStats {
    /// True when nothing random or forgetful happened and no bin exceeds `tau`.
    pub fn settled(&self, tau: usize) -> bool {
        self.random_throws == 0 && self.forgets == 0 && self.max_load as usize <= tau
    }
}

/// One run of the recycled process.
#[derive(Clone, Debug)]
pub struct Recycled {
    params: RecycledParams,
    queues: Vec<VecDeque<u32>>,
    memory: Vec<u32>,
    departures: Vec<u64>,
    returned: VecDeque<u32>,
    next_colour: usize,
    rng: Rng,
}

impl Recycled {
    /// Starts with empty bins and colours that remember nothing.
    pub fn new(params: RecycledParams, seed: u64) -> Self {
        assert!(params.n > 0 && params.ack_every > 0, "bad parameters");
        assert!(params.colours() < NONE as usize, "too many colours");
        Self {
            queues: vec![VecDeque::new(); params.n],
            memory: vec![NONE; params.colours()],
            departures: vec![0; params.n],
            returned: VecDeque::new(),
            next_colour: 0,
            rng: Rng::new(seed),
            params,
        }
    }

    /// The parameters of this run.
    pub fn params(&self) -> &RecycledParams {
        &self.params
    }

    /// Runs one step (departures, then arrivals).
    pub fn step(&mut self) -> StepStats {
        let p = &self.params;
        let mut forgets = 0;
        for (bin, q) in self.queues.iter_mut().enumerate() {
            let x = q.len();
            let Some(colour) = q.pop_front() else {
                continue;
            };
            // Departures since this bin last returned a colour; every k-th one is returned.
            self.departures[bin] += 1;
            let returned = self.departures[bin] == p.ack_every as u64;
            if returned {
                self.departures[bin] = 0;
            }
            let mem = &mut self.memory[colour as usize];
            if returned && x <= p.tau {
                if *mem == NONE {
                    *mem = bin as u32;
                }
                if p.feedback == Feedback::Immediate {
                    self.returned.push_back(colour);
                }
            } else if *mem != NONE {
                *mem = NONE;
                forgets += 1;
            }
        }
        let mut random_throws = 0;
        let colours = p.colours();
        for _ in 0..batch_size(&mut self.rng, p.lambda, p.n) {
            let colour = match p.feedback {
                Feedback::Immediate => match self.returned.pop_front() {
                    Some(c) => c as usize,
                    None => {
                        // Explore: a fresh colour, which forgets any bin from an earlier life.
                        let c = self.next_colour;
                        self.next_colour = (c + 1) % colours;
                        self.memory[c] = NONE;
                        c
                    }
                },
                Feedback::RoundRobin => {
                    let c = self.next_colour;
                    self.next_colour = (c + 1) % colours;
                    c
                }
            };
            let bin = match self.memory[colour] {
                NONE => {
                    random_throws += 1;
                    self.rng.below(p.n as u64) as usize
                }
                b => b as usize,
            };
            self.queues[bin].push_back(colour as u32);
        }
        StepStats {
            max_load: self
                .queues
                .iter()
                .map(|q| q.len() as u32)
                .max()
                .unwrap_or(0),
            random_throws,
            forgets,
            total_balls: self.queues.iter().map(|q| q.len() as u64).sum(),
        }
    }

    /// The current load of every bin.
    pub fn loads(&self) -> Vec<u32> {
        self.queues.iter().map(|q| q.len() as u32).collect()
    }

    /// Number of colours that currently remember a bin.
    pub fn remembering(&self) -> usize {
        self.memory.iter().filter(|&&m| m != NONE).count()
    }

    /// True when the state is a fixed point: every ball's colour remembers the bin the ball sits
    /// in, each colour has at most one ball, and no bin holds more than `tau` balls (for
    /// [`Feedback::RoundRobin`] also: every colour remembers a bin and every bin owns exactly
    /// `colours_per_bin` colours).
    pub fn is_converged_state(&self) -> bool {
        let p = &self.params;
        if p.feedback == Feedback::RoundRobin {
            let mut owned = vec![0usize; p.n];
            for &m in &self.memory {
                if m == NONE {
                    return false;
                }
                owned[m as usize] += 1;
            }
            if owned.iter().any(|&o| o != p.colours_per_bin) {
                return false;
            }
        }
        let mut seen = vec![false; self.memory.len()];
        for (bin, q) in self.queues.iter().enumerate() {
            if q.len() > p.tau {
                return false;
            }
            for &c in q {
                if self.memory[c as usize] as usize != bin || seen[c as usize] {
                    return false;
                }
                seen[c as usize] = true;
            }
        }
        true
    }
}

/// Result of running the recycled process for a fixed number of rounds.
#[derive(Clone, Debug)]
pub struct RecycledRun {
    /// Maximum load after each round.
    pub max_load: Vec<u32>,
    /// First round from which every later round was settled (no random throw, no forget, no
    /// bin above `tau`) through the end of the run; `None` if the last round was not settled.
    pub converged_at: Option<usize>,
    /// Whether the final state passes [`Recycled::is_converged_state`].
    pub final_state_converged: bool,
}

/// Runs the recycled process for `rounds` steps from `seed`.
pub fn run(params: &RecycledParams, rounds: usize, seed: u64) -> RecycledRun {
    let mut sim = Recycled::new(params.clone(), seed);
    let mut max_load = Vec::with_capacity(rounds);
    let mut last_unsettled: Option<usize> = None;
    for r in 0..rounds {
        let s = sim.step();
        if !s.settled(params.tau) {
            last_unsettled = Some(r);
        }
        max_load.push(s.max_load);
    }
    let converged_at = match last_unsettled {
        None => Some(0),
        Some(r) if r + 1 < rounds => Some(r + 1),
        Some(_) => None,
    };
    RecycledRun {
        max_load,
        converged_at,
        final_state_converged: sim.is_converged_state(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paper_parameters() {
        let p = RecycledParams::paper(16);
        assert_eq!((p.tau, p.colours_per_bin, p.colours()), (11, 7, 112));
        let p = RecycledParams::paper(32);
        assert_eq!((p.tau, p.colours_per_bin), (13, 9));
    }

    /// `run`'s `converged_at` is the first round of the settled tail: replaying the same seed
    /// step by step, the round before it is unsettled and every round from it on is settled.
    #[test]
    fn converged_at_starts_the_settled_tail() {
        let p = RecycledParams::paper(16);
        let rounds = 400;
        let run = run(&p, rounds, 4);
        let at = run
            .converged_at
            .expect("n = 16 converges within 400 rounds");
        assert!(at > 0 && run.final_state_converged);
        let mut sim = Recycled::new(p.clone(), 4);
        let steps: Vec<StepStats> = (0..rounds).map(|_| sim.step()).collect();
        assert!(!steps[at - 1].settled(p.tau));
        assert!(steps[at..].iter().all(|s| s.settled(p.tau)));
        assert_eq!(
            run.max_load,
            steps.iter().map(|s| s.max_load).collect::<Vec<_>>()
        );
        // Settled at full rate: every bin busy, each departure replaced by one arrival.
        assert!(steps[at..]
            .iter()
            .all(|s| s.total_balls == steps[at].total_balls));
        assert!(sim.is_converged_state() && sim.remembering() >= 16);
    }

    #[test]
    fn full_rate_conserves_once_all_bins_busy() {
        let mut sim = Recycled::new(RecycledParams::paper(16), 9);
        let mut prev = 0;
        for _ in 0..500 {
            let busy = sim.loads().iter().filter(|&&l| l > 0).count() as u64;
            let s = sim.step();
            assert_eq!(s.total_balls, prev + 16 - busy);
            prev = s.total_balls;
        }
    }
}
