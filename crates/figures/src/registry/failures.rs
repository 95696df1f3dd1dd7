//! Failure figures of the REPS paper: failure modes, extreme and incremental failures, freezing.
use super::*;

/// REPS Fig. 9.
pub(super) const FIG9: Figure = Figure {
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
};

/// REPS Fig. 22.
pub(super) const FIG22: Figure = Figure {
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
};

/// REPS Fig. 23.
pub(super) const FIG23: Figure = Figure {
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
            ours: ratio_at_x(0, "none", "reps-nofreeze", "reps", MAX_FCT),
        },
        Claim {
            what: "1 % cables failed: max FCT without / with freezing (about 25 % gain)",
            paper: 1.25,
            ours: ratio_at_x(0, "1 %", "reps-nofreeze", "reps", MAX_FCT),
        },
    ],
};

/// Fig. 8's load balancers.
const FIG8_LBS: &[&str] = &["ops", "flowlet", "bitmap", "mprdma", "plb", "reps"];
/// Fig. 8's load balancers as a scenario's `lb`.
const FIG8_LBS_SET: &str = "lb=[\"ops\", \"flowlet\", \"bitmap\", \"mprdma\", \"plb\", \"reps\"]";

/// Fig. 8's eight failure modes: the reference's failure-generator files (persistent from t = 0).
const FAILURE_MODES: Axis = Axis {
    key: "fault",
    values: &[
        "[{ kind = \"file\", file = \"../data/htsim/failures/fail_one_cable.txt\" }]",
        "[{ kind = \"file\", file = \"../data/htsim/failures/fail_one_switch.txt\" }]",
        "[{ kind = \"file\", file = \"../data/htsim/failures/fail_one_switch_one_cable.txt\" }]",
        "[{ kind = \"file\", file = \"../data/htsim/failures/5_percent_failed_cables.txt\" }]",
        "[{ kind = \"file\", file = \"../data/htsim/failures/5_percent_failed_switches.txt\" }]",
        "[{ kind = \"file\", file = \"../data/htsim/failures/5_percent_failed_switches_and_cables.txt\" }]",
        "[{ kind = \"file\", file = \"../data/htsim/failures/ber_cable_one_percent.txt\" }]",
        "[{ kind = \"file\", file = \"../data/htsim/failures/ber_switch_one_percent.txt\" }]",
    ],
    labels: &[
        "1 cable",
        "1 switch",
        "1 switch + 1 cable",
        "5 % cables",
        "5 % switches",
        "5 % switches + cables",
        "BER cable 1 %",
        "BER switch 1 %",
    ],
    x_label: "failure mode",
};

/// REPS Fig. 8.
pub(super) const FIG8: Figure = Figure {
    id: "reps-fig8",
    paper: "REPS Fig. 8",
    title: "Failure macro-analysis on the 32-host 2-tier tree: 8 failure modes x 3 workloads, 6 load balancers, speedup over OPS",
    small: "permutation: 2 MiB flows instead of 8 MiB; WebSearch: 250 us of arrivals instead of 3.5 ms; ring AllReduce: 256 KiB transfers instead of 4 MiB",
    body: Body::Sim(&[
        Panel {
            name: "permutation",
            title: "8 MiB permutation",
            scenario: "scenarios/failures-one-cable-32.toml",
            lbs: FIG8_LBS,
            set: &[FIG8_LBS_SET],
            small_set: &["workload={ type = \"permutation\", size = \"2MiB\" }"],
            axis: Some(FAILURE_MODES),
            metric: COMPLETION,
            plot: PlotKind::Speedup("ops"),
            series: false,
        },
        Panel {
            name: "websearch",
            title: "WebSearch at 100 % load",
            scenario: "scenarios/websearch-128.toml",
            lbs: FIG8_LBS,
            set: &[
                FIG8_LBS_SET,
                TREE_32,
                "queue.size=\"101pkt\"",
                "workload.load=1.0",
                "workload.duration=\"3.5ms\"",
            ],
            small_set: &["workload.duration=\"250us\""],
            axis: Some(FAILURE_MODES),
            metric: MEAN_FCT,
            plot: PlotKind::Speedup("ops"),
            series: false,
        },
        Panel {
            name: "ring",
            title: "Ring AllReduce (rings of 16, 4 MiB transfers)",
            scenario: "scenarios/allreduce-ring-128.toml",
            lbs: FIG8_LBS,
            set: &[FIG8_LBS_SET, TREE_32, "queue.size=\"101pkt\"", "workload.group=16"],
            small_set: &["workload.size=\"256KiB\""],
            axis: Some(FAILURE_MODES),
            metric: COLLECTIVE,
            plot: PlotKind::Speedup("ops"),
            series: false,
        },
    ]),
    claims: &[
        Claim {
            what: "permutation: best speedup of REPS over OPS across failure modes (abstract: up to 100x in failures, not tied to this figure)",
            paper: 100.0,
            ours: Ours::MaxRatio { panel: 0, num: "ops", den: "reps", metric: COMPLETION },
        },
        Claim {
            what: "permutation, BER cable 1 %: OPS / REPS completion (BER does not hurt REPS: >= 1)",
            paper: 1.0,
            ours: Ours::AtLeast(&ratio_at_x(0, "BER cable 1 %", "ops", "reps", COMPLETION)),
        },
    ],
};
