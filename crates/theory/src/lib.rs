//! Balls-into-bins models behind REPS (paper Section 5, Appendices B and C.1, Section 4.5.2).
//!
//! * [`ops`]: batched balls-into-bins with uniform placement (oblivious packet spraying).
//! * [`recycled`]: recycled balls-into-bins (REPS), with optional ACK coalescing.
//! * [`ev`]: load imbalance of entropy-value sets through the simulator's ECMP hash.
//! * [`plot`]: PNG + SVG line and bar charts, also used by the simulator's `repsim` plots.
//! * [`cli`]: the `repsim theory ...` subcommands.
//! * [`rng`]: the seeded xoshiro256** generator the models draw from.

#![warn(missing_docs)]

pub mod cli;
pub mod ev;
pub mod ops;
pub mod plot;
pub mod recycled;
pub mod rng;
