//! The figures `repsim figure` knows: one entry per row of the reproduction matrix
//! (`specs/reproduction-matrix.md`), each self-contained (scenario, axes, schemes, metric, plot,
//! the paper's stated numbers and what `--scale small` reduces).
use super::model::{Axis, Body, Claim, Figure, Metric, Ours, Panel, PlotKind, Sel, TheoryModel};

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
    Sel {
        panel: 0,
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

const FAILED_TOR_UPLINKS: &[&str] = &[
    "[]",
    "[{ kind = \"random_tor_uplinks\", direction = \"forward\", percent = 10 }]",
    "[{ kind = \"random_tor_uplinks\", direction = \"forward\", percent = 20 }]",
    "[{ kind = \"random_tor_uplinks\", direction = \"forward\", percent = 30 }]",
    "[{ kind = \"random_tor_uplinks\", direction = \"forward\", percent = 40 }]",
    "[{ kind = \"random_tor_uplinks\", direction = \"forward\", percent = 50 }]",
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

/// Every figure, in paper order.
pub static FIGURES: &[Figure] = &[
    Figure {
        id: "reps-fig2",
        paper: "REPS Fig. 2",
        title: "Symmetric micro-analysis: 8 x 16 MiB tornado out of one ToR, per-uplink rate and queues, OPS vs REPS",
        small: "identical to the paper scale (it already runs in seconds)",
        body: Body::Sim(&[Panel {
            name: "",
            title: "Completion time, 8 x 16 MiB from ToR 0 to ToR 8",
            scenario: "scenarios/reps-micro-symmetric.toml",
            lbs: &["ops", "reps"],
            set: &[],
            small_set: &[],
            axis: None,
            metric: MAX_FCT,
            plot: PlotKind::Bars,
            series: true,
        }]),
        claims: &[Claim {
            what: "completion time OPS / REPS (REPS about 4 % better)",
            paper: 1.04,
            ours: Ours::Ratio(at("ops", MAX_FCT), at("reps", MAX_FCT)),
        }],
    },
    Figure {
        id: "reps-fig3",
        paper: "REPS Fig. 3",
        title: "Symmetric macro-analysis, synthetic and WebSearch panels (the AI-collective panel is not included yet): 9 load balancers",
        small: "synthetic: 128 hosts instead of 1024; WebSearch: 32 hosts and 250 us of arrivals instead of 128 hosts and 5 ms",
        body: Body::Sim(&[
            Panel {
                name: "synthetic",
                title: "Synthetic workloads (incast 8:1, permutation, tornado)",
                scenario: "scenarios/baselines-permutation-128.toml",
                lbs: NINE_LBS,
                set: &[TREE_1024, "queue.size=\"101pkt\""],
                small_set: &[TREE_128],
                axis: Some(SYNTHETIC),
                metric: MAX_FCT,
                plot: PlotKind::Speedup("ecmp"),
                series: false,
            },
            Panel {
                name: "websearch",
                title: "WebSearch trace",
                scenario: "scenarios/websearch-128.toml",
                lbs: NINE_LBS,
                set: &[NINE_LBS_SET],
                small_set: &[
                    "topology={ type = \"fat_tree\", tiers = 2, hosts = 32, hosts_per_tor = 4, link_speed = \"400Gbps\", link_latency = \"1us\" }",
                    "workload.duration=\"250us\"",
                ],
                axis: Some(LOADS),
                metric: MEAN_FCT,
                plot: PlotKind::Lines,
                series: false,
            },
        ]),
        claims: &[
            Claim {
                what: "synthetic: best speedup of REPS over OPS (up to 25 %)",
                paper: 1.25,
                ours: Ours::MaxRatio { panel: 0, num: "ops", den: "reps", metric: MAX_FCT },
            },
            Claim {
                what: "synthetic: best speedup of REPS over ECMP (up to 6x)",
                paper: 6.0,
                ours: Ours::MaxRatio { panel: 0, num: "ecmp", den: "reps", metric: MAX_FCT },
            },
            Claim {
                what: "incast 8 MiB: ECMP / REPS max FCT (all equal)",
                paper: 1.0,
                ours: Ours::Ratio(
                    at_x(0, "ecmp", "incast 8MiB", MAX_FCT),
                    at_x(0, "reps", "incast 8MiB", MAX_FCT),
                ),
            },
            Claim {
                what: "WebSearch at 100 % load: OPS / REPS mean FCT (REPS about 5 % better)",
                paper: 1.05,
                ours: Ours::Ratio(
                    at_x(1, "ops", "1.0", MEAN_FCT),
                    at_x(1, "reps", "1.0", MEAN_FCT),
                ),
            },
        ],
    },
    Figure {
        id: "reps-fig4",
        paper: "REPS Fig. 4",
        title: "Asymmetric micro-analysis: 4 x 32 MiB through a ToR with one 200 G uplink, OPS vs REPS",
        small: "4 x 8 MiB instead of 4 x 32 MiB",
        body: Body::Sim(&[Panel {
            name: "",
            title: "Completion time, one ToR uplink at 200 G",
            scenario: "scenarios/reps-micro-asymmetric.toml",
            lbs: &["ops", "reps"],
            set: &[],
            small_set: &["workload.flows=[{ src = \"0-3\", dst = \"64-67\", size = \"8MiB\" }]"],
            axis: None,
            metric: MAX_FCT,
            plot: PlotKind::Bars,
            series: true,
        }]),
        claims: &[
            Claim {
                what: "OPS completion time (us)",
                paper: 1400.0,
                ours: Ours::Value(at("ops", MAX_FCT)),
            },
            Claim {
                what: "REPS completion time (us)",
                paper: 799.0,
                ours: Ours::Value(at("reps", MAX_FCT)),
            },
            Claim {
                what: "OPS / REPS",
                paper: 1.75,
                ours: Ours::Ratio(at("ops", MAX_FCT), at("reps", MAX_FCT)),
            },
        ],
    },
    Figure {
        id: "reps-fig7",
        paper: "REPS Fig. 7",
        title: "Transient failures: two ToR uplinks drop data (100-200 us, 350-600 us), OPS vs REPS",
        small: "identical to the paper scale (it already runs in seconds)",
        body: Body::Sim(&[Panel {
            name: "",
            title: "Completion time with two timed uplink outages",
            scenario: "scenarios/reps-micro-failures.toml",
            lbs: &["ops", "reps"],
            set: &[],
            small_set: &[],
            axis: None,
            metric: MAX_FCT,
            plot: PlotKind::Bars,
            series: true,
        }]),
        claims: &[
            Claim {
                what: "completion time OPS / REPS (REPS > 35 % faster)",
                paper: 1.35,
                ours: Ours::Ratio(at("ops", MAX_FCT), at("reps", MAX_FCT)),
            },
            Claim {
                what: "drops OPS / REPS (2.5x fewer)",
                paper: 2.5,
                ours: Ours::Ratio(at("ops", DROPS), at("reps", DROPS)),
            },
        ],
    },
    Figure {
        id: "reps-fig9",
        paper: "REPS Fig. 9",
        title: "Extreme failures: 0-50 % of ToR uplink cables failed, 32 MiB permutation on 1024 hosts, REPS vs PLB",
        small: "128 hosts (8 per ToR) and 2 MiB flows instead of 1024 hosts and 32 MiB",
        body: Body::Sim(&[Panel {
            name: "",
            title: "Max FCT vs share of failed ToR uplinks",
            scenario: "scenarios/failures-extreme.toml",
            lbs: &["reps", "plb"],
            set: &[
                "lb=[\"reps\", \"plb\"]",
                "workload={ type = \"permutation\", size = \"32MiB\" }",
            ],
            small_set: &[TREE_128, "workload={ type = \"permutation\", size = \"2MiB\" }"],
            axis: Some(Axis {
                key: "fault",
                values: FAILED_TOR_UPLINKS,
                labels: &["0", "10", "20", "30", "40", "50"],
                x_label: "failed ToR uplinks (%)",
            }),
            metric: MAX_FCT,
            plot: PlotKind::Lines,
            series: false,
        }]),
        claims: &[
            Claim {
                what: "REPS max FCT / ideal at 50 % failed (paper: close to ideal)",
                paper: 1.0,
                ours: Ours::OverIdeal(at_x(0, "reps", "50", MAX_FCT), 0.5, FIG9_SIZES),
            },
            Claim {
                what: "REPS max FCT / ideal at 10 % failed",
                paper: 1.0,
                ours: Ours::OverIdeal(at_x(0, "reps", "10", MAX_FCT), 0.1, FIG9_SIZES),
            },
        ],
    },
    Figure {
        id: "reps-fig12",
        paper: "REPS Fig. 12",
        title: "ACK coalescing 1:1 to 16:1, 8 MiB permutation on 128 hosts: left no failure, right 8 % cables failed",
        small: "1 MiB permutation flows instead of the 8 MiB reference matrix",
        body: Body::Sim(&[
            Panel {
                name: "left",
                title: "No failure",
                scenario: "scenarios/evs-sweep-128.toml",
                lbs: &["ops", "reps"],
                set: &[],
                small_set: &["workload={ type = \"permutation\", size = \"1MiB\" }"],
                axis: Some(ACK_RATIOS),
                metric: MAX_FCT,
                plot: PlotKind::Bars,
                series: false,
            },
            Panel {
                name: "right",
                title: "8 % of cables failed",
                scenario: "scenarios/ack-coalescing-128.toml",
                lbs: &["ops", "reps"],
                set: &[],
                small_set: &["workload={ type = \"permutation\", size = \"1MiB\" }"],
                axis: Some(ACK_RATIOS),
                metric: MAX_FCT,
                plot: PlotKind::Bars,
                series: false,
            },
        ]),
        claims: &[Claim {
            what: "ACK traffic over data traffic at 1:1 (about 1 %)",
            paper: 0.01,
            ours: Ours::Value(at_x(
                0,
                "reps",
                "1:1",
                Metric {
                    column: "ack_overhead",
                    label: "ACK overhead",
                },
            )),
        }],
    },
    Figure {
        id: "reps-fig13",
        paper: "REPS Fig. 13",
        title: "REPS ACK-coalescing variants (standard, carry EVs, reuse EVs) at 1:1 to 16:1, 8 MiB permutation on 128 hosts",
        small: "1 MiB permutation flows instead of the 8 MiB reference matrix",
        body: Body::Sim(&[Panel {
            name: "",
            title: "Max FCT per coalescing ratio and REPS variant",
            scenario: "scenarios/evs-sweep-128.toml",
            lbs: &["reps", "reps-carry", "reps-reuse"],
            set: &["lb=[\"reps\", { scheme = \"reps\", coalescing = \"carry_evs\", label = \"reps-carry\" }, { scheme = \"reps\", coalescing = \"reuse_evs\", label = \"reps-reuse\" }]"],
            small_set: &["workload={ type = \"permutation\", size = \"1MiB\" }"],
            axis: Some(ACK_RATIOS),
            metric: MAX_FCT,
            plot: PlotKind::Bars,
            series: false,
        }]),
        claims: &[],
    },
    Figure {
        id: "reps-fig14",
        paper: "REPS Fig. 14",
        title: "EV-set size vs load imbalance at a 32-uplink switch, 1 and 32 flows (hashing model)",
        small: "50 salts per point instead of 500",
        body: Body::Theory(TheoryModel::EvImbalance),
        claims: &[
            Claim {
                what: "32 flows, 2^16 EVs: median imbalance (paper: < 1 %)",
                paper: 0.01,
                ours: Ours::Theory(super::theory::median_imbalance_32_flows_64k),
            },
            Claim {
                what: "32 flows, 2^7 EVs: median imbalance (paper: > 10 %)",
                paper: 0.10,
                ours: Ours::Theory(super::theory::median_imbalance_32_flows_128),
            },
        ],
    },
    Figure {
        id: "reps-fig15",
        paper: "REPS Fig. 15",
        title: "EV-set size (left) and congestion control (right), 8 MiB permutation on 128 hosts, OPS vs REPS",
        small: "1 MiB permutation flows instead of the 8 MiB reference matrix",
        body: Body::Sim(&[
            Panel {
                name: "left",
                title: "EV-set size",
                scenario: "scenarios/evs-sweep-128.toml",
                lbs: &["ops", "reps"],
                set: &[],
                small_set: &["workload={ type = \"permutation\", size = \"1MiB\" }"],
                axis: Some(Axis {
                    key: "transport.evs_size",
                    values: &["32", "256", "65536"],
                    labels: &["32", "256", "65536"],
                    x_label: "EV-set size",
                }),
                metric: MAX_FCT,
                plot: PlotKind::Bars,
                series: false,
            },
            Panel {
                name: "right",
                title: "Congestion control",
                scenario: "scenarios/evs-sweep-128.toml",
                lbs: &["ops", "reps"],
                set: &[],
                small_set: &["workload={ type = \"permutation\", size = \"1MiB\" }"],
                axis: Some(Axis {
                    key: "cc",
                    values: &["\"mprdma\"", "\"eqds\"", "\"nscc\""],
                    labels: &["DCTCP (MPRDMA)", "EQDS", "NSCC"],
                    x_label: "congestion control",
                }),
                metric: MAX_FCT,
                plot: PlotKind::Bars,
                series: false,
            },
        ]),
        claims: &[
            Claim {
                what: "REPS max FCT, 32 EVs / 65536 EVs (8 % slower)",
                paper: 1.08,
                ours: Ours::Ratio(
                    at_x(0, "reps", "32", MAX_FCT),
                    at_x(0, "reps", "65536", MAX_FCT),
                ),
            },
            Claim {
                what: "REPS max FCT, 256 EVs / 65536 EVs (the same)",
                paper: 1.0,
                ours: Ours::Ratio(
                    at_x(0, "reps", "256", MAX_FCT),
                    at_x(0, "reps", "65536", MAX_FCT),
                ),
            },
            Claim {
                what: "OPS max FCT, 256 EVs / 65536 EVs (21 % slower)",
                paper: 1.21,
                ours: Ours::Ratio(
                    at_x(0, "ops", "256", MAX_FCT),
                    at_x(0, "ops", "65536", MAX_FCT),
                ),
            },
            Claim {
                what: "OPS max FCT, 32 EVs / 65536 EVs (64 % slower)",
                paper: 1.64,
                ours: Ours::Ratio(
                    at_x(0, "ops", "32", MAX_FCT),
                    at_x(0, "ops", "65536", MAX_FCT),
                ),
            },
        ],
    },
    Figure {
        id: "reps-fig17",
        paper: "REPS Fig. 17",
        title: "OPS balls-into-bins: max queue over 1000 rounds, lambda = 0.99, n = 8 to 128",
        small: "50 trials per n instead of 500",
        body: Body::Theory(TheoryModel::Ops),
        claims: &[],
    },
    Figure {
        id: "reps-fig18",
        paper: "REPS Fig. 18",
        title: "OPS vs recycled balls-into-bins, n = 5, 200 rounds",
        small: "identical to the paper scale (it runs in milliseconds)",
        body: Body::Theory(TheoryModel::Recycled),
        claims: &[Claim {
            what: "recycled model's largest queue over tau, after round 100 (paper: stays below tau)",
            paper: 1.0,
            ours: Ours::Theory(super::theory::recycled_late_max_over_tau),
        }],
    },
    Figure {
        id: "reps-fig19",
        paper: "REPS Fig. 19",
        title: "REPS forced into freezing mode at 50 us vs REPS vs OPS, 16 MiB permutation on the 128-host 2-tier tree",
        small: "2 MiB permutation flows instead of 16 MiB",
        body: Body::Sim(&[Panel {
            name: "",
            title: "Completion time with freezing forced at 50 us",
            scenario: "scenarios/evs-sweep-128.toml",
            lbs: &["ops", "reps", "reps-forced"],
            set: &[
                "lb=[\"ops\", \"reps\", { scheme = \"reps\", force_freeze_at = \"50us\", label = \"reps-forced\" }]",
                "workload={ type = \"permutation\", size = \"16MiB\" }",
            ],
            small_set: &["workload={ type = \"permutation\", size = \"2MiB\" }"],
            axis: None,
            metric: MAX_FCT,
            plot: PlotKind::Bars,
            series: false,
        }]),
        claims: &[
            Claim {
                what: "forced-freeze REPS / REPS completion time (arXiv text: +1 %)",
                paper: 1.01,
                ours: Ours::Ratio(at("reps-forced", MAX_FCT), at("reps", MAX_FCT)),
            },
            Claim {
                what: "OPS / forced-freeze REPS completion time (both REPS faster: > 1)",
                paper: 1.0,
                ours: Ours::Ratio(at("ops", MAX_FCT), at("reps-forced", MAX_FCT)),
            },
        ],
    },
    Figure {
        id: "reps-fig20",
        paper: "REPS Fig. 20",
        title: "Recycled balls-into-bins with 2:1, 4:1, 8:1 recycling vs OPS",
        small: "10 trials per variant instead of 50",
        body: Body::Theory(TheoryModel::Coalescing),
        claims: &[],
    },
    Figure {
        id: "reps-fig22",
        paper: "REPS Fig. 22",
        title: "Incremental persistent failures: a ToR loses 3 of its 4 uplinks at 200 us intervals, 32 MiB permutation, OPS vs REPS",
        small: "8 MiB permutation flows instead of 32 MiB",
        body: Body::Sim(&[Panel {
            name: "",
            title: "Completion time as tor0 loses 3 of 4 uplinks",
            scenario: "scenarios/failures-incremental.toml",
            lbs: &["ops", "reps"],
            set: &["collect={ switches = [\"tor0\"] }"],
            small_set: &["workload.size=\"8MiB\""],
            axis: None,
            metric: COMPLETION,
            plot: PlotKind::Bars,
            series: true,
        }]),
        claims: &[Claim {
            what: "completion time OPS / REPS (OPS 40x worse; where OPS never finishes, ours counts the run's end and is a lower bound)",
            paper: 40.0,
            ours: Ours::Ratio(at("ops", COMPLETION), at("reps", COMPLETION)),
        }],
    },
    Figure {
        id: "reps-fig23",
        paper: "REPS Fig. 23",
        title: "REPS with vs without freezing, no failure and 1 % of cables failed, 8 MiB permutation on 128 hosts",
        small: "1 MiB permutation flows instead of the 8 MiB reference matrix",
        body: Body::Sim(&[Panel {
            name: "",
            title: "Max FCT with and without freezing",
            scenario: "scenarios/evs-sweep-128.toml",
            lbs: &["reps", "reps-nofreeze"],
            set: &["lb=[\"reps\", { scheme = \"reps\", freezing = false, label = \"reps-nofreeze\" }]"],
            small_set: &["workload={ type = \"permutation\", size = \"1MiB\" }"],
            axis: Some(Axis {
                key: "fault",
                values: &["[]", "[{ kind = \"random_cables\", percent = 1 }]"],
                labels: &["none", "1 %"],
                x_label: "failed cables",
            }),
            metric: MAX_FCT,
            plot: PlotKind::Bars,
            series: false,
        }]),
        claims: &[
            Claim {
                what: "no failure: max FCT without / with freezing (identical)",
                paper: 1.0,
                ours: Ours::Ratio(
                    at_x(0, "reps-nofreeze", "none", MAX_FCT),
                    at_x(0, "reps", "none", MAX_FCT),
                ),
            },
            Claim {
                what: "1 % cables failed: max FCT without / with freezing (about 25 % gain)",
                paper: 1.25,
                ours: Ours::Ratio(
                    at_x(0, "reps-nofreeze", "1 %", MAX_FCT),
                    at_x(0, "reps", "1 %", MAX_FCT),
                ),
            },
        ],
    },
];
