//! Progress bar for long runs (on a terminal only): simulated time, events/s and an ETA.
use std::time::{Duration, Instant};

use indicatif::{MultiProgress, ProgressBar, ProgressFinish, ProgressStyle};
use repsim::engine::time::to_us;
use repsim::Simulation;

/// Steps of the bar (position is a fraction of the work, in thousandths).
const STEPS: u64 = 1000;

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

/// A progress bar for one simulation; hidden when progress is off.
pub struct Progress {
    bar: ProgressBar,
    started: Instant,
    total_bytes: u64,
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
        }
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
        let by_bytes = if arriving {
            0.0
        } else {
            let delivered: u64 = sim.flows().iter().map(|f| f.delivered).sum();
            let total: u64 = sim.flows().iter().map(|f| f.spec.bytes).sum();
            delivered as f64 / total.max(self.total_bytes) as f64
        };
        let by_time = sim.now() as f64 / sim.config().end.max(1) as f64;
        let frac = by_bytes.max(by_time).clamp(0.0, 1.0);
        let secs = self.started.elapsed().as_secs_f64().max(1e-9);
        self.bar.set_position((frac * STEPS as f64) as u64);
        self.bar.set_message(format!(
            "t = {:.1} us, {:.2} M events/s{}",
            to_us(sim.now()),
            sim.counters().events as f64 / secs / 1e6,
            if arriving { ", flows arriving" } else { "" }
        ));
    }

    /// Removes the bar.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}
