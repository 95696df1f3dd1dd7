//! Balls-into-bins models behind REPS (paper Section 5, Appendices B and C.1, Section 4.5.2).

pub mod ops;
pub mod recycled;
pub mod rng;
