//! Bounded resources for `repsim run`: `--max-events`, `--max-wall`, `--max-memory` stop the
//! command cleanly (partial outputs marked incomplete), and `--stall-after` ends a run early,
//! reported as stalled, when its running flows deliver nothing for that much simulated time.
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use repsim::engine::time::{to_us, Time};
use repsim::Simulation;

/// The resource limits of a scenario's runs (`repsim run`'s `--max-*` and `--stall-after`).
#[derive(Clone, Debug, Default)]
pub struct Limits {
    /// Stop after this many events over all runs (checked every 50 us of simulated time);
    /// the outputs so far are written and marked incomplete, and the command fails.
    pub max_events: Option<u64>,
    /// Stop after this much wall-clock time (`90s`, `10m`, `2h`, `500ms`), as `--max-events`.
    pub max_wall: Option<Duration>,
    /// Stop when this process's resident memory exceeds SIZE (`8GiB`, `500MB`), as
    /// `--max-events`.
    pub max_memory: Option<u64>,
    /// End a run early, reported as stalled, when flows are running but no data packet has
    /// reached its receiver for this much simulated time (`off`: never).
    pub stall_after: StallAfter,
    /// Set from outside (the Python package on Ctrl-C) to stop the runs as `--max-wall` does.
    pub cancel: Option<Arc<AtomicBool>>,
}

impl Limits {
    /// The limits of `repsim run` given no flag: none, and stall detection after 100 ms (the
    /// library's `Default` has stall detection off).
    pub fn run_defaults() -> Self {
        Limits {
            stall_after: StallAfter(Some(100 * repsim::engine::time::MS)),
            ..Self::default()
        }
    }
}

/// `--stall-after`: the simulated time without delivery that makes a run stalled (`None`: off).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StallAfter(pub Option<Time>);

/// Why a run stopped before its end.
#[derive(Clone, Debug, PartialEq)]
pub enum Stop {
    /// A resource limit was reached: the command stops, its outputs are incomplete.
    Limit(String),
    /// The run's flows made no progress: the run ends, the next one goes on.
    Stalled(String),
}

/// Checks a command's limits as its runs go on.
pub struct Limiter {
    args: Limits,
    started: Instant,
    /// Events of the runs already finished.
    events_before: u64,
    /// Last simulated time a data packet was delivered (or the run started).
    last_progress: Time,
    /// Data packets delivered at `last_progress`.
    delivered: u64,
}

impl Limiter {
    /// Whether [`Limits::cancel`] is set.
    pub fn cancelled(args: &Limits) -> bool {
        args.cancel
            .as_ref()
            .is_some_and(|c| c.load(Ordering::Relaxed))
    }

    /// Limits counted from now.
    pub fn new(args: Limits) -> Self {
        Limiter {
            args,
            started: Instant::now(),
            events_before: 0,
            last_progress: 0,
            delivered: 0,
        }
    }

    /// No limit at all (`repsim bench`).
    pub fn none() -> Self {
        Self::new(Limits::default())
    }

    /// A new run starts.
    pub fn start_run(&mut self) {
        self.last_progress = 0;
        self.delivered = 0;
    }

    /// A run ended after `events` events.
    pub fn end_run(&mut self, events: u64) {
        self.events_before += events;
    }

    /// Whether an event or wall-clock limit is set (checked within steps).
    pub fn checks_finely(&self) -> bool {
        self.args.max_events.is_some() || self.args.max_wall.is_some() || self.args.cancel.is_some()
    }

    /// The cheap checks (events, wall clock), made often within a step.
    pub fn check_fine(&self, sim: &Simulation) -> Option<Stop> {
        self.check_fine_at(&RunView::of(sim))
    }

    /// [`Self::check_fine`] on what `view` says of the run.
    pub fn check_fine_at(&self, view: &RunView) -> Option<Stop> {
        if Self::cancelled(&self.args) {
            return Some(Stop::Limit(format!(
                "interrupted at simulated time {:.1} us",
                to_us(view.now)
            )));
        }
        let events = self.events_before + view.events;
        if let Some(max) = self.args.max_events.filter(|&m| events > m) {
            return Some(Stop::Limit(format!(
                "--max-events {max} reached ({events} events, simulated time {:.1} us)",
                to_us(view.now)
            )));
        }
        if let Some(max) = self.args.max_wall.filter(|&m| self.started.elapsed() > m) {
            return Some(Stop::Limit(format!(
                "--max-wall {max:?} reached ({:.1} s of wall time, simulated time {:.1} us)",
                self.started.elapsed().as_secs_f64(),
                to_us(view.now)
            )));
        }
        None
    }

    /// Whether `sim` (after a step) must stop, and why: every limit, and stalls.
    pub fn check(&mut self, sim: &Simulation) -> Option<Stop> {
        match self.check_at(&RunView::of(sim), None) {
            Checked::Go => None,
            Checked::Stop(stop) => Some(stop),
            Checked::ShowRunning => {
                let running = sim.checkpoint_detail().running;
                match self.check_at(&RunView::of(sim), Some(&running)) {
                    Checked::Stop(stop) => Some(stop),
                    _ => None,
                }
            }
        }
    }

    /// [`Self::check`] on what `view` says of the run (after a step): every limit, and
    /// stalls, for which it may need the ids of the running flows (in flow order) and asks
    /// for them when `running` does not give them.
    pub fn check_at(&mut self, view: &RunView, running: Option<&[u64]>) -> Checked {
        if let Some(stop) = self.check_fine_at(view) {
            return Checked::Stop(stop);
        }
        if let Some(max) = self.args.max_memory {
            if let Some(rss) = resident_bytes().filter(|&r| r > max) {
                return Checked::Stop(Stop::Limit(format!(
                    "--max-memory {max} bytes reached ({rss} bytes resident, simulated time {:.1} \
                     us)",
                    to_us(view.now)
                )));
            }
        }
        self.check_stall(view, running)
    }

    fn check_stall(&mut self, view: &RunView, running: Option<&[u64]>) -> Checked {
        let Some(after) = self.args.stall_after.0 else {
            return Checked::Go;
        };
        if view.data_delivered != self.delivered {
            self.delivered = view.data_delivered;
            self.last_progress = view.now;
            return Checked::Go;
        }
        if view.now.saturating_sub(self.last_progress) < after {
            return Checked::Go;
        }
        let Some(running) = running else {
            return Checked::ShowRunning;
        };
        if running.is_empty() {
            // Nothing is trying to send (flows wait for their start): not a stall.
            self.last_progress = view.now;
            return Checked::Go;
        }
        let shown: Vec<String> = running.iter().take(8).map(|id| id.to_string()).collect();
        let more = if running.len() > shown.len() {
            ", ..."
        } else {
            ""
        };
        Checked::Stop(Stop::Stalled(format!(
            "run stalled: no data packet delivered from t = {:.1} us to {:.1} us (--stall-after \
             {:.1} us) while {} flow(s) were running (ids {}{more}); ended early",
            to_us(self.last_progress),
            to_us(view.now),
            to_us(after),
            running.len(),
            shown.join(", ")
        )))
    }
}

/// What the limits read of a run after a step.
#[derive(Clone, Copy, Debug)]
pub struct RunView {
    /// Simulated time reached.
    pub now: Time,
    /// Events of this run so far.
    pub events: u64,
    /// Data packets delivered so far.
    pub data_delivered: u64,
}

impl RunView {
    /// What `sim` says.
    pub fn of(sim: &Simulation) -> Self {
        RunView {
            now: sim.now(),
            events: sim.counters().events,
            data_delivered: sim.counters().data_delivered,
        }
    }
}

/// The outcome of [`Limiter::check_at`].
#[derive(Clone, Debug, PartialEq)]
pub enum Checked {
    /// Go on.
    Go,
    /// Stop the run.
    Stop(Stop),
    /// Ask again with the running flows' ids.
    ShowRunning,
}

/// This process's resident memory in bytes (Linux), if known.
fn resident_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Parses a wall-clock duration: a number with `ms`, `s`, `m` or `h`.
pub fn parse_wall(s: &str) -> Result<Duration, String> {
    let err = || {
        format!(
            "invalid duration '{s}': write a number followed by ms, s, m or h (e.g. '90s', '10m')"
        )
    };
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .ok_or_else(err)?;
    let (num, unit) = t.split_at(split);
    let n: f64 = num.parse().map_err(|_| err())?;
    let secs = match unit.trim() {
        "ms" => n / 1e3,
        "s" => n,
        "m" | "min" => n * 60.0,
        "h" => n * 3600.0,
        _ => return Err(err()),
    };
    Duration::try_from_secs_f64(secs).map_err(|_| err())
}

/// Parses a memory size in bytes (`8GiB`, `500MB`; not packets).
pub fn parse_memory(s: &str) -> Result<u64, String> {
    match repsim::units::parse_size(s)? {
        repsim::units::Size::Bytes(b) if b > 0 => Ok(b),
        _ => Err(format!(
            "invalid memory size '{s}': write a positive number of bytes with B, KB, KiB, MB, \
             MiB, GB or GiB (e.g. '8GiB')"
        )),
    }
}

/// Parses `--stall-after`: a simulated time (`100ms`) or `off`.
pub fn parse_stall(s: &str) -> Result<StallAfter, String> {
    if s.trim() == "off" {
        return Ok(StallAfter(None));
    }
    match repsim::units::parse_time(s)? {
        0 => Err(format!(
            "invalid --stall-after '{s}': must be positive, or 'off'"
        )),
        t => Ok(StallAfter(Some(t))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_limits() {
        assert_eq!(parse_wall("90s").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_wall("2m").unwrap(), Duration::from_secs(120));
        assert_eq!(parse_wall("500ms").unwrap(), Duration::from_millis(500));
        assert!(parse_wall("90").unwrap_err().contains("ms, s, m or h"));
        assert!(parse_wall("-1s").is_err());
        assert_eq!(parse_memory("1GiB").unwrap(), 1 << 30);
        assert!(parse_memory("10pkt").unwrap_err().contains("bytes"));
        assert_eq!(parse_stall("off").unwrap(), StallAfter(None));
        // The flag's default is what a library run gets.
        assert_eq!(
            parse_stall("100ms").unwrap(),
            Limits::run_defaults().stall_after
        );
        assert!(parse_stall("0ms").unwrap_err().contains("positive"));
        assert_eq!(
            parse_stall("1ms").unwrap(),
            StallAfter(Some(repsim::engine::time::MS))
        );
    }
}
