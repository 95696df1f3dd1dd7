//! Design-space figures of the REPS paper: ACK coalescing, EV-set size, the balls-into-bins models and freezing.
use super::*;

/// REPS Fig. 12.
pub(super) const FIG12: Figure = Figure {
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
};

/// REPS Fig. 13.
pub(super) const FIG13: Figure = Figure {
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
};

/// REPS Fig. 14.
pub(super) const FIG14: Figure = Figure {
    id: "reps-fig14",
    paper: "REPS Fig. 14",
    title: "EV-set size vs load imbalance at a 32-uplink switch, 1 and 32 flows (hashing model)",
    small: "50 salts per point instead of 500",
    body: Body::Theory(TheoryModel::EvImbalance),
    claims: &[
        Claim {
            what: "32 flows, 2^16 EVs: median imbalance (paper: < 1 %)",
            paper: 0.01,
            ours: Ours::AtMost(&Ours::Theory(crate::theory::median_imbalance_32_flows_64k)),
        },
        Claim {
            what: "32 flows, 2^7 EVs: median imbalance (paper: > 10 %)",
            paper: 0.10,
            ours: Ours::AtLeast(&Ours::Theory(crate::theory::median_imbalance_32_flows_128)),
        },
    ],
};

/// REPS Fig. 15.
pub(super) const FIG15: Figure = Figure {
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
};

/// REPS Fig. 17.
pub(super) const FIG17: Figure = Figure {
    id: "reps-fig17",
    paper: "REPS Fig. 17",
    title: "OPS balls-into-bins: max queue over 1000 rounds, lambda = 0.99, n = 8 to 128",
    small: "50 trials per n instead of 500",
    body: Body::Theory(TheoryModel::Ops),
    claims: &[],
};

/// REPS Fig. 18.
pub(super) const FIG18: Figure = Figure {
    id: "reps-fig18",
    paper: "REPS Fig. 18",
    title: "OPS vs recycled balls-into-bins, n = 5, 200 rounds",
    small: "identical to the paper scale (it runs in milliseconds)",
    body: Body::Theory(TheoryModel::Recycled),
    claims: &[Claim {
        what: "recycled model's largest queue over tau, after round 100 (paper: stays below tau)",
        paper: 1.0,
        ours: Ours::AtMost(&Ours::Theory(crate::theory::recycled_late_max_over_tau)),
    }],
};

/// REPS Fig. 19.
pub(super) const FIG19: Figure = Figure {
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
};

/// REPS Fig. 20.
pub(super) const FIG20: Figure = Figure {
    id: "reps-fig20",
    paper: "REPS Fig. 20",
    title: "Recycled balls-into-bins with 2:1, 4:1, 8:1 recycling vs OPS",
    small: "10 trials per variant instead of 50",
    body: Body::Theory(TheoryModel::Coalescing),
    claims: &[],
};

/// Fig. 16's EV-set sizes.
const EVS_SIZES: Axis = Axis {
    key: "transport.evs_size",
    values: &["16", "256", "4096", "65536"],
    labels: &["16", "256", "4096", "65536"],
    x_label: "EV-set size",
};

/// A Fig. 16 panel: 8 MiB tornado on `topo` (small: 4 MiB on `small_topo`) over EV-set sizes.
const fn scaling_panel(
    name: &'static str,
    title: &'static str,
    topo: &'static [&'static str],
    small: &'static [&'static str],
) -> Panel {
    Panel {
        name,
        title,
        scenario: "scenarios/evs-sweep-128.toml",
        lbs: &["ops", "reps"],
        set: topo,
        small_set: small,
        axis: Some(EVS_SIZES),
        metric: MAX_FCT,
        plot: PlotKind::Bars,
        series: false,
    }
}

/// Fig. 16's panels, one per tree size.
const SCALING_SMALLEST: Panel = scaling_panel(
    "smallest",
    "128 hosts (small scale: 16)",
    &[
        "workload={ type = \"tornado\", size = \"8MiB\" }",
        "topology={ type = \"topo_file\", file = \"../data/htsim/topologies/fat_tree_128_1os_2t_400g.topo\" }",
    ],
    &[
        "workload={ type = \"tornado\", size = \"4MiB\" }",
        "topology={ type = \"topo_file\", file = \"../data/htsim/topologies/fat_tree_16_1os_2t_400g.topo\" }",
    ],
);
const SCALING_MIDDLE: Panel = scaling_panel(
    "middle",
    "1024 hosts (small scale: 32)",
    &[
        "workload={ type = \"tornado\", size = \"8MiB\" }",
        "topology={ type = \"topo_file\", file = \"../data/htsim/topologies/fat_tree_1024_1os_2t_400g.topo\" }",
    ],
    &[
        "workload={ type = \"tornado\", size = \"4MiB\" }",
        "topology={ type = \"topo_file\", file = \"../data/htsim/topologies/fat_tree_32_1os_2t_400g.topo\" }",
    ],
);
const SCALING_LARGEST: Panel = scaling_panel(
    "largest",
    "8192 hosts (small scale: 64)",
    &[
        "workload={ type = \"tornado\", size = \"8MiB\" }",
        "topology={ type = \"topo_file\", file = \"../data/htsim/topologies/fat_tree_8192_1os_2t_400g.topo\" }",
    ],
    &[
        "workload={ type = \"tornado\", size = \"4MiB\" }",
        "topology={ type = \"topo_file\", file = \"../data/htsim/topologies/fat_tree_64_1os_2t_400g.topo\" }",
    ],
);

/// REPS Fig. 16.
pub(super) const FIG16: Figure = Figure {
    id: "reps-fig16",
    paper: "REPS Fig. 16",
    title: "Topology scaling x EV-set size: 8 MiB tornado on 2-tier trees of 128, 1024 and 8192 hosts, 16 to 65536 EVs, OPS vs REPS",
    small: "16, 32 and 64 hosts and 4 MiB flows instead of 128, 1024 and 8192 hosts and 8 MiB",
    body: Body::Sim(&[SCALING_SMALLEST, SCALING_MIDDLE, SCALING_LARGEST]),
    claims: &[
        Claim {
            what: "largest tree: OPS max FCT, 16 EVs / 65536 EVs (more than 2x slower)",
            paper: 2.0,
            ours: Ours::AtLeast(&Ours::Ratio(
                at_x(2, "ops", "16", MAX_FCT),
                at_x(2, "ops", "65536", MAX_FCT),
            )),
        },
        Claim {
            what: "largest tree: REPS max FCT, 256 EVs / 65536 EVs (REPS good everywhere but at 16 EVs)",
            paper: 1.0,
            ours: Ours::Ratio(
                at_x(2, "reps", "256", MAX_FCT),
                at_x(2, "reps", "65536", MAX_FCT),
            ),
        },
    ],
};
