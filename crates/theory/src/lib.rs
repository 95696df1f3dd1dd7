//! Balls-into-bins models behind REPS (paper Section 5, Appendices B and C.1, Section 4.5.2).
//!
//! * [`ops`]: batched balls-into-bins with uniform placement (oblivious packet spraying).
//! * [`recycled`]: recycled balls-into-bins (REPS), with optional ACK coalescing.
//! * [`ev`]: load imbalance of entropy-value sets through the simulator's ECMP hash.
//! * [`rng`]: the seeded xoshiro256** generator the models draw from.
//!
//! The studies that run these models and draw them (`repsim theory <model>`) are
//! `repsim_figures::models`.

#![warn(missing_docs)]

pub mod ev;
pub mod ops;
pub mod recycled;
pub mod rng;
