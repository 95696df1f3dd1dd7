//! REPS placeholder (being written).
#![no_std]
