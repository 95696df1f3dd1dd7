//! The `repsim` command-line tool.
fn main() {}
