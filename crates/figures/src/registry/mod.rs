//! The figures `repsim figure` knows: one entry per evaluation figure or table of the REPS,
//! LAPS and Reunion papers (the rest are in `rows.rs`), each self-contained (scenario, axes, schemes, metric, plot,
//! the paper's stated numbers and what `--scale small` reduces).
mod design;
mod failures;
mod laps;
mod macro_bench;
mod micro;
mod reunion;

use super::model::{
    Axis, Body, Claim, EventKind, Figure, Metric, Ours, Panel, PlotKind, Sel, TheoryModel,
};

const MAX_FCT: Metric = Metric {
    column: "fct_max_us",
    label: "max FCT (us)",
};
/// Max FCT, or the run's end when flows never finished (see [`super::draw::COMPLETION`]).
const COMPLETION: Metric = Metric {
    column: super::draw::COMPLETION,
    label: "completion time (us; unfinished: run end)",
};
const DROPS: Metric = Metric {
    column: "drops",
    label: "packets dropped",
};

/// A selection of one value of panel 0 of a single-point figure.
const fn at(lb: &'static str, metric: Metric) -> Sel {
    at_p(0, lb, metric)
}

/// A selection of one value of panel `panel`, which has no axis.
const fn at_p(panel: usize, lb: &'static str, metric: Metric) -> Sel {
    Sel {
        panel,
        lb,
        at: None,
        metric,
    }
}

/// A selection at an axis value of panel `panel`.
const fn at_x(panel: usize, lb: &'static str, x: &'static str, metric: Metric) -> Sel {
    Sel {
        panel,
        lb,
        at: Some(x),
        metric,
    }
}

/// `num`'s value over `den`'s, both at axis value `x` of panel `panel`.
const fn ratio_at_x(
    panel: usize,
    x: &'static str,
    num: &'static str,
    den: &'static str,
    metric: Metric,
) -> Ours {
    Ours::Ratio(at_x(panel, num, x, metric), at_x(panel, den, x, metric))
}

const FAILED_TOR_UPLINKS: &[&str] = &[
    "[]",
    "[{ kind = \"first_tor_uplinks\", direction = \"forward\", percent = 10 }]",
    "[{ kind = \"first_tor_uplinks\", direction = \"forward\", percent = 20 }]",
    "[{ kind = \"first_tor_uplinks\", direction = \"forward\", percent = 30 }]",
    "[{ kind = \"first_tor_uplinks\", direction = \"forward\", percent = 40 }]",
    "[{ kind = \"first_tor_uplinks\", direction = \"forward\", percent = 50 }]",
];

/// Fig. 12's and 13's ACK coalescing ratios (receiver ACKs every n packets).
const ACK_RATIOS: Axis = Axis {
    key: "transport.ack_every",
    values: &["\"1pkt\"", "\"2pkt\"", "\"4pkt\"", "\"8pkt\"", "\"16pkt\""],
    labels: &["1:1", "2:1", "4:1", "8:1", "16:1"],
    x_label: "ACK coalescing ratio",
};

const MEAN_FCT: Metric = Metric {
    column: "fct_mean_us",
    label: "mean FCT (us)",
};

/// The REPS paper's nine load balancers of Figs. 3, 5 and 21 (Adaptive RoCE is OPS's EVs with
/// least-queued switch ports).
const NINE_LBS: &[&str] = &[
    "ecmp",
    "ops",
    "flowlet",
    "bitmap",
    "mprdma",
    "plb",
    "mptcp",
    "ops+adaptive",
    "reps",
];

/// Those load balancers as a scenario's `lb` (for scenarios that list fewer).
const NINE_LBS_SET: &str = "lb=[\"ecmp\", \"ops\", \"flowlet\", \"bitmap\", \"mprdma\", \"plb\", \"mptcp\", \"ops+adaptive\", \"reps\"]";

/// The 1024-host 2-tier tree of the synthetic macro benchmarks (32 hosts per ToR).
const TREE_1024: &str = "topology={ type = \"topo_file\", file = \"../data/htsim/topologies/fat_tree_1024_1os_2t_400g.topo\" }";

/// Figs. 3 and 5's synthetic workloads: incast 8:1, permutation and tornado at 4, 8, 16 MiB.
const SYNTHETIC: Axis = Axis {
    key: "workload",
    values: &[
        "{ type = \"incast\", senders = 8, receiver = 0, size = \"4MiB\" }",
        "{ type = \"incast\", senders = 8, receiver = 0, size = \"8MiB\" }",
        "{ type = \"incast\", senders = 8, receiver = 0, size = \"16MiB\" }",
        "{ type = \"permutation\", size = \"4MiB\" }",
        "{ type = \"permutation\", size = \"8MiB\" }",
        "{ type = \"permutation\", size = \"16MiB\" }",
        "{ type = \"tornado\", size = \"4MiB\" }",
        "{ type = \"tornado\", size = \"8MiB\" }",
        "{ type = \"tornado\", size = \"16MiB\" }",
    ],
    labels: &[
        "incast 4MiB",
        "incast 8MiB",
        "incast 16MiB",
        "perm 4MiB",
        "perm 8MiB",
        "perm 16MiB",
        "tornado 4MiB",
        "tornado 8MiB",
        "tornado 16MiB",
    ],
    x_label: "workload",
};

/// Figs. 3 and 5's WebSearch loads.
const LOADS: Axis = Axis {
    key: "workload.load",
    values: &["0.4", "0.6", "0.8", "1.0"],
    labels: &["0.4", "0.6", "0.8", "1.0"],
    x_label: "load",
};

/// Fig. 9's flow size in bytes at paper and at small scale (its "ideal" depends on it).
const FIG9_SIZES: (f64, f64) = (33_554_432.0, 2_097_152.0);

/// Small-scale topology of the 128-host 2-tier tree (8 hosts per ToR), replacing 1024 hosts.
const TREE_128: &str = "topology={ type = \"fat_tree\", tiers = 2, hosts = 128, hosts_per_tor = 8, link_speed = \"400Gbps\", link_latency = \"1us\" }";

/// A collective's completion time (the last flow's finish; `collectives.csv`'s `all` row).
const COLLECTIVE: Metric = Metric {
    column: "collective_us",
    label: "collective completion time (us)",
};

/// Small-scale topology of a 32-host 2-tier tree (4 hosts per ToR, 8 ToRs, 4 spines).
const TREE_32: &str = "topology={ type = \"fat_tree\", tiers = 2, hosts = 32, hosts_per_tor = 4, link_speed = \"400Gbps\", link_latency = \"1us\" }";

/// AllToAll's connections per host at once (Fig. 3's and 5's n = 4, 8, 16).
const ALLTOALL_CONCURRENCY: Axis = Axis {
    key: "workload.concurrency",
    values: &["4", "8", "16"],
    labels: &["4", "8", "16"],
    x_label: "AllToAll connections per host at once",
};

/// Small-scale collectives: 32 hosts and 256 KiB transfers (rings of 16 for the ring AllReduce).
const SMALL_COLLECTIVE: &[&str] = &[TREE_32, "workload.size=\"256KiB\""];

/// Every figure, in paper order.
pub static FIGURES: &[Figure] = &[
    micro::FIG2,
    macro_bench::FIG3,
    micro::FIG4,
    macro_bench::FIG5,
    macro_bench::FIG6,
    micro::FIG7,
    failures::FIG8,
    failures::FIG9,
    design::FIG12,
    design::FIG13,
    design::FIG14,
    design::FIG15,
    design::FIG16,
    design::FIG17,
    design::FIG18,
    design::FIG19,
    design::FIG20,
    macro_bench::FIG21,
    failures::FIG22,
    failures::FIG23,
    laps::FIG5,
    laps::FIG6,
    laps::FIG7,
    laps::FIG8,
    laps::TABLE1,
    laps::FIG9,
    reunion::FIG1,
    reunion::FIG3,
    reunion::FIG4,
    reunion::FIG5,
    reunion::FIG9,
    reunion::FIG10,
    reunion::FIG12,
    reunion::FIG13,
    reunion::FIG14,
];
