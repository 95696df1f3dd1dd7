//! Macro benchmarks of the REPS paper: synthetic, WebSearch and AI-collective workloads for its nine load balancers.
use super::*;

/// REPS Fig. 3.
pub(super) const FIG3: Figure = Figure {
    id: "reps-fig3",
    paper: "REPS Fig. 3",
    title: "Symmetric macro-analysis, synthetic, WebSearch and AI-collective panels: 9 load balancers",
    small: "synthetic: 128 hosts instead of 1024; WebSearch: 32 hosts and 250 us of arrivals instead of 128 hosts and 5 ms; collectives: 32 hosts and 256 KiB transfers (rings of 16) instead of 128 hosts and 2 MB / 4 MiB / 20 MB",
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
        ALLTOALL_SYM,
        RING_SYM,
        BUTTERFLY_SYM,
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
            ours: ratio_at_x(0, "incast 8MiB", "ecmp", "reps", MAX_FCT),
        },
        Claim {
            what: "WebSearch at 100 % load: OPS / REPS mean FCT (REPS about 5 % better)",
            paper: 1.05,
            ours: ratio_at_x(1, "1.0", "ops", "reps", MEAN_FCT),
        },
        Claim {
            what: "AllToAll: best speedup of REPS over OPS across n (up to 20 %)",
            paper: 1.2,
            ours: Ours::MaxRatio { panel: 2, num: "ops", den: "reps", metric: COLLECTIVE },
        },
        Claim {
            what: "ring AllReduce: OPS / REPS runtime (equal for most load balancers)",
            paper: 1.0,
            ours: Ours::Ratio(at_p(3, "ops", COLLECTIVE), at_p(3, "reps", COLLECTIVE)),
        },
    ],
};

/// A collective panel of Figs. 3 and 5 for the nine load balancers, plotting completion time.
const fn collective_panel(
    name: &'static str,
    title: &'static str,
    scenario: &'static str,
    set: &'static [&'static str],
    small_set: &'static [&'static str],
    axis: Option<Axis>,
) -> Panel {
    Panel {
        name,
        title,
        scenario,
        lbs: NINE_LBS,
        set,
        small_set,
        axis,
        metric: COLLECTIVE,
        plot: PlotKind::Bars,
        series: false,
    }
}

/// Captions of the collective panels.
const ALLTOALL_TITLE: &str = "AllToAll, 2 MB per pair, n connections per host at once";
const RING_TITLE: &str =
    "Ring AllReduce (the artifact's matrix: one ring of 64 random hosts, 4 MB transfers)";
/// The ring AllReduce the artifact's Fig. 3 and 5 scripts generate and run (see
/// `data/htsim/README.md`); small scale replaces it with rings of 16 of the 32 hosts.
const RING_CM: &str =
    "workload={ type = \"cm\", file = \"../data/htsim/connection_matrices/allreduce_128.cm\" }";
const BUTTERFLY_TITLE: &str = "Butterfly AllReduce, 20 MB per stage";
/// Small-scale ring AllReduce: rings of 16 of the 32 hosts.
const SMALL_RING: &[&str] = &[TREE_32, SMALL_RING_WORKLOAD];
/// The small-scale ring: the scenario's reference-generator rings, 16 of the 32 hosts each.
const SMALL_RING_WORKLOAD: &str = "workload={ type = \"collective\", collective = \"ring_reference\", group = 16, size = \"256KiB\" }";

/// Fig. 3's collective panels (symmetric tree).
const ALLTOALL_SYM: Panel = collective_panel(
    "alltoall",
    ALLTOALL_TITLE,
    "scenarios/alltoall-128.toml",
    &[NINE_LBS_SET],
    SMALL_COLLECTIVE,
    Some(ALLTOALL_CONCURRENCY),
);
const RING_SYM: Panel = collective_panel(
    "ring",
    RING_TITLE,
    "scenarios/allreduce-ring-128.toml",
    &[NINE_LBS_SET, RING_CM],
    SMALL_RING,
    None,
);
const BUTTERFLY_SYM: Panel = collective_panel(
    "butterfly",
    BUTTERFLY_TITLE,
    "scenarios/allreduce-butterfly-128.toml",
    &[NINE_LBS_SET],
    SMALL_COLLECTIVE,
    None,
);

/// Fig. 5's asymmetry in its synthetic runs, as the artifact's `-failed 4 -skip_asy` sets it:
/// ToRs 0, 4, 8 and 12 each have their uplink to spine 0 at 200 G (4 of 128 ToR uplinks,
/// "3 %"), the ToR-to-spine direction only.
const DEGRADED_128: &str = "degrade=[{ link = \"tor0->spine0\", speed = \"200Gbps\" }, { link = \"tor4->spine0\", speed = \"200Gbps\" }, { link = \"tor8->spine0\", speed = \"200Gbps\" }, { link = \"tor12->spine0\", speed = \"200Gbps\" }]";

/// Fig. 5's asymmetry in its WebSearch and collective runs, as the artifact's `-failed 4`
/// (without `-skip_asy`) sets it: 4 of ToR 0's 8 uplinks at 200 G, ToR to spine only.
const DEGRADED_TOR0_128: &str = "degrade=[{ link = \"tor0->spine0\", speed = \"200Gbps\" }, { link = \"tor0->spine1\", speed = \"200Gbps\" }, { link = \"tor0->spine2\", speed = \"200Gbps\" }, { link = \"tor0->spine3\", speed = \"200Gbps\" }]";

/// The same share on the 32-host tree: ToR 0's uplink to spine 0 (1 of 32).
const DEGRADED_32: &str = "degrade=[{ link = \"tor0->spine0\", speed = \"200Gbps\" }]";

/// Fig. 5's collective panels (degraded uplinks).
const ALLTOALL_ASY: Panel = collective_panel(
    "alltoall",
    ALLTOALL_TITLE,
    "scenarios/alltoall-128.toml",
    &[NINE_LBS_SET, DEGRADED_TOR0_128],
    &[TREE_32, "workload.size=\"256KiB\"", DEGRADED_32],
    Some(ALLTOALL_CONCURRENCY),
);
const RING_ASY: Panel = collective_panel(
    "ring",
    RING_TITLE,
    "scenarios/allreduce-ring-128.toml",
    &[NINE_LBS_SET, DEGRADED_TOR0_128, RING_CM],
    &[TREE_32, SMALL_RING_WORKLOAD, DEGRADED_32],
    None,
);
const BUTTERFLY_ASY: Panel = collective_panel(
    "butterfly",
    BUTTERFLY_TITLE,
    "scenarios/allreduce-butterfly-128.toml",
    &[NINE_LBS_SET, DEGRADED_TOR0_128],
    &[TREE_32, "workload.size=\"256KiB\"", DEGRADED_32],
    None,
);

/// REPS Fig. 5.
pub(super) const FIG5: Figure = Figure {
    id: "reps-fig5",
    paper: "REPS Fig. 5",
    title: "Asymmetric macro-analysis: 4 of 128 ToR uplinks at 200 G, synthetic, WebSearch and AI-collective workloads, 9 load balancers",
    small: "32 hosts (ToR 0's uplink to spine 0 at 200 G: 1 of 32) instead of 128; WebSearch: 250 us of arrivals instead of 3.5 ms; collectives: 256 KiB transfers (rings of 16)",
    body: Body::Sim(&[
        Panel {
            name: "synthetic",
            title: "Synthetic workloads (incast 8:1, permutation, tornado), 3 % of ToR uplinks at 200 G",
            scenario: "scenarios/baselines-permutation-128.toml",
            lbs: NINE_LBS,
            set: &[DEGRADED_128],
            small_set: &[TREE_32, DEGRADED_32],
            axis: Some(SYNTHETIC),
            metric: MAX_FCT,
            plot: PlotKind::Speedup("ecmp"),
            series: false,
        },
        Panel {
            name: "websearch",
            title: "WebSearch trace on hosts 0-31, 4 of ToR 0's uplinks at 200 G",
            scenario: "scenarios/websearch-128.toml",
            lbs: NINE_LBS,
            // As the artifact's run_dc.py ran it: its *_ae.cm traces are the 32-host ones (3.5 ms
            // of arrivals, hosts 0-31 on this 128-host tree), with per-pair connection reuse.
            set: &[
                NINE_LBS_SET,
                DEGRADED_TOR0_128,
                "workload.hosts=32",
                "workload.duration=\"3.5ms\"",
                "transport.reuse_connections=true",
            ],
            small_set: &[TREE_32, DEGRADED_32, "workload.duration=\"250us\""],
            axis: Some(LOADS),
            metric: MEAN_FCT,
            plot: PlotKind::Lines,
            series: false,
        },
        ALLTOALL_ASY,
        RING_ASY,
        BUTTERFLY_ASY,
    ]),
    claims: &[
        Claim {
            what: "synthetic: best speedup of REPS over ECMP (up to 5x)",
            paper: 5.0,
            ours: Ours::MaxRatio { panel: 0, num: "ecmp", den: "reps", metric: MAX_FCT },
        },
        Claim {
            what: "synthetic: best speedup of REPS over BitMap (10 % over the second best, usually BitMap)",
            paper: 1.1,
            ours: Ours::MaxRatio { panel: 0, num: "bitmap", den: "reps", metric: MAX_FCT },
        },
        Claim {
            what: "WebSearch at 100 % load: ECMP / REPS mean FCT (10x)",
            paper: 10.0,
            ours: ratio_at_x(1, "1.0", "ecmp", "reps", MEAN_FCT),
        },
        Claim {
            what: "WebSearch at 100 % load: BitMap / REPS mean FCT (25 % over the second best; BitMap taken as it)",
            paper: 1.25,
            ours: ratio_at_x(1, "1.0", "bitmap", "reps", MEAN_FCT),
        },
        Claim {
            what: "ring AllReduce: BitMap / REPS runtime (30 % over the second best; BitMap taken as it)",
            paper: 1.3,
            ours: Ours::Ratio(at_p(3, "bitmap", COLLECTIVE), at_p(3, "reps", COLLECTIVE)),
        },
    ],
};

/// Fig. 6's synthetic workloads with every 10th source host's flows on ECMP (background).
const SYNTHETIC_MIXED: Axis = Axis {
    key: "workload",
    values: &[
        "{ type = \"incast\", senders = 8, receiver = 0, size = \"4MiB\", ecmp_every = 10 }",
        "{ type = \"incast\", senders = 8, receiver = 0, size = \"8MiB\", ecmp_every = 10 }",
        "{ type = \"incast\", senders = 8, receiver = 0, size = \"16MiB\", ecmp_every = 10 }",
        "{ type = \"permutation\", size = \"4MiB\", ecmp_every = 10 }",
        "{ type = \"permutation\", size = \"8MiB\", ecmp_every = 10 }",
        "{ type = \"permutation\", size = \"16MiB\", ecmp_every = 10 }",
        "{ type = \"tornado\", size = \"4MiB\", ecmp_every = 10 }",
        "{ type = \"tornado\", size = \"8MiB\", ecmp_every = 10 }",
        "{ type = \"tornado\", size = \"16MiB\", ecmp_every = 10 }",
    ],
    labels: SYNTHETIC.labels,
    x_label: "workload (every 10th source on ECMP)",
};

/// Fig. 6's per-class metrics (`sweep.csv`'s class columns).
const FOREGROUND_MAX_FCT: Metric = Metric {
    column: "fct_max_main_us",
    label: "foreground max FCT (us)",
};
const BACKGROUND_MAX_FCT: Metric = Metric {
    column: "fct_max_background_us",
    label: "background (ECMP) max FCT (us)",
};

/// A Fig. 6 panel: the mixed synthetic sweep (trimming on), plotting `metric`.
const fn mixed_panel(name: &'static str, title: &'static str, metric: Metric) -> Panel {
    Panel {
        name,
        title,
        scenario: "scenarios/baselines-permutation-128.toml",
        lbs: NINE_LBS,
        set: &["queue.trimming=true"],
        small_set: &[TREE_32],
        axis: Some(SYNTHETIC_MIXED),
        metric,
        plot: PlotKind::Speedup("ecmp"),
        series: false,
    }
}

/// REPS Fig. 6.
pub(super) const FIG6: Figure = Figure {
    id: "reps-fig6",
    paper: "REPS Fig. 6",
    title: "Mixed traffic: every 10th source's flows on ECMP (background), the rest on each of 9 load balancers; speedup of foreground and background max FCT",
    small: "32 hosts instead of 128 (background sources 0, 10, 20, 30)",
    body: Body::Sim(&[
        mixed_panel("foreground", "Foreground flows", FOREGROUND_MAX_FCT),
        mixed_panel("background", "Background (ECMP) flows", BACKGROUND_MAX_FCT),
    ]),
    claims: &[Claim {
        what: "tornado 8 MiB: background max FCT beside REPS / beside ECMP (paper, qualitative: REPS does not slow the ECMP flows, <= 1)",
        paper: 1.0,
        ours: Ours::AtMost(&ratio_at_x(1, "tornado 8MiB", "reps", "ecmp", BACKGROUND_MAX_FCT)),
    }],
};

/// REPS Fig. 21.
pub(super) const FIG21: Figure = Figure {
    id: "reps-fig21",
    paper: "REPS Fig. 21",
    title: "Synthetic benchmarks on a 1024-host 3-tier fat tree (queues 152 packets, ECN 38/114, trimming on), 9 load balancers",
    small: "64-host 3-tier tree instead of 1024 hosts",
    body: Body::Sim(&[Panel {
        name: "",
        title: "Synthetic workloads on a 3-tier fat tree",
        scenario: "scenarios/baselines-permutation-128.toml",
        lbs: NINE_LBS,
        set: &[
            "topology={ type = \"topo_file\", file = \"../data/htsim/topologies/fat_tree_1024_1os_3t_400g.topo\" }",
            "queue={ size = \"152pkt\", ecn_min = \"38pkt\", ecn_max = \"114pkt\", trimming = true }",
            "cc.initial_cwnd=\"228pkt\"",
        ],
        small_set: &["topology={ type = \"topo_file\", file = \"../data/htsim/topologies/fat_tree_64_1os_3t_400g.topo\" }"],
        axis: Some(SYNTHETIC),
        metric: MAX_FCT,
        plot: PlotKind::Speedup("ecmp"),
        series: false,
    }]),
    claims: &[
        Claim {
            what: "best speedup of REPS over ECMP (paper: as in the 2-tier case, where Fig. 3 has up to 6x)",
            paper: 6.0,
            ours: Ours::MaxRatio { panel: 0, num: "ecmp", den: "reps", metric: MAX_FCT },
        },
        Claim {
            what: "best speedup of REPS over OPS (paper: as in the 2-tier case, where Fig. 3 has up to 25 %)",
            paper: 1.25,
            ours: Ours::MaxRatio { panel: 0, num: "ops", den: "reps", metric: MAX_FCT },
        },
    ],
};
