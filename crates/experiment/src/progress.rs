//! Progress bar for long runs (on a terminal only): simulated time, events/s and an ETA.
use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use indicatif::{MultiProgress, ProgressBar, ProgressFinish, ProgressStyle};
use repsim::engine::time::{to_us, Time};
use repsim::Simulation;

/// Steps of the bar (position is a fraction of the work, in thousandths).
const STEPS: u64 = 1000;

/// Least wall time between two updates from [`Progress::tick`].
const TICK: Duration = Duration::from_millis(200);

/// Where a run's progress bar is drawn.
#[derive(Clone, Copy)]
pub enum Bars<'a> {
    /// Nowhere (not a terminal, `--quiet`, or a benchmark).
    Hidden,
    /// On its own (one run at a time).
    Alone,
    /// Among the bars of the runs beside it (`repsim run -j N`).
    Among(&'a MultiProgress),
}

impl Bars<'_> {
    /// On its own when `shown`, else nowhere.
    pub fn alone_if(shown: bool) -> Self {
        if shown {
            Bars::Alone
        } else {
            Bars::Hidden
        }
    }
}

/// Whether a command shows progress bars: on a terminal, unless asked to be quiet.
pub fn wanted(quiet: bool) -> bool {
    !quiet && std::io::stderr().is_terminal()
}

/// What a progress bar shows of a run.
#[derive(Clone, Copy, Debug)]
pub struct View {
    /// Simulated time reached.
    pub now: Time,
    /// The run's end time.
    pub end: Time,
    /// Events run so far.
    pub events: u64,
    /// Payload bytes delivered and to deliver, unless flows are still arriving (then only
    /// time counts).
    pub payload: Option<(u64, u64)>,
}

/// A progress bar for one simulation; hidden when progress is off.
pub struct Progress {
    bar: ProgressBar,
    started: Instant,
    total_bytes: u64,
    /// When the bar's position and message were last set.
    updated: Mutex<Instant>,
}

impl Progress {
    /// A bar for `lb`, drawn where `bars` says.
    pub fn new(lb: &str, sim: &Simulation, bars: Bars) -> Self {
        // Cleared when dropped unfinished too (a run that failed or panicked).
        let fresh = || ProgressBar::new(STEPS).with_finish(ProgressFinish::AndClear);
        let bar = match bars {
            Bars::Hidden => ProgressBar::hidden(),
            Bars::Alone => fresh(),
            Bars::Among(multi) => multi.add(fresh()),
        };
        Self::with_bar(bar, lb, sim)
    }

    /// A progress display on `bar`, styled and labelled `lb`.
    fn with_bar(bar: ProgressBar, lb: &str, sim: &Simulation) -> Self {
        bar.set_style(
            ProgressStyle::with_template(
                "{prefix:>6} [{bar:30.cyan/blue}] {percent:>3}%  {msg}  ETA {eta}",
            )
            .expect("valid template")
            .progress_chars("=> "),
        );
        bar.set_prefix(lb.to_string());
        bar.enable_steady_tick(Duration::from_millis(250));
        let total_bytes = sim.flows().iter().map(|f| f.spec.bytes).sum::<u64>().max(1);
        Progress {
            bar,
            started: Instant::now(),
            total_bytes,
            updated: Mutex::new(Instant::now()),
        }
    }

    /// Whether the bar is drawn (a terminal, and not hidden on purpose).
    pub fn is_visible(&self) -> bool {
        !self.bar.is_hidden()
    }

    /// [`Self::update`], unless the last update is less than [`TICK`] old: for calls within a
    /// step, which come every microsecond of simulated time (on a small fabric far more often
    /// than the flows' bytes are worth summing; on the 131,072-host scale step about every 7 s,
    /// 22 M events at 3 M events/s).
    pub fn tick(&self, sim: &Simulation) {
        if self.is_visible() && self.last_update().elapsed() >= TICK {
            self.update(sim);
        }
    }

    fn last_update(&self) -> Instant {
        *self.updated.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether a visible bar's last update is at least [`TICK`] old.
    pub fn due(&self) -> bool {
        self.is_visible() && self.last_update().elapsed() >= TICK
    }

    /// Updates the bar from the simulation's state. Progress is the larger of the share of
    /// payload delivered and the share of simulated time to the end used; while a workload
    /// source still starts flows, the payload to come is unknown and only time counts (the
    /// flows held so far would read as nearly done).
    pub fn update(&self, sim: &Simulation) {
        if self.bar.is_hidden() {
            return;
        }
        let arriving = sim.flows_to_come();
        let payload = (!arriving).then(|| {
            let delivered: u64 = sim.flows().iter().map(|f| f.delivered).sum();
            let total: u64 = sim.flows().iter().map(|f| f.spec.bytes).sum();
            (delivered, total)
        });
        self.show(&View {
            now: sim.now(),
            end: sim.config().end,
            events: sim.counters().events,
            payload,
        });
    }

    /// Updates the bar from `view` (a run on threads has no one simulation to read).
    pub fn show(&self, view: &View) {
        if self.bar.is_hidden() {
            return;
        }
        *self.updated.lock().unwrap_or_else(|p| p.into_inner()) = Instant::now();
        let by_bytes = view.payload.map_or(0.0, |(delivered, total)| {
            delivered as f64 / total.max(self.total_bytes) as f64
        });
        let by_time = view.now as f64 / view.end.max(1) as f64;
        let frac = by_bytes.max(by_time).clamp(0.0, 1.0);
        let secs = self.started.elapsed().as_secs_f64().max(1e-9);
        self.bar.set_position((frac * STEPS as f64) as u64);
        self.bar.set_message(format!(
            "t = {:.1} us, {:.2} M events/s{}",
            to_us(view.now),
            view.events as f64 / secs / 1e6,
            if view.payload.is_none() {
                ", flows arriving"
            } else {
                ""
            }
        ));
    }

    /// Removes the bar.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

#[cfg(test)]
mod tests {
    use indicatif::{ProgressDrawTarget, TermLike};
    use repsim::engine::time::US;
    use repsim::lb::LbSpec;
    use repsim::net::topology::fat_tree::FatTreeSpec;
    use repsim::{RunSpec, SimConfig};

    use super::*;

    /// A terminal that draws nowhere but counts as one (so the bar is not hidden).
    #[derive(Debug)]
    struct NoScreen;

    impl TermLike for NoScreen {
        fn width(&self) -> u16 {
            100
        }
        fn move_cursor_up(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn move_cursor_down(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn move_cursor_right(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn move_cursor_left(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn write_line(&self, _: &str) -> std::io::Result<()> {
            Ok(())
        }
        fn write_str(&self, _: &str) -> std::io::Result<()> {
            Ok(())
        }
        fn clear_line(&self) -> std::io::Result<()> {
            Ok(())
        }
        fn flush(&self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// A 16-host permutation of 1 MB flows (REPS, two-tier fat tree), 10 us into its run.
    fn running_simulation() -> Simulation {
        let tree = FatTreeSpec::uniform(2, 16, 4, 16, 1, 100_000_000_000, US, 0)
            .and_then(|spec| spec.build())
            .expect("a valid tree");
        let config = SimConfig {
            lb: LbSpec::named("reps").expect("built in"),
            ..SimConfig::default()
        };
        let flows = repsim::workload::permutation(16, 1 << 20, 0, 1);
        let mut sim = Simulation::new(RunSpec::new(config, tree, flows)).expect("set up");
        sim.run_until(10 * US);
        assert!(
            sim.flows().iter().any(|f| f.delivered > 0),
            "data delivered"
        );
        sim
    }

    #[test]
    fn a_tick_redraws_only_once_the_last_update_is_old_enough() {
        let sim = running_simulation();
        let bar = ProgressBar::with_draw_target(
            Some(STEPS),
            ProgressDrawTarget::term_like(Box::new(NoScreen)),
        );
        let progress = Progress::with_bar(bar, "reps", &sim);
        assert!(progress.is_visible());
        progress.tick(&sim);
        assert_eq!(progress.bar.position(), 0, "updated less than TICK ago");
        *progress.updated.lock().unwrap() = Instant::now() - TICK;
        progress.tick(&sim);
        assert!(progress.bar.position() > 0, "moved once TICK had passed");
    }

    #[test]
    fn a_hidden_bar_is_not_visible_and_never_moves() {
        let sim = running_simulation();
        let progress = Progress::new("reps", &sim, Bars::Hidden);
        assert!(!progress.is_visible());
        *progress.updated.lock().unwrap() = Instant::now() - TICK;
        progress.tick(&sim);
        progress.update(&sim);
        assert_eq!(progress.bar.position(), 0);
    }
}
