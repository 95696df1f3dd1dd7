//! Micro-analyses of the REPS paper: one ToR's uplinks, symmetric, asymmetric and with transient failures.
use super::*;

/// REPS Fig. 2.
pub(super) const FIG2: Figure = Figure {
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
};

/// REPS Fig. 4.
pub(super) const FIG4: Figure = Figure {
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
};

/// REPS Fig. 7.
pub(super) const FIG7: Figure = Figure {
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
};
