//! The arguments of `repsim theory <model>`; the studies themselves are
//! `repsim_figures::models`, whose option defaults these flags' defaults must equal (a test
//! checks).
use std::path::PathBuf;

use anyhow::Result;
use clap::{Args, Subcommand};
use repsim_figures::models::{
    self, AllOptions, CoalescingOptions, ConvergenceOptions, EvImbalanceOptions, ModelOptions,
    OpsOptions, RecycledOptions,
};
use theory::recycled::Feedback;

use crate::values::named;

/// Arguments of `repsim theory`.
#[derive(Args, Debug, Clone)]
pub struct TheoryArgs {
    /// Which model to run.
    #[command(subcommand)]
    pub model: TheoryModel,
}

/// One subcommand per model.
#[derive(Subcommand, Debug, Clone)]
pub enum TheoryModel {
    /// Batched balls-into-bins with random placement (OPS): max load over time (Figure 17).
    Ops(OpsArgs),
    /// Recycled balls-into-bins vs OPS for a small switch: queue evolution (Figure 18).
    Recycled(RecycledArgs),
    /// Recycled balls-into-bins at scale: convergence per seed (Theorem 5.1) vs OPS growth.
    Convergence(ConvergenceArgs),
    /// Recycled balls-into-bins with ACK coalescing k:1 vs OPS (Figure 20).
    Coalescing(CoalescingArgs),
    /// EV-set load imbalance through the simulator's ECMP hash (Figure 14).
    EvImbalance(EvImbalanceArgs),
    /// Every model with its defaults, each into `<out>/<model>`.
    All(AllArgs),
}

impl TheoryArgs {
    /// Runs the selected model.
    pub fn execute(self) -> Result<()> {
        match self.model {
            TheoryModel::Ops(a) => models::run_ops(&a.into()),
            TheoryModel::Recycled(a) => models::run_recycled(&a.into()),
            TheoryModel::Convergence(a) => models::run_convergence(&a.into()),
            TheoryModel::Coalescing(a) => models::run_coalescing(&a.into()),
            TheoryModel::EvImbalance(a) => models::run_ev_imbalance(&a.into()),
            TheoryModel::All(a) => models::run_all(&a.into()),
        }
    }
}

/// Options of `theory ops`.
#[derive(Args, Debug, Clone)]
pub struct OpsArgs {
    /// Output directory.
    #[arg(long, default_value = "results/theory/ops")]
    pub out: PathBuf,
    /// Experiment seed.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Numbers of bins (output ports).
    #[arg(long, value_delimiter = ',', default_value = "8,16,32,64,128")]
    pub n: Vec<usize>,
    /// Arrival rate per bin (lambda * n balls per step).
    #[arg(long, default_value_t = 0.99)]
    pub lambda: f64,
    /// Steps per run.
    #[arg(long, default_value_t = 1000)]
    pub rounds: usize,
    /// Independent runs averaged per n.
    #[arg(long, default_value_t = 500)]
    pub trials: usize,
}

impl From<OpsArgs> for OpsOptions {
    fn from(a: OpsArgs) -> Self {
        OpsOptions {
            out: a.out,
            seed: a.seed,
            n: a.n,
            lambda: a.lambda,
            rounds: a.rounds,
            trials: a.trials,
        }
    }
}

/// Options of the recycled model shared by `recycled`, `convergence` and `coalescing`.
#[derive(Args, Debug, Clone, PartialEq)]
pub struct ModelArgs {
    /// Arrival rate per bin.
    #[arg(long, default_value_t = 1.0)]
    pub lambda: f64,
    /// Threshold tau (default 4 ln n; floored).
    #[arg(long)]
    pub tau: Option<f64>,
    /// Colours per bin b (default 2.4 ln n; rounded up).
    #[arg(long)]
    pub b: Option<f64>,
    /// When recycled colours are thrown again.
    #[arg(long, default_value = "immediate", value_parser = named::<Feedback>(Feedback::NAMES))]
    pub feedback: Feedback,
}

impl From<ModelArgs> for ModelOptions {
    fn from(a: ModelArgs) -> Self {
        ModelOptions {
            lambda: a.lambda,
            tau: a.tau,
            b: a.b,
            feedback: a.feedback,
        }
    }
}

/// Options of `theory recycled`.
#[derive(Args, Debug, Clone)]
pub struct RecycledArgs {
    /// Output directory.
    #[arg(long, default_value = "results/theory/recycled")]
    pub out: PathBuf,
    /// Experiment seed.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Number of bins.
    #[arg(long, default_value_t = 5)]
    pub n: usize,
    /// Steps.
    #[arg(long, default_value_t = 200)]
    pub rounds: usize,
    /// Arrival rate, threshold, colours and feedback of the recycled model.
    #[command(flatten)]
    pub model: ModelArgs,
}

impl From<RecycledArgs> for RecycledOptions {
    fn from(a: RecycledArgs) -> Self {
        RecycledOptions {
            out: a.out,
            seed: a.seed,
            n: a.n,
            rounds: a.rounds,
            model: a.model.into(),
        }
    }
}

/// Options of `theory convergence`.
#[derive(Args, Debug, Clone)]
pub struct ConvergenceArgs {
    /// Output directory.
    #[arg(long, default_value = "results/theory/convergence")]
    pub out: PathBuf,
    /// Experiment seed.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Numbers of bins.
    #[arg(long, value_delimiter = ',', default_value = "16,32,64,128")]
    pub n: Vec<usize>,
    /// Seeds (runs) per n.
    #[arg(long, default_value_t = 20)]
    pub runs: usize,
    /// Steps per run.
    #[arg(long, default_value_t = 10_000)]
    pub rounds: usize,
    /// Arrival rate, threshold, colours and feedback of the recycled model.
    #[command(flatten)]
    pub model: ModelArgs,
}

impl From<ConvergenceArgs> for ConvergenceOptions {
    fn from(a: ConvergenceArgs) -> Self {
        ConvergenceOptions {
            out: a.out,
            seed: a.seed,
            n: a.n,
            runs: a.runs,
            rounds: a.rounds,
            model: a.model.into(),
        }
    }
}

/// Options of `theory coalescing`.
#[derive(Args, Debug, Clone)]
pub struct CoalescingArgs {
    /// Output directory.
    #[arg(long, default_value = "results/theory/coalescing")]
    pub out: PathBuf,
    /// Experiment seed.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Number of bins.
    #[arg(long, default_value_t = 32)]
    pub n: usize,
    /// Steps per run.
    #[arg(long, default_value_t = 1000)]
    pub rounds: usize,
    /// Runs averaged per variant.
    #[arg(long, default_value_t = 50)]
    pub trials: usize,
    /// Coalescing ratios k (recycle every k-th departure).
    #[arg(long, value_delimiter = ',', default_value = "1,2,4,8")]
    pub ratios: Vec<usize>,
    /// Arrival rate, threshold, colours and feedback of the recycled model.
    #[command(flatten)]
    pub model: ModelArgs,
}

impl From<CoalescingArgs> for CoalescingOptions {
    fn from(a: CoalescingArgs) -> Self {
        CoalescingOptions {
            out: a.out,
            seed: a.seed,
            n: a.n,
            rounds: a.rounds,
            trials: a.trials,
            ratios: a.ratios,
            model: a.model.into(),
        }
    }
}

/// Options of `theory ev-imbalance`.
#[derive(Args, Debug, Clone)]
pub struct EvImbalanceArgs {
    /// Output directory.
    #[arg(long, default_value = "results/theory/ev-imbalance")]
    pub out: PathBuf,
    /// Experiment seed (draws the switch salts).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Numbers of concurrent flows.
    #[arg(long, value_delimiter = ',', default_value = "1,32")]
    pub flows: Vec<u32>,
    /// Uplinks of the switch.
    #[arg(long, default_value_t = 32)]
    pub uplinks: u32,
    /// Smallest EV-set size, as a power of two.
    #[arg(long, default_value_t = 4)]
    pub min_log2: u32,
    /// Largest EV-set size, as a power of two.
    #[arg(long, default_value_t = 16)]
    pub max_log2: u32,
    /// Salts (switches) sampled per point.
    #[arg(long, default_value_t = 500)]
    pub salts: usize,
}

impl From<EvImbalanceArgs> for EvImbalanceOptions {
    fn from(a: EvImbalanceArgs) -> Self {
        EvImbalanceOptions {
            out: a.out,
            seed: a.seed,
            flows: a.flows,
            uplinks: a.uplinks,
            min_log2: a.min_log2,
            max_log2: a.max_log2,
            salts: a.salts,
        }
    }
}

/// Options of `theory all`.
#[derive(Args, Debug, Clone)]
pub struct AllArgs {
    /// Parent output directory; each model writes into a subdirectory named after it.
    #[arg(long, default_value = "results/theory")]
    pub out: PathBuf,
    /// Experiment seed for every model.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

impl From<AllArgs> for AllOptions {
    fn from(a: AllArgs) -> Self {
        AllOptions {
            out: a.out,
            seed: a.seed,
        }
    }
}
