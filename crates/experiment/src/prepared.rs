//! One load balancer's run of a scenario, built and checked, then simulated with progress,
//! limits and collection: what `run`, `bench` and the scale benchmark share.
use std::time::Instant;

use anyhow::{Context, Result};
use repsim::engine::time::{Time, US};
use repsim::metrics::collect::CollectConfig;
use repsim::scenario::{LbRun, LoadedScenario};
use repsim::RunSpec;
use repsim::Simulation;

use repsim::sim::parallel::{run_on_threads_watched, Checkpoint, Detail, Verdict, Watch};
use repsim::sim::SetupError;

use crate::limits::{Checked, Limiter, RunView, Stop};
use crate::progress::{Bars, Progress, View as ProgressView};

/// Simulated time between the checks of limits, stalls and the bar's full update.
const STEP: Time = 50 * US;
/// Simulated time between the cheap checks (events, wall clock, cancel) and bar ticks, when
/// an event or wall-clock limit is set or a bar is drawn.
const FINE_STEP: Time = US;

/// What `--collect` asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CollectMode {
    /// The scenario's `[collect]` section (nothing if it has none).
    Scenario,
    /// Every port, queue samples and cwnd traces, 20 us buckets.
    All,
    /// Nothing.
    None,
}

crate::named_values!(CollectMode, "collect mode", {
    Scenario => "scenario",
    All => "all",
    None => "none",
});

impl CollectMode {
    /// The collector configuration for `scn` on `topo`.
    pub fn config(
        self,
        scn: &LoadedScenario,
        topo: &repsim::net::Topology,
    ) -> Result<Option<CollectConfig>> {
        Ok(match self {
            CollectMode::Scenario => scn.collect_config(topo)?,
            CollectMode::All => Some(CollectConfig::all()),
            CollectMode::None => None,
        })
    }
}

/// One load balancer's run, built and checked but not started.
pub struct Prepared {
    /// The run as the scenario built it.
    pub(crate) built: RunSpec,
    /// What to collect while it runs (`None`: nothing).
    pub(crate) collect: Option<CollectConfig>,
    /// The load balancer's run it was built from (a run on threads builds it once per
    /// partition).
    run: LbRun,
    /// The seed override it was built with.
    seed: Option<u64>,
}

impl Prepared {
    /// Builds run `run` of `scn` and resolves what to collect; fails on any set-up error.
    pub fn new(
        scn: &LoadedScenario,
        run: &LbRun,
        seed: Option<u64>,
        collect: CollectMode,
    ) -> Result<Self> {
        let built = scn.build_run(run, seed)?;
        let collect = collect.config(scn, &built.topology)?;
        Ok(Prepared {
            built,
            collect,
            run: run.clone(),
            seed,
        })
    }

    /// [`Self::simulate_unlimited`] on `threads` threads (one: exactly that): the network
    /// splits into partitions, each built from the scenario again
    /// ([`repsim::sim::parallel::run_on_threads`]).
    pub fn simulate_on_threads(
        self,
        scn: &LoadedScenario,
        threads: u32,
        bars: Bars,
    ) -> Result<(Simulation, f64)> {
        let label = self.run.label.clone();
        let (sim, wall, _) =
            self.simulate_on_threads_limited(scn, &label, threads, bars, &mut Limiter::none())?;
        Ok((sim, wall))
    }

    /// [`Self::simulate`] on `threads` threads without streaming (one: exactly that). The
    /// threads meet at the instants where one thread checks its limits and moves its bar
    /// (every 50 us of simulated time, every microsecond when an event or wall-clock limit is
    /// set or the bar is shown), so a stalled run ends at the instant it would on one thread,
    /// with the same files.
    pub fn simulate_on_threads_limited(
        self,
        scn: &LoadedScenario,
        lb: &str,
        threads: u32,
        bars: Bars,
        limiter: &mut Limiter,
    ) -> Result<(Simulation, f64, Option<Stop>)> {
        if threads <= 1 {
            return self.simulate(scn, lb, bars, false, limiter, &mut |_| Ok(()));
        }
        let (run, seed) = (&self.run, self.seed);
        let started = Instant::now();
        let collect = self.collect;
        let build = |built: RunSpec| -> std::result::Result<Simulation, SetupError> {
            let mut sim = Simulation::new(built)?;
            if let Some(c) = &collect {
                sim.enable_collection(c.clone())?;
            }
            Ok(sim)
        };
        let first = build(self.built)
            .with_context(|| format!("setting up {} with {lb}", scn.path.display()))?;
        let bar = Progress::new(lb, &first, bars);
        let (end, arriving) = (first.config().end, first.flows_to_come());
        let total: u64 = first.flows().iter().map(|f| f.spec.bytes).sum();
        let spare = std::sync::Mutex::new(Some(first));
        let every = if limiter.checks_finely() || bar.is_visible() {
            FINE_STEP
        } else {
            STEP
        };
        limiter.start_run();
        let mut stop = None;
        let mut check = |point: &Checkpoint, detail: Option<&Detail>| -> Verdict {
            let view = RunView {
                now: point.now,
                events: point.events,
                data_delivered: point.data_delivered,
            };
            let step_end = point.now.is_multiple_of(STEP);
            if let Some(detail) = detail {
                if step_end {
                    if let Checked::Stop(s) = limiter.check_at(&view, Some(&detail.running)) {
                        stop = Some(s);
                        return Verdict::Stop;
                    }
                }
                bar.show(&ProgressView {
                    now: point.now,
                    end,
                    events: point.events,
                    payload: (!arriving).then_some((detail.payload_delivered, total)),
                });
                return Verdict::Go;
            }
            let checked = if step_end {
                limiter.check_at(&view, None)
            } else {
                limiter
                    .check_fine_at(&view)
                    .map_or(Checked::Go, Checked::Stop)
            };
            match checked {
                Checked::Stop(s) => {
                    stop = Some(s);
                    Verdict::Stop
                }
                Checked::ShowRunning => Verdict::Detail,
                Checked::Go if bar.due() || (step_end && bar.is_visible()) => Verdict::Detail,
                Checked::Go => Verdict::Go,
            }
        };
        let watch = Watch {
            every,
            check: &mut check,
        };
        let sim = run_on_threads_watched(
            threads,
            || {
                let first = spare.lock().unwrap_or_else(|p| p.into_inner()).take();
                match first {
                    Some(sim) => Ok(sim),
                    None => build(
                        scn.build_run(run, seed)
                            .map_err(|e| SetupError::Invalid(format!("{e:#}")))?,
                    ),
                }
            },
            Some(watch),
        )
        .with_context(|| {
            format!(
                "running {} with {} on {threads} threads",
                scn.path.display(),
                run.label
            )
        })?;
        bar.finish();
        limiter.end_run(sim.counters().events);
        Ok((sim, started.elapsed().as_secs_f64(), stop))
    }

    /// Runs the simulation to completion without streaming or limits (benchmarks), with a
    /// progress bar where `bars` says; returns it with the wall-clock seconds it took.
    pub fn simulate_unlimited(
        self,
        scn: &LoadedScenario,
        lb: &str,
        bars: Bars,
    ) -> Result<(Simulation, f64)> {
        let (sim, wall, _) =
            self.simulate(scn, lb, bars, false, &mut Limiter::none(), &mut |_| Ok(()))?;
        Ok((sim, wall))
    }

    /// Runs the simulation to completion, showing a progress bar where `bars` says; returns it
    /// with the wall-clock seconds it took, and why it stopped early if `limiter` stopped it.
    /// With `stream`, finished flows leave the simulation as it goes
    /// ([`Simulation::drop_finished_prefix`]) and `on_step` gets the simulation after every
    /// step to take them.
    pub fn simulate(
        self,
        scn: &LoadedScenario,
        lb: &str,
        bars: Bars,
        stream: bool,
        limiter: &mut Limiter,
        on_step: &mut dyn FnMut(&mut Simulation) -> Result<()>,
    ) -> Result<(Simulation, f64, Option<Stop>)> {
        let started = Instant::now();
        let mut sim = Simulation::new(self.built)
            .with_context(|| format!("setting up {} with {lb}", scn.path.display()))?;
        if let Some(c) = self.collect {
            sim.enable_collection(c)?;
        }
        if stream {
            sim.stream_finished();
        }
        let bar = Progress::new(lb, &sim, bars);
        let step = STEP;
        let mut t = 0;
        limiter.start_run();
        let mut stop = None;
        loop {
            t += step;
            // Event and wall-clock limits are checked, and a visible bar moved, every
            // microsecond of simulated time (a big fabric runs millions of events in one 50 us
            // step: the 131,072-host scale step, whose flows finish by 61 us, is two such steps
            // and 7.5 minutes); the rest every step. Results do not depend on where the run
            // pauses.
            let mut more = true;
            if limiter.checks_finely() || bar.is_visible() {
                let mut sub = t - step;
                while more && stop.is_none() && sub < t {
                    sub += FINE_STEP;
                    more = sim.run_until(sub);
                    stop = limiter.check_fine(&sim);
                    bar.tick(&sim);
                }
            } else {
                more = sim.run_until(t);
            }
            on_step(&mut sim)?;
            bar.update(&sim);
            if stop.is_some() || !more {
                break;
            }
            stop = limiter.check(&sim);
            if stop.is_some() {
                break;
            }
        }
        bar.finish();
        limiter.end_run(sim.counters().events);
        Ok((sim, started.elapsed().as_secs_f64(), stop))
    }
}

/// Peak resident memory of this process in bytes (Linux), if known.
pub fn peak_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}
