//! Charts for repsim, drawn in pure Rust with an embedded font: PNG and SVG line, bar and grid
//! charts ([`chart`]), and the standard plots of a run directory ([`runs`]) that `repsim
//! report` and the paper figures draw.
#![warn(missing_docs)]

pub mod chart;
pub mod runs;
