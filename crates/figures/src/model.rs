//! What a figure is made of: panels (each a sweep of one scenario over one axis), the metric and
//! plot, and the paper's stated numbers with the way to compute ours.

use serde::{Deserialize, Serialize};

/// One figure of a paper.
pub struct Figure {
    /// Command-line id (`reps-fig4`).
    pub id: &'static str,
    /// Paper and figure (`REPS Fig. 4`).
    pub paper: &'static str,
    /// What it shows.
    pub title: &'static str,
    /// What `--scale small` reduces.
    pub small: &'static str,
    /// How it is produced.
    pub body: Body,
    /// The paper's stated numbers, each with ours.
    pub claims: &'static [Claim],
}

/// How a figure is produced.
pub enum Body {
    /// Simulations: one sweep per panel.
    Sim(&'static [Panel]),
    /// A balls-into-bins or hashing model of `repsim theory`.
    Theory(TheoryModel),
}

/// The `repsim theory` model behind a figure.
#[derive(Clone, Copy, Debug)]
pub enum TheoryModel {
    /// `theory ops` (Fig. 17).
    Ops,
    /// `theory recycled` (Fig. 18).
    Recycled,
    /// `theory coalescing` (Fig. 20).
    Coalescing,
    /// `theory ev-imbalance` (Fig. 14).
    EvImbalance,
}

/// One panel: a scenario swept over at most one axis, for some load balancers.
pub struct Panel {
    /// Short name (`left`; empty for a single panel).
    pub name: &'static str,
    /// Caption.
    pub title: &'static str,
    /// Base scenario, relative to the repository root.
    pub scenario: &'static str,
    /// Load balancers (labels of the scenario's `lb` entries).
    pub lbs: &'static [&'static str],
    /// Overrides at every scale (`KEY=VALUE`).
    pub set: &'static [&'static str],
    /// Further overrides at `--scale small`.
    pub small_set: &'static [&'static str],
    /// The swept field, if any.
    pub axis: Option<Axis>,
    /// What is plotted.
    pub metric: Metric,
    /// How.
    pub plot: PlotKind,
    /// Also plot the per-uplink rate and queues of `tor0` over time (the scenario's `[collect]`).
    pub series: bool,
}

/// The swept field of a panel.
#[derive(Clone, Copy)]
pub struct Axis {
    /// Dotted key, as for `--set`.
    pub key: &'static str,
    /// Values as TOML text.
    pub values: &'static [&'static str],
    /// Their names on the plot and in the CSV.
    pub labels: &'static [&'static str],
    /// Axis caption.
    pub x_label: &'static str,
}

/// A column of `sweep.csv` and its caption.
#[derive(Clone, Copy)]
pub struct Metric {
    /// Column name.
    pub column: &'static str,
    /// Caption.
    pub label: &'static str,
}

/// Plot kinds.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum PlotKind {
    /// Grouped bars: one group per axis value, one bar per load balancer.
    Bars,
    /// Lines over a numeric axis, one per load balancer.
    Lines,
    /// Grouped bars of the speedup over a baseline load balancer (its metric over each one's).
    Speedup(&'static str),
    /// The elephants' FCT distribution (CDF; a flow's slices joined into one elephant, from each
    /// run's `flows.csv`): with an axis and several load balancers one chart per axis value side
    /// by side (Reunion Fig. 9), else one chart with a line per load balancer or axis value.
    FctCdf,
    /// Cumulative count of a kind of load-balancer event over time (each run's
    /// `lb_events.csv`), a line per load balancer and axis value.
    Cumulative(EventKind),
    /// Queue occupancy over time (largest sample per bucket) at each up port of the collected
    /// switch, a chart per load balancer (`port_series.csv` of the panel's first point: the
    /// panel needs `series` and a `[collect]` naming the switch).
    Queues,
    /// Sending rate over time of each collected host's NIC uplink, a chart per load balancer:
    /// per-flow rates where each host sends one flow (the ring workloads; needs `series` and a
    /// `[collect]` naming the hosts).
    HostRates,
}

/// Load-balancer events counted over time.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum EventKind {
    /// Path changes (`rerouted`: Reunion's moves, PLB's).
    Reroutes,
    /// Flowlets a LetFlow or CONGA switch began (`flowlet`, with the scheme's `events = true`),
    /// each flow's first one left out: the flowlets its gaps created.
    NewFlowlets,
}

/// One value of a figure's results: panel, load balancer, axis label (none for a single
/// point) and metric.
#[derive(Clone, Copy)]
pub struct Sel {
    /// Panel index.
    pub panel: usize,
    /// Load balancer label.
    pub lb: &'static str,
    /// Axis label.
    pub at: Option<&'static str>,
    /// Metric.
    pub metric: Metric,
}

/// One number the paper states, and how ours is computed.
pub struct Claim {
    /// What it is.
    pub what: &'static str,
    /// The paper's number.
    pub paper: f64,
    /// Ours.
    pub ours: Ours,
}

/// How our number for a claim is computed.
pub enum Ours {
    /// One value.
    Value(Sel),
    /// A ratio of two values.
    Ratio(Sel, Sel),
    /// The largest ratio of the first load balancer's metric over the second's across the
    /// panel's axis values ("up to N times").
    MaxRatio {
        /// Panel index.
        panel: usize,
        /// Numerator load balancer.
        num: &'static str,
        /// Denominator load balancer.
        den: &'static str,
        /// Metric.
        metric: Metric,
    },
    /// The smallest ratio of another load balancer's value over one's, at the same point
    /// (above 1: the one has the lowest value of all).
    LowestOtherRatio {
        /// The one (denominator).
        of: Sel,
        /// The others (numerators), at `of`'s panel, axis value and metric.
        others: &'static [&'static str],
    },
    /// A max FCT over Fig. 9's ideal, (S x 8 / 400 Gb/s + 20 us) / (1 - f), for the failed
    /// fraction f and flow size S (bytes at paper and at small scale).
    OverIdeal(Sel, f64, (f64, f64)),
    /// How much lower the first value is than the second, in percent: 100 x (1 - a / b)
    /// (negative: higher).
    Reduction(Sel, Sel),
    /// How much higher the first value is than the second, in percent: 100 x (a / b - 1).
    Increase(Sel, Sel),
    /// At each axis value of a panel, `of`'s reduction (percent, as [`Ours::Reduction`])
    /// against the lowest of `others`; the smallest of these over the axis, or the largest.
    ReductionVsBest {
        /// Panel index.
        panel: usize,
        /// The load balancer judged.
        of: &'static str,
        /// The others.
        others: &'static [&'static str],
        /// Metric.
        metric: Metric,
        /// The largest instead of the smallest.
        largest: bool,
    },
    /// The largest increase (percent, as [`Ours::Increase`]) of a metric from panel `base` to
    /// panel `panel` (the same axis) over the load balancers and axis values.
    MaxIncrease {
        /// Panel of the changed runs.
        panel: usize,
        /// Panel of the reference runs.
        base: usize,
        /// Load balancers compared.
        lbs: &'static [&'static str],
        /// Metric.
        metric: Metric,
    },
    /// Read from a theory model's output directory.
    Theory(fn(&std::path::Path) -> Option<f64>),
    /// The paper states a bound, not a value: ours (computed as the inner way) should be at
    /// most the claim's number.
    AtMost(&'static Ours),
    /// Likewise, at least the claim's number.
    AtLeast(&'static Ours),
}

/// Which values a claim's number can take, from how it is computed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Sign {
    /// Above zero: a ratio of positive quantities.
    #[default]
    Positive,
    /// Zero or above: a value read from the runs (a count or a fraction may be zero).
    NonNegative,
    /// Either sign: a change in percent.
    Any,
}

impl Ours {
    /// Which values this number can take.
    pub fn sign(&self) -> Sign {
        match self {
            Ours::Value(_) | Ours::Theory(_) => Sign::NonNegative,
            Ours::Ratio(..)
            | Ours::MaxRatio { .. }
            | Ours::LowestOtherRatio { .. }
            | Ours::OverIdeal(..) => Sign::Positive,
            Ours::Reduction(..)
            | Ours::Increase(..)
            | Ours::ReductionVsBest { .. }
            | Ours::MaxIncrease { .. } => Sign::Any,
            Ours::AtMost(o) | Ours::AtLeast(o) => o.sign(),
        }
    }
}
