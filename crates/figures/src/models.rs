//! The balls-into-bins studies behind the paper's theory figures (`repsim theory <model>`): each
//! runs one model of the `theory` crate and writes CSV plus a PNG and an SVG. Every option
//! struct's `Default` is the paper's parameters.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{ensure, Context, Result};
use repsim_plot::chart::{LineChart, Scale};
use theory::ev;
use theory::ops::{self, TrialSummary};
use theory::recycled::{self, Feedback, RecycledParams};
use theory::rng::sub_seed;

/// Options of `theory ops`.
#[derive(Debug, Clone)]
pub struct OpsOptions {
    /// Output directory.
    pub out: PathBuf,
    /// Experiment seed.
    pub seed: u64,
    /// Numbers of bins (output ports).
    pub n: Vec<usize>,
    /// Arrival rate per bin (lambda * n balls per step).
    pub lambda: f64,
    /// Steps per run.
    pub rounds: usize,
    /// Independent runs averaged per n.
    pub trials: usize,
}

/// Options of the recycled model shared by `recycled`, `convergence` and `coalescing`.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelOptions {
    /// Arrival rate per bin.
    pub lambda: f64,
    /// Threshold tau (default 4 ln n; floored).
    pub tau: Option<f64>,
    /// Colours per bin b (default 2.4 ln n; rounded up).
    pub b: Option<f64>,
    /// When recycled colours are thrown again.
    pub feedback: Feedback,
}

impl ModelOptions {
    /// The recycled model's parameters for `n` bins (no ACK coalescing).
    pub fn params(&self, n: usize) -> RecycledParams {
        RecycledParams {
            lambda: self.lambda,
            feedback: self.feedback,
            ..RecycledParams::with(n, self.tau, self.b)
        }
    }
}

/// Options of `theory recycled`.
#[derive(Debug, Clone)]
pub struct RecycledOptions {
    /// Output directory.
    pub out: PathBuf,
    /// Experiment seed.
    pub seed: u64,
    /// Number of bins.
    pub n: usize,
    /// Steps.
    pub rounds: usize,
    /// Arrival rate, threshold, colours and feedback of the recycled model.
    pub model: ModelOptions,
}

/// Options of `theory convergence`.
#[derive(Debug, Clone)]
pub struct ConvergenceOptions {
    /// Output directory.
    pub out: PathBuf,
    /// Experiment seed.
    pub seed: u64,
    /// Numbers of bins.
    pub n: Vec<usize>,
    /// Seeds (runs) per n.
    pub runs: usize,
    /// Steps per run.
    pub rounds: usize,
    /// Arrival rate, threshold, colours and feedback of the recycled model.
    pub model: ModelOptions,
}

/// Options of `theory coalescing`.
#[derive(Debug, Clone)]
pub struct CoalescingOptions {
    /// Output directory.
    pub out: PathBuf,
    /// Experiment seed.
    pub seed: u64,
    /// Number of bins.
    pub n: usize,
    /// Steps per run.
    pub rounds: usize,
    /// Runs averaged per variant.
    pub trials: usize,
    /// Coalescing ratios k (recycle every k-th departure).
    pub ratios: Vec<usize>,
    /// Arrival rate, threshold, colours and feedback of the recycled model.
    pub model: ModelOptions,
}

/// Options of `theory ev-imbalance`.
#[derive(Debug, Clone)]
pub struct EvImbalanceOptions {
    /// Output directory.
    pub out: PathBuf,
    /// Experiment seed (draws the switch salts).
    pub seed: u64,
    /// Numbers of concurrent flows.
    pub flows: Vec<u32>,
    /// Uplinks of the switch.
    pub uplinks: u32,
    /// Smallest EV-set size, as a power of two.
    pub min_log2: u32,
    /// Largest EV-set size, as a power of two.
    pub max_log2: u32,
    /// Salts (switches) sampled per point.
    pub salts: usize,
}

/// Options of `theory all`.
#[derive(Debug, Clone)]
pub struct AllOptions {
    /// Parent output directory; each model writes into a subdirectory named after it.
    pub out: PathBuf,
    /// Experiment seed for every model.
    pub seed: u64,
}

impl Default for OpsOptions {
    fn default() -> Self {
        OpsOptions {
            out: "results/theory/ops".into(),
            seed: 1,
            n: vec![8, 16, 32, 64, 128],
            lambda: 0.99,
            rounds: 1000,
            trials: 500,
        }
    }
}

impl Default for ModelOptions {
    /// The paper's recycled model: full rate, `tau` and `b` from `n`, ACK-clocked feedback.
    fn default() -> Self {
        ModelOptions {
            lambda: 1.0,
            tau: None,
            b: None,
            feedback: Feedback::Immediate,
        }
    }
}

impl Default for RecycledOptions {
    fn default() -> Self {
        RecycledOptions {
            out: "results/theory/recycled".into(),
            seed: 1,
            n: 5,
            rounds: 200,
            model: ModelOptions::default(),
        }
    }
}

impl Default for ConvergenceOptions {
    fn default() -> Self {
        ConvergenceOptions {
            out: "results/theory/convergence".into(),
            seed: 1,
            n: vec![16, 32, 64, 128],
            runs: 20,
            rounds: 10_000,
            model: ModelOptions::default(),
        }
    }
}

impl Default for CoalescingOptions {
    fn default() -> Self {
        CoalescingOptions {
            out: "results/theory/coalescing".into(),
            seed: 1,
            n: 32,
            rounds: 1000,
            trials: 50,
            ratios: vec![1, 2, 4, 8],
            model: ModelOptions::default(),
        }
    }
}

impl Default for EvImbalanceOptions {
    fn default() -> Self {
        EvImbalanceOptions {
            out: "results/theory/ev-imbalance".into(),
            seed: 1,
            flows: vec![1, 32],
            uplinks: 32,
            min_log2: 4,
            max_log2: 16,
            salts: 500,
        }
    }
}

impl Default for AllOptions {
    fn default() -> Self {
        AllOptions {
            out: "results/theory".into(),
            seed: 1,
        }
    }
}

/// Writes `text` to `dir/name`, creating `dir`.
fn write_file(dir: &Path, name: &str, text: &str) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let path = dir.join(name);
    std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
    eprintln!("wrote {}", path.display());
    Ok(())
}

/// Announces a chart's files.
fn write_chart(chart: &LineChart, dir: &Path, stem: &str) -> Result<()> {
    let (png, svg) = chart.write(dir, stem)?;
    eprintln!("wrote {} and {}", png.display(), svg.display());
    Ok(())
}

/// Keeps at most about `max_points` points of a per-round series, taking the maximum of each
/// window so that peaks stay visible.
fn thin(values: &[f64], max_points: usize) -> Vec<(f64, f64)> {
    let step = values.len().div_ceil(max_points.max(1)).max(1);
    values
        .chunks(step)
        .enumerate()
        .map(|(i, c)| {
            let m = c.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            ((i * step + 1) as f64, m)
        })
        .collect()
}

/// Thins a per-round series for a logarithmic round axis: every round below `2 * resolution`,
/// then windows of `1/resolution` of the rounds before them (about `2.3 * resolution` points per
/// decade), each point the maximum of its window, placed at the window's last round.
fn thin_log(values: &[u32], resolution: usize) -> Vec<(f64, f64)> {
    let mut out = Vec::new();
    let mut start = 0;
    while start < values.len() {
        let step = (start / resolution.max(1)).max(1);
        let end = (start + step).min(values.len());
        let m = values[start..end].iter().copied().max().unwrap_or(0);
        out.push((end as f64, f64::from(m)));
        start = end;
    }
    out
}

/// A horizontal reference line over rounds `1..=rounds`.
fn hline(y: f64, rounds: usize) -> Vec<(f64, f64)> {
    vec![(1.0, y), (rounds as f64, y)]
}

/// `theory ops`: mean (over trials) of the max load after each round, per n.
pub fn run_ops(a: &OpsOptions) -> Result<()> {
    ensure!(
        a.rounds > 0 && a.trials > 0,
        "rounds and trials must be positive"
    );
    let mut csv = String::from("n,round,mean_max_load,max_max_load\n");
    let mut chart = LineChart::new(
        &format!("OPS batched balls-into-bins, lambda = {}", a.lambda),
        "round",
        &format!("max load (mean of {} runs)", a.trials),
    );
    for (i, &n) in a.n.iter().enumerate() {
        let s =
            ops::max_load_over_trials(n, a.lambda, a.rounds, a.trials, sub_seed(a.seed, i as u64));
        for r in 0..a.rounds {
            writeln!(csv, "{n},{},{:.4},{}", r + 1, s.mean[r], s.max[r])?;
        }
        chart = chart.series(&format!("n = {n}"), thin(&s.mean, 1000));
    }
    write_file(&a.out, "ops.csv", &csv)?;
    write_chart(&chart, &a.out, "ops")
}

/// `theory recycled`: one OPS run and one recycled run on the same small switch, per-bin queues.
pub fn run_recycled(a: &RecycledOptions) -> Result<()> {
    ensure!(a.n > 0 && a.rounds > 0, "n and rounds must be positive");
    let p = a.model.params(a.n);
    let mut ops_sim = ops::Ops::new(a.n, p.lambda, sub_seed(a.seed, 0));
    let mut rec_sim = recycled::Recycled::new(p.clone(), sub_seed(a.seed, 1));
    let mut csv = String::from("model,round,bin,load\n");
    let mut ops_bins = vec![Vec::new(); a.n];
    let mut rec_bins = vec![Vec::new(); a.n];
    let (mut ops_max, mut rec_max) = (Vec::new(), Vec::new());
    for r in 1..=a.rounds {
        ops_max.push(f64::from(ops_sim.step()));
        rec_max.push(f64::from(rec_sim.step().max_load));
        for (model, loads, bins) in [
            ("ops", ops_sim.loads(), &mut ops_bins),
            ("recycled", &rec_sim.loads(), &mut rec_bins),
        ] {
            for (b, &l) in loads.iter().enumerate() {
                writeln!(csv, "{model},{r},{b},{l}")?;
                bins[b].push((r as f64, f64::from(l)));
            }
        }
    }
    write_file(&a.out, "recycled.csv", &csv)?;
    let tau = p.tau as f64;
    let title = |m: &str| format!("{m}, n = {}, lambda = {}", a.n, p.lambda);
    let chart = LineChart::new(&title("Max load: OPS vs recycled"), "round", "max load")
        .series("OPS", thin(&ops_max, 2000))
        .series(
            &format!("recycled (tau = {}, b = {})", p.tau, p.colours_per_bin),
            thin(&rec_max, 2000),
        )
        .dashed("tau", hline(tau, a.rounds));
    write_chart(&chart, &a.out, "recycled")?;
    for (stem, name, bins) in [
        ("recycled_queues_ops", "OPS queues", ops_bins),
        ("recycled_queues_recycled", "Recycled queues", rec_bins),
    ] {
        let mut c = LineChart::new(&title(name), "round", "queue length (balls)");
        for (b, pts) in bins.into_iter().enumerate() {
            c = c.series(&format!("bin {b}"), pts);
        }
        let c = c.dashed("tau", hline(tau, a.rounds));
        write_chart(&c, &a.out, stem)?;
    }
    Ok(())
}

/// Outcome of one convergence run (recycled and OPS on the same n and seed index).
#[derive(Clone, Debug, PartialEq)]
pub struct ConvergenceRow {
    /// Number of bins.
    pub n: usize,
    /// Run index.
    pub run: usize,
    /// First round from which the recycled run stayed settled to the end, if any.
    pub converged_at: Option<usize>,
    /// Whether the recycled run's final state is a fixed point.
    pub final_state_converged: bool,
    /// Largest load the recycled run ever had.
    pub recycled_max_load: u32,
    /// OPS max load over the first tenth of the rounds.
    pub ops_max_first: u32,
    /// OPS max load over the last tenth of the rounds.
    pub ops_max_last: u32,
}

/// Run `run` for the `i`-th n of `a`: its row plus the recycled and OPS max-load traces.
fn convergence_run(
    a: &ConvergenceOptions,
    i: usize,
    run: usize,
) -> (ConvergenceRow, Vec<u32>, Vec<u32>) {
    let n = a.n[i];
    let p = a.model.params(n);
    let base = sub_seed(sub_seed(a.seed, i as u64), run as u64);
    let r = recycled::run(&p, a.rounds, sub_seed(base, 0));
    let o = ops::max_load_trace(n, p.lambda, a.rounds, sub_seed(base, 1));
    let tenth = (a.rounds / 10).max(1);
    let row = ConvergenceRow {
        n,
        run,
        converged_at: r.converged_at,
        final_state_converged: r.final_state_converged,
        recycled_max_load: r.max_load.iter().copied().max().unwrap_or(0),
        ops_max_first: o[..tenth].iter().copied().max().unwrap_or(0),
        ops_max_last: o[o.len() - tenth..].iter().copied().max().unwrap_or(0),
    };
    (row, r.max_load, o)
}

/// Runs the recycled model and OPS for each n and `runs` seeds; returns one row per run.
pub fn convergence_rows(a: &ConvergenceOptions) -> Vec<ConvergenceRow> {
    (0..a.n.len())
        .flat_map(|i| (0..a.runs).map(move |run| convergence_run(a, i, run).0))
        .collect()
}

/// `theory convergence`: per-run convergence table plus max-load traces of run 0.
pub fn run_convergence(a: &ConvergenceOptions) -> Result<()> {
    ensure!(
        a.rounds >= 10 && a.runs > 0,
        "need rounds >= 10 and runs > 0"
    );
    let mut csv = String::from(
        "n,run,tau,colours_per_bin,converged_at,final_state_converged,recycled_max_load,ops_max_first_tenth,ops_max_last_tenth\n",
    );
    let mut chart = LineChart::new(
        &format!(
            "Recycled vs OPS at scale, lambda = {} (run 0)",
            a.model.lambda
        ),
        "round",
        "max load",
    )
    .x_scale(Scale::Log(10.0))
    .y_scale(Scale::Log(10.0));
    for (i, &n) in a.n.iter().enumerate() {
        let p = a.model.params(n);
        for run in 0..a.runs {
            let (row, rec_trace, ops_trace) = convergence_run(a, i, run);
            writeln!(
                csv,
                "{},{},{},{},{},{},{},{},{}",
                row.n,
                row.run,
                p.tau,
                p.colours_per_bin,
                row.converged_at.map_or(String::new(), |c| c.to_string()),
                row.final_state_converged,
                row.recycled_max_load,
                row.ops_max_first,
                row.ops_max_last
            )?;
            if run == 0 {
                chart = chart
                    .series(&format!("OPS n = {n}"), thin_log(&ops_trace, 100))
                    .series(
                        &format!("recycled n = {n} (tau = {})", p.tau),
                        thin_log(&rec_trace, 100),
                    );
            }
        }
    }
    write_file(&a.out, "convergence.csv", &csv)?;
    write_chart(&chart, &a.out, "convergence")
}

/// `theory coalescing`: mean max load over time for OPS and recycled with k:1 coalescing.
pub fn run_coalescing(a: &CoalescingOptions) -> Result<()> {
    ensure!(
        a.rounds > 0 && a.trials > 0,
        "rounds and trials must be positive"
    );
    ensure!(a.ratios.iter().all(|&k| k > 0), "ratios must be positive");
    let base = a.model.params(a.n);
    let mut csv = String::from("variant,round,mean_max_load,max_max_load\n");
    let mut chart = LineChart::new(
        &format!("ACK coalescing in recycled balls-into-bins, n = {}", a.n),
        "round",
        &format!("max load (mean of {} runs)", a.trials),
    );
    let mut variants = vec![(
        "OPS".to_string(),
        ops::max_load_over_trials(a.n, base.lambda, a.rounds, a.trials, sub_seed(a.seed, 0)),
    )];
    for &k in &a.ratios {
        let p = RecycledParams {
            ack_every: k,
            ..base.clone()
        };
        let seed = sub_seed(a.seed, k as u64);
        let s = TrialSummary::over_trials(a.rounds, a.trials, |t| {
            recycled::run(&p, a.rounds, sub_seed(seed, t as u64)).max_load
        });
        variants.push((format!("recycled {k}:1"), s));
    }
    for (name, s) in &variants {
        for r in 0..a.rounds {
            writeln!(csv, "{name},{},{:.4},{}", r + 1, s.mean[r], s.max[r])?;
        }
        chart = chart.series(name, thin(&s.mean, 1000));
    }
    let chart = chart.dashed(
        &format!("tau = {}", base.tau),
        hline(base.tau as f64, a.rounds),
    );
    write_file(&a.out, "coalescing.csv", &csv)?;
    write_chart(&chart, &a.out, "coalescing")
}

/// `theory ev-imbalance`: imbalance per salt and a summary per (flows, EVs).
pub fn run_ev_imbalance(a: &EvImbalanceOptions) -> Result<()> {
    ensure!(
        a.uplinks > 0 && a.salts > 0,
        "uplinks and salts must be positive"
    );
    ensure!(
        a.min_log2 <= a.max_log2 && a.max_log2 <= 24,
        "bad EV-set size range"
    );
    let salts = ev::salts(a.seed, a.salts);
    let mut raw = String::from("flows,evs,salt,imbalance\n");
    let mut summary = String::from("flows,evs,salts,min,p5,p25,median,p75,p95,max,mean\n");
    let mut chart = LineChart::new(
        &format!(
            "EV-set load imbalance, {} uplinks ({} salts)",
            a.uplinks, a.salts
        ),
        "EV-set size",
        "load imbalance (max/mean - 1), %",
    )
    .x_scale(Scale::Log(2.0))
    .y_scale(Scale::Log(10.0));
    for &flows in &a.flows {
        let (mut med, mut p5, mut p95) = (Vec::new(), Vec::new(), Vec::new());
        for k in a.min_log2..=a.max_log2 {
            let evs = 1u32 << k;
            let v = ev::imbalances(flows, evs, a.uplinks, &salts);
            for (salt, x) in salts.iter().zip(&v) {
                writeln!(raw, "{flows},{evs},{salt},{x:.6}")?;
            }
            let s = ev::summarize(&v);
            writeln!(
                summary,
                "{flows},{evs},{},{:.6},{:.6},{:.6},{:.6},{:.6},{:.6},{:.6},{:.6}",
                a.salts, s.min, s.p5, s.p25, s.median, s.p75, s.p95, s.max, s.mean
            )?;
            let x = f64::from(evs);
            med.push((x, 100.0 * s.median));
            p5.push((x, 100.0 * s.p5));
            p95.push((x, 100.0 * s.p95));
        }
        let fl = if flows == 1 { "flow" } else { "flows" };
        chart = chart
            .series(&format!("{flows} {fl}: median"), med)
            .dashed(&format!("{flows} {fl}: 5th / 95th pct"), p95)
            .same_colour()
            .dashed("", p5)
            .same_colour();
    }
    write_file(&a.out, "ev_imbalance.csv", &raw)?;
    write_file(&a.out, "ev_imbalance_summary.csv", &summary)?;
    write_chart(&chart, &a.out, "ev_imbalance")
}

/// `theory all`: every model with its defaults, each into `<out>/<model>`.
pub fn run_all(a: &AllOptions) -> Result<()> {
    let dir = |name: &str| a.out.join(name);
    run_ops(&with_defaults::<OpsOptions>(&dir("ops"), a.seed))?;
    run_recycled(&with_defaults::<RecycledOptions>(&dir("recycled"), a.seed))?;
    run_convergence(&with_defaults::<ConvergenceOptions>(
        &dir("convergence"),
        a.seed,
    ))?;
    run_coalescing(&with_defaults::<CoalescingOptions>(
        &dir("coalescing"),
        a.seed,
    ))?;
    run_ev_imbalance(&with_defaults::<EvImbalanceOptions>(
        &dir("ev-imbalance"),
        a.seed,
    ))
}

/// A model's default options writing into `out` with `seed`.
fn with_defaults<A: Default + Seeded>(out: &Path, seed: u64) -> A {
    let mut a = A::default();
    a.place(out, seed);
    a
}

/// Options that name an output directory and a seed.
trait Seeded {
    /// Sets the output directory and the seed.
    fn place(&mut self, out: &Path, seed: u64);
}

macro_rules! seeded {
    ($($ty:ty),+) => {
        $(impl Seeded for $ty {
            fn place(&mut self, out: &Path, seed: u64) {
                self.out = out.to_path_buf();
                self.seed = seed;
            }
        })+
    };
}

seeded!(
    OpsOptions,
    RecycledOptions,
    ConvergenceOptions,
    CoalescingOptions,
    EvImbalanceOptions
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_defaults_are_the_papers() {
        let o: OpsOptions = with_defaults(Path::new("d/ops"), 7);
        assert_eq!((o.out.as_path(), o.seed), (Path::new("d/ops"), 7));
        assert_eq!(o.n, [8, 16, 32, 64, 128]);
        assert_eq!((o.lambda, o.rounds, o.trials), (0.99, 1000, 500));
        let r: RecycledOptions = with_defaults(Path::new("r"), 1);
        assert_eq!((r.n, r.rounds), (5, 200));
        assert_eq!(r.model.params(5), RecycledParams::paper(5));
        let c: ConvergenceOptions = with_defaults(Path::new("c"), 1);
        assert_eq!((c.n, c.runs, c.rounds), (vec![16, 32, 64, 128], 20, 10_000));
        assert_eq!(c.model, r.model);
        let k: CoalescingOptions = with_defaults(Path::new("k"), 1);
        assert_eq!((k.n, k.rounds, k.trials), (32, 1000, 50));
        assert_eq!((k.ratios, k.model), (vec![1, 2, 4, 8], r.model));
        let e: EvImbalanceOptions = with_defaults(Path::new("e"), 1);
        assert_eq!((e.flows, e.uplinks, e.salts), (vec![1, 32], 32, 500));
        assert_eq!((e.min_log2, e.max_log2), (4, 16));
    }

    #[test]
    fn thinning_keeps_peaks() {
        let v: Vec<f64> = (0..10).map(f64::from).collect();
        assert_eq!(
            thin(&v, 5),
            [(1.0, 1.0), (3.0, 3.0), (5.0, 5.0), (7.0, 7.0), (9.0, 9.0)]
        );
        let u = [5u32, 1, 1, 1, 9, 1, 1, 1, 1, 1, 1, 1];
        let t = thin_log(&u, 2);
        assert_eq!(t.last().unwrap().0, u.len() as f64, "covers every round");
        assert_eq!(
            t.iter().map(|p| p.1).fold(0.0, f64::max),
            9.0,
            "keeps the peak"
        );
        assert_eq!(t[0], (1.0, 5.0));
    }
}
