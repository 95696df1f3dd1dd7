//! `--max-events`, `--max-wall`, `--max-memory` and `--stall-after`, flattened into `repsim run`.
use std::time::Duration;

use clap::Args;
use repsim_experiment::limits::{parse_memory, parse_stall, parse_wall, Limits, StallAfter};

/// The resource limits of `repsim run`.
#[derive(Args, Clone, Debug)]
pub struct LimitArgs {
    /// Stop after this many events over all runs (checked every 50 us of simulated time);
    /// the outputs so far are written and marked incomplete, and the command fails.
    #[arg(long, value_name = "N")]
    pub max_events: Option<u64>,
    /// Stop after this much wall-clock time (`90s`, `10m`, `2h`, `500ms`), as `--max-events`.
    #[arg(long, value_name = "DUR", value_parser = parse_wall)]
    pub max_wall: Option<Duration>,
    /// Stop when this process's resident memory exceeds SIZE (`8GiB`, `500MB`), as
    /// `--max-events`.
    #[arg(long, value_name = "SIZE", value_parser = parse_memory)]
    pub max_memory: Option<u64>,
    /// End a run early, reported as stalled, when flows are running but no data packet has
    /// reached its receiver for this much simulated time (`off`: never).
    #[arg(long, value_name = "DUR", default_value = "100ms", value_parser = parse_stall)]
    pub stall_after: StallAfter,
}

impl From<LimitArgs> for Limits {
    fn from(a: LimitArgs) -> Self {
        Limits {
            max_events: a.max_events,
            max_wall: a.max_wall,
            max_memory: a.max_memory,
            stall_after: a.stall_after,
            cancel: None,
        }
    }
}
