//! Reunion's figures: hash collisions that flowlet schemes leave in place (Figs. 1-5,
//! motivation) and the evaluation of Reunion against ECMP, LetFlow, CONGA and ConWeave on
//! 2 GB ring-AllReduce elephants (Figs. 9-14).
//!
//! High and low load are read as 90 % and 40 %, the ends of the paper's 40-90 % range. At
//! small scale the elephants are 8 or 16 MB instead of 2 GB and Reunion's interval s is 50 us
//! instead of 1 ms (its golden tests' reduction: an interval still spans several round trips,
//! and a flow many intervals); Fig. 12's three intervals are scaled with it.
use super::*;
use crate::draw::{
    LAST_REROUTE_MS, NEW_FLOWLETS, NEW_FLOWLETS_2500US, NEW_FLOWLETS_AFTER_1MS, REROUTES,
    SLOW_ELEPHANTS_PCT,
};

/// Of the links carrying elephants in a period, the share carrying two or more (second half
/// of the run).
const COLLISIONS: Metric = Metric {
    column: "elephant_collisions",
    label: "link-periods with 2+ elephants (share, second half)",
};

/// Reunion Fig. 3.
pub(super) const FIG3: Figure = Figure {
    id: "reunion-fig3",
    paper: "Reunion Fig. 3",
    title: "Elephants per link over time on the 8 x 8 leaf-spine at 75 % load: LetFlow and CONGA (flowlet timeouts 500 ns, 1 us), ConWeave, Reunion",
    small: "the first 2 ms instead of 10 ms (Reunion, at its 1 ms interval, has not converged by then)",
    body: Body::Sim(&[Panel {
        name: "",
        title: "Links with 2+ elephants, second half of the run (ideal 0)",
        scenario: "scenarios/reunion-collisions.toml",
        lbs: &[
            "letflow-500ns",
            "letflow-1us",
            "conga-500ns",
            "conga-1us",
            "conweave",
            "reunion",
        ],
        set: &[],
        small_set: &["end=\"2ms\""],
        axis: None,
        metric: COLLISIONS,
        plot: PlotKind::Bars,
        series: false,
    }]),
    // The paper states no number: its claim is that collisions persist under LetFlow, CONGA
    // and ConWeave after convergence (the chart shows it).
    claims: &[],
};

/// The five schemes of Figs. 9-14, as `reunion-load.toml` labels them.
const FIVE: &[&str] = &["ecmp", "letflow", "conga", "conweave", "reunion"];

/// The four Reunion is compared with.
const OTHERS: &[&str] = &["ecmp", "letflow", "conga", "conweave"];

/// The network loads of Figs. 9, 10 and 13: the share of the 64 hosts in the ring (see
/// `scenarios/ring-2gb-elephants.toml`).
const RING_LOADS: Axis = Axis {
    key: "workload.ranks",
    values: &["26", "32", "38", "45", "51", "58"],
    labels: &["40", "50", "60", "70", "80", "90"],
    x_label: "network load (%)",
};

/// Small-scale elephants of the figures of few runs (16 MB instead of 2 GB).
const SMALL_SIZE: &str = "workload.size=\"16MB\"";

/// Small-scale elephants of the figures of the five schemes at many loads or slicings (8 MB).
const SMALL_MANY: &str = "workload.size=\"8MB\"";

/// The five schemes with Reunion's interval at small scale (50 us for the paper's 1 ms).
const SMALL_FIVE: &str = "lb=[\"ecmp\", { scheme = \"ecmp\", label = \"letflow\", switch = { scheme = \"letflow\", at = \"source-tor\" } }, \"conga\", \"conweave\", { scheme = \"ecmp\", label = \"reunion\", switch = { scheme = \"reunion\", interval = \"50us\" } }]";

const MIN_FCT: Metric = Metric {
    column: "fct_min_us",
    label: "min FCT (us)",
};

/// Share of elephants at 1.5 x the fastest FCT or slower.
const SLOW: Metric = Metric {
    column: SLOW_ELEPHANTS_PCT,
    label: "elephants at 1.5 x the fastest FCT or more (%)",
};

const REROUTE_COUNT: Metric = Metric {
    column: REROUTES,
    label: "reroutes",
};

const LAST_REROUTE: Metric = Metric {
    column: LAST_REROUTE_MS,
    label: "last reroute (ms)",
};

/// Reunion's max FCT below `other`'s at load `load` (percent).
const fn tail_cut(panel: usize, load: &'static str, other: &'static str) -> Ours {
    Ours::Reduction(
        at_x(panel, "reunion", load, MAX_FCT),
        at_x(panel, other, load, MAX_FCT),
    )
}

/// The lowest other scheme's max FCT over Reunion's at load `load` (above 1: Reunion lowest).
const fn lowest_other(panel: usize, load: &'static str) -> Ours {
    Ours::LowestOtherRatio {
        of: at_x(panel, "reunion", load, MAX_FCT),
        others: OTHERS,
    }
}

/// One panel of the load figures: `reunion-load.toml` (or another scenario of the same
/// schemes) over the six loads.
const fn load_panel(
    name: &'static str,
    title: &'static str,
    scenario: &'static str,
    small_set: &'static [&'static str],
    plot: PlotKind,
) -> Panel {
    Panel {
        name,
        title,
        scenario,
        lbs: FIVE,
        set: &[],
        small_set,
        axis: Some(RING_LOADS),
        metric: MAX_FCT,
        plot,
        series: false,
    }
}

/// Reunion Fig. 9.
#[rustfmt::skip]
pub(super) const FIG9: Figure = Figure {
    id: "reunion-fig9",
    paper: "Reunion Fig. 9",
    title: "Elephant FCT distribution at 40-90 % load: ECMP, LetFlow, CONGA, ConWeave, Reunion (2 GB ring elephants, 8 x 8 leaf-spine, PFC + DCQCN)",
    small: "8 MB elephants instead of 2 GB, Reunion's interval 50 us instead of 1 ms",
    body: Body::Sim(&[load_panel(
        "",
        "Elephant FCT CDF per load",
        "scenarios/reunion-load.toml",
        &[SMALL_MANY, SMALL_FIVE],
        PlotKind::FctCdf,
    )]),
    claims: &[
        Claim { what: "90 %: Reunion's max FCT below CONGA's (%)", paper: 43.8, ours: tail_cut(0, "90", "conga") },
        Claim { what: "90 %: Reunion's max FCT below LetFlow's (%)", paper: 44.8, ours: tail_cut(0, "90", "letflow") },
        Claim { what: "90 %: Reunion's max FCT below ECMP's (%)", paper: 44.9, ours: tail_cut(0, "90", "ecmp") },
        Claim { what: "90 %: Reunion's max FCT below ConWeave's (%)", paper: 10.9, ours: tail_cut(0, "90", "conweave") },
        Claim { what: "40 %: Reunion's max FCT below CONGA's (%)", paper: 62.1, ours: tail_cut(0, "40", "conga") },
        Claim { what: "40 %: Reunion's max FCT below LetFlow's (%)", paper: 46.3, ours: tail_cut(0, "40", "letflow") },
        Claim { what: "40 %: Reunion's max FCT below ECMP's (%)", paper: 45.4, ours: tail_cut(0, "40", "ecmp") },
        Claim { what: "40 %: Reunion's max FCT below ConWeave's (%)", paper: 17.9, ours: tail_cut(0, "40", "conweave") },
        Claim { what: "90 %: Reunion's elephants at 1.5 x the fastest FCT or more (%; paper: about 20 % at about 2 x optimal)", paper: 20.0, ours: Ours::Value(at_x(0, "reunion", "90", SLOW)) },
    ],
};

/// Reunion Fig. 10.
#[rustfmt::skip]
pub(super) const FIG10: Figure = Figure {
    id: "reunion-fig10",
    paper: "Reunion Fig. 10",
    title: "Max elephant FCT against the load, five schemes (the runs of Fig. 9)",
    small: "8 MB elephants instead of 2 GB, Reunion's interval 50 us instead of 1 ms",
    body: Body::Sim(&[load_panel(
        "",
        "Max elephant FCT against the network load",
        "scenarios/reunion-load.toml",
        &[SMALL_MANY, SMALL_FIVE],
        PlotKind::Lines,
    )]),
    claims: &[
        Claim { what: "Reunion's max FCT below the best other scheme's, smallest over 40-90 % (%)", paper: 10.9, ours: Ours::ReductionVsBest { panel: 0, of: "reunion", others: OTHERS, metric: MAX_FCT, largest: false } },
        Claim { what: "Reunion's max FCT below the best other scheme's, largest over 40-90 % (%)", paper: 25.2, ours: Ours::ReductionVsBest { panel: 0, of: "reunion", others: OTHERS, metric: MAX_FCT, largest: true } },
        Claim { what: "90 %: lowest other max FCT / Reunion's (> 1: Reunion lowest of the five; paper: ConWeave 10.9 % above)", paper: 1.0 / (1.0 - 0.109), ours: lowest_other(0, "90") },
        Claim { what: "40 %: lowest other max FCT / Reunion's (> 1: Reunion lowest; paper: ConWeave 17.9 % above)", paper: 1.0 / (1.0 - 0.179), ours: lowest_other(0, "40") },
        Claim { what: "90 %: ConWeave's max FCT above its min FCT (%)", paper: 15.2, ours: Ours::Increase(at_x(0, "conweave", "90", MAX_FCT), at_x(0, "conweave", "90", MIN_FCT)) },
    ],
};

/// Fig. 12's Reunion runs, labelled by the paper's interval.
const INTERVALS: &[&str] = &["ecmp", "reunion-250us", "reunion-1000us", "reunion-2500us"];

/// Fig. 12 at small scale: the intervals scaled with the elephants (12.5, 50, 125 us).
const SMALL_INTERVALS: &str = "lb=[\"ecmp\", { scheme = \"ecmp\", label = \"reunion-250us\", switch = { scheme = \"reunion\", interval = \"12500ns\" } }, { scheme = \"ecmp\", label = \"reunion-1000us\", switch = { scheme = \"reunion\", interval = \"50us\" } }, { scheme = \"ecmp\", label = \"reunion-2500us\", switch = { scheme = \"reunion\", interval = \"125us\" } }]";

/// A panel of Fig. 12's runs.
const fn interval_panel(
    name: &'static str,
    title: &'static str,
    metric: Metric,
    plot: PlotKind,
) -> Panel {
    Panel {
        name,
        title,
        scenario: "scenarios/reunion-interval.toml",
        lbs: INTERVALS,
        set: &[],
        small_set: &[SMALL_SIZE, SMALL_INTERVALS],
        axis: None,
        metric,
        plot,
        series: false,
    }
}

/// Reunion's max FCT at interval `lb` below ECMP's (percent).
const fn below_ecmp(lb: &'static str) -> Ours {
    Ours::Reduction(at(lb, MAX_FCT), at("ecmp", MAX_FCT))
}

/// Reunion Fig. 12.
#[rustfmt::skip]
pub(super) const FIG12: Figure = Figure {
    id: "reunion-fig12",
    paper: "Reunion Fig. 12",
    title: "Robustness to the statistical interval s (250, 1000, 2500 us; t = 1) at 75 % load: reroutes over time and the FCT distribution, beside ECMP",
    small: "16 MB elephants instead of 2 GB, intervals 12.5, 50, 125 us instead of 250, 1000, 2500 us (labels keep the paper's)",
    body: Body::Sim(&[
        interval_panel("reroutes", "Reroutes over time", REROUTE_COUNT, PlotKind::Cumulative(EventKind::Reroutes)),
        interval_panel("fct", "Elephant FCT CDF", MAX_FCT, PlotKind::FctCdf),
    ]),
    claims: &[
        Claim { what: "s = 250 us: Reunion's max FCT below ECMP's (%; paper: at least 61.9 for every s)", paper: 61.9, ours: Ours::AtLeast(&below_ecmp("reunion-250us")) },
        Claim { what: "s = 1000 us: Reunion's max FCT below ECMP's (%)", paper: 61.9, ours: Ours::AtLeast(&below_ecmp("reunion-1000us")) },
        Claim { what: "s = 2500 us: Reunion's max FCT below ECMP's (%)", paper: 61.9, ours: Ours::AtLeast(&below_ecmp("reunion-2500us")) },
        Claim { what: "s = 250 us: last reroute (ms; paper: nearly all within 6 ms)", paper: 6.0, ours: Ours::AtMost(&Ours::Value(at("reunion-250us", LAST_REROUTE))) },
        Claim { what: "s = 2500 us: last reroute (ms; paper: nearly all within 30 ms)", paper: 30.0, ours: Ours::AtMost(&Ours::Value(at("reunion-2500us", LAST_REROUTE))) },
        Claim { what: "reroutes at s = 2500 us / at 250 us (> 1: more with a larger s, as the paper)", paper: 1.0, ours: Ours::AtLeast(&Ours::Ratio(at("reunion-2500us", REROUTE_COUNT), at("reunion-250us", REROUTE_COUNT))) },
    ],
};

/// Reunion Fig. 13.
#[rustfmt::skip]
pub(super) const FIG13: Figure = Figure {
    id: "reunion-fig13",
    paper: "Reunion Fig. 13",
    title: "PFC off with IRN selective repeat against PFC with go-back-N: max elephant FCT against the load and the IRN FCT distribution, five schemes",
    small: "8 MB elephants instead of 2 GB, Reunion's interval 50 us instead of 1 ms",
    body: Body::Sim(&[
        load_panel("pfc", "PFC + go-back-N: max FCT against the load", "scenarios/reunion-load.toml", &[SMALL_MANY, SMALL_FIVE], PlotKind::Lines),
        load_panel("irn", "PFC off, IRN: max FCT against the load", "scenarios/reunion-irn.toml", &[SMALL_MANY, SMALL_FIVE], PlotKind::Lines),
        load_panel("irn-cdf", "PFC off, IRN: elephant FCT CDF per load", "scenarios/reunion-irn.toml", &[SMALL_MANY, SMALL_FIVE], PlotKind::FctCdf),
    ]),
    claims: &[
        Claim { what: "largest rise of a scheme's max FCT with IRN over PFC, any load (%; paper: every scheme's below 10 %)", paper: 10.0, ours: Ours::MaxIncrease { panel: 1, base: 0, lbs: FIVE, metric: MAX_FCT } },
        Claim { what: "IRN, 90 %: lowest other max FCT / Reunion's (> 1: Reunion still best)", paper: 1.0, ours: lowest_other(1, "90") },
        Claim { what: "IRN, 40 %: lowest other max FCT / Reunion's (> 1: Reunion still best)", paper: 1.0, ours: lowest_other(1, "40") },
    ],
};

/// One panel of Fig. 14: `reunion-slicing.toml` with `slices` slices and Reunion's t set to
/// it (`set`), at small scale the same with the 50 us interval (`small`), for `lbs`.
const fn slicing_panel(
    name: &'static str,
    title: &'static str,
    lbs: &'static [&'static str],
    set: &'static [&'static str],
    small: &'static [&'static str],
) -> Panel {
    Panel {
        name,
        title,
        scenario: "scenarios/reunion-slicing.toml",
        lbs,
        set,
        small_set: small,
        axis: None,
        metric: MAX_FCT,
        plot: PlotKind::FctCdf,
        series: false,
    }
}

/// Fig. 14's schemes with Reunion's tolerance t = `$t`, at its interval `$s`.
macro_rules! sliced_lbs {
    ($t:literal, $s:literal) => {
        concat!(
            "lb=[\"ecmp\", { scheme = \"ecmp\", label = \"letflow\", switch = { scheme = \"letflow\", at = \"source-tor\" } }, \"conga\", \"conweave\", { scheme = \"ecmp\", label = \"reunion\", switch = { scheme = \"reunion\", tolerance = ",
            $t,
            ", interval = \"",
            $s,
            "\" } }]"
        )
    };
}

/// Reunion alone with tolerance t = `$t` at interval `$s`.
macro_rules! reunion_only {
    ($t:literal, $s:literal) => {
        concat!(
            "lb=[{ scheme = \"ecmp\", label = \"reunion\", switch = { scheme = \"reunion\", tolerance = ",
            $t,
            ", interval = \"",
            $s,
            "\" } }]"
        )
    };
}

/// DCQCN recovering 20 times faster after a cut (hyper-additive step 2 Gb/s instead of the
/// scenario's 100 Mb/s): the option under which the paper's "Reunion unchanged by slicing"
/// holds (`docs/fidelity.md`, section Reunion).
const FAST_RECOVERY: &str = "cc.hai=\"2Gbps\"";

/// `scheme`'s max FCT with `slices` slices (panel) below its unsliced one (panel 0), percent.
const fn slicing_gain(panel: usize, lb: &'static str) -> Ours {
    Ours::Reduction(at_p(panel, lb, MAX_FCT), at_p(0, lb, MAX_FCT))
}

/// Reunion Fig. 14.
#[rustfmt::skip]
pub(super) const FIG14: Figure = Figure {
    id: "reunion-fig14",
    paper: "Reunion Fig. 14",
    title: "Flow slicing: every 2 GB elephant in 1 (unsliced), 2, 3 or 4 concurrent sub-flows at 90 % load, Reunion with t = the number of slices; elephant FCT = its last slice's; Reunion again unsliced and in 2 slices with DCQCN recovering faster after a cut (hyper-additive step 2 Gb/s)",
    small: "8 MB elephants instead of 2 GB, Reunion's interval 50 us instead of 1 ms",
    body: Body::Sim(&[
        slicing_panel("1", "Unsliced", FIVE, &["workload.slices=1", sliced_lbs!(1, "1000us")], &[SMALL_MANY, sliced_lbs!(1, "50us")]),
        slicing_panel("2", "2 slices", FIVE, &["workload.slices=2", sliced_lbs!(2, "1000us")], &[SMALL_MANY, sliced_lbs!(2, "50us")]),
        slicing_panel("3", "3 slices", FIVE, &["workload.slices=3", sliced_lbs!(3, "1000us")], &[SMALL_MANY, sliced_lbs!(3, "50us")]),
        slicing_panel("4", "4 slices", FIVE, &["workload.slices=4", sliced_lbs!(4, "1000us")], &[SMALL_MANY, sliced_lbs!(4, "50us")]),
        slicing_panel("fast-1", "Reunion unsliced, DCQCN hyper-additive step 2 Gb/s", &["reunion"], &["workload.slices=1", FAST_RECOVERY, reunion_only!(1, "1000us")], &[SMALL_MANY, reunion_only!(1, "50us")]),
        slicing_panel("fast-2", "Reunion in 2 slices, DCQCN hyper-additive step 2 Gb/s", &["reunion"], &["workload.slices=2", FAST_RECOVERY, reunion_only!(2, "1000us")], &[SMALL_MANY, reunion_only!(2, "50us")]),
    ]),
    claims: &[
        Claim { what: "2 slices: ECMP's max FCT below unsliced (%)", paper: 25.5, ours: slicing_gain(1, "ecmp") },
        Claim { what: "2 slices: CONGA's max FCT below unsliced (%; paper: at least 39.2 for 2-4 slices)", paper: 39.2, ours: slicing_gain(1, "conga") },
        Claim { what: "2 slices: LetFlow's max FCT below unsliced (%)", paper: 10.1, ours: slicing_gain(1, "letflow") },
        Claim { what: "2 slices: Reunion's max FCT change from unsliced (%; paper: about unchanged)", paper: 0.0, ours: Ours::Increase(at_p(1, "reunion", MAX_FCT), at_p(0, "reunion", MAX_FCT)) },
        Claim { what: "4 slices: Reunion's max FCT change from unsliced (%; paper: about unchanged)", paper: 0.0, ours: Ours::Increase(at_p(3, "reunion", MAX_FCT), at_p(0, "reunion", MAX_FCT)) },
        Claim { what: "DCQCN hyper-additive step 2 Gb/s, 2 slices: Reunion's max FCT change from unsliced (%; paper: about unchanged)", paper: 0.0, ours: Ours::Increase(at_p(5, "reunion", MAX_FCT), at_p(4, "reunion", MAX_FCT)) },
        Claim { what: "2 slices: Reunion's reroutes / unsliced (paper: nearly doubled)", paper: 2.0, ours: Ours::Ratio(at_p(1, "reunion", REROUTE_COUNT), at_p(0, "reunion", REROUTE_COUNT)) },
        Claim { what: "3 slices: ConWeave's max FCT below Reunion's (%)", paper: 3.0, ours: Ours::Reduction(at_p(2, "conweave", MAX_FCT), at_p(2, "reunion", MAX_FCT)) },
        Claim { what: "4 slices: ConWeave's max FCT below Reunion's (%)", paper: 3.0, ours: Ours::Reduction(at_p(3, "conweave", MAX_FCT), at_p(3, "reunion", MAX_FCT)) },
    ],
};

/// LetFlow's flowlet timeouts of Fig. 4 (the paper names 1000, 1200 and 2000 ns; 1500 ns
/// between them), at the source ToR as in Figs. 9-14, each flowlet recorded as an event.
const FLOWLET_TIMEOUTS: Axis = Axis {
    key: "routing.switch",
    values: &[
        "{ scheme = \"letflow\", at = \"source-tor\", timeout = \"1000ns\", events = true }",
        "{ scheme = \"letflow\", at = \"source-tor\", timeout = \"1200ns\", events = true }",
        "{ scheme = \"letflow\", at = \"source-tor\", timeout = \"1500ns\", events = true }",
        "{ scheme = \"letflow\", at = \"source-tor\", timeout = \"2000ns\", events = true }",
    ],
    labels: &["1000", "1200", "1500", "2000"],
    x_label: "flowlet timeout (ns)",
};

/// Fig. 4's set-up: over 120 elephants in the AllReduce pattern (all 64 hosts in the ring,
/// each elephant in 2 concurrent halves: 128 flows), lossless, DCQCN made conservative as the
/// paper did (its values are not stated: LAPS's AI and HAI of 5 and 50 Mb/s, a 10 Mb/s
/// minimum rate), receivers' reordering measured, LetFlow from the axis.
const FIG4_SET: &[&str] = &[
    "lb=[{ scheme = \"ecmp\", label = \"letflow\" }]",
    "workload.ranks=64",
    "workload.slices=2",
    "cc={ algo = \"dcqcn\", ai = \"5Mbps\", hai = \"50Mbps\", min_rate = \"10Mbps\" }",
    "metrics.reorder=true",
];

/// Fig. 4's smaller flows (tens of MB), the same set-up otherwise.
const FIG4_SMALLER_SET: &[&str] = &[
    "lb=[{ scheme = \"ecmp\", label = \"letflow\" }]",
    "workload.ranks=64",
    "workload.slices=2",
    "cc={ algo = \"dcqcn\", ai = \"5Mbps\", hai = \"50Mbps\", min_rate = \"10Mbps\" }",
    "metrics.reorder=true",
    "workload.size=\"50MB\"",
];

/// A panel of Fig. 4 (16 MB flows at small scale).
const fn flowlet_panel(
    name: &'static str,
    title: &'static str,
    set: &'static [&'static str],
    metric: Metric,
    plot: PlotKind,
) -> Panel {
    Panel {
        name,
        title,
        scenario: "scenarios/reunion-load.toml",
        lbs: &["letflow"],
        set,
        small_set: &[SMALL_SIZE],
        axis: Some(FLOWLET_TIMEOUTS),
        metric,
        plot,
        series: false,
    }
}

const FLOWLETS_2500US: Metric = Metric {
    column: NEW_FLOWLETS_2500US,
    label: "new flowlets in the first 2.5 ms",
};

const FLOWLETS_ALL: Metric = Metric {
    column: NEW_FLOWLETS,
    label: "new flowlets (whole run)",
};

const FLOWLETS_AFTER_1MS: Metric = Metric {
    column: NEW_FLOWLETS_AFTER_1MS,
    label: "new flowlets after the first 1 ms",
};

const OUT_OF_ORDER: Metric = Metric {
    column: "out_of_order_fraction",
    label: "data packets out of order (fraction)",
};

/// Reunion Fig. 4.
#[rustfmt::skip]
pub(super) const FIG4: Figure = Figure {
    id: "reunion-fig4",
    paper: "Reunion Fig. 4",
    title: "LetFlow's flowlet timeout is hard to choose: flowlets over time, reordering, elephant and smaller-flow FCT against the timeout (128 ring flows, 8 x 8 leaf-spine, PFC, conservative DCQCN)",
    small: "16 MB flows instead of 2 GB and 50 MB (the elephant and smaller-flow panels then plot the same runs)",
    body: Body::Sim(&[
        flowlet_panel("flowlets", "(a) New flowlets over time per flowlet timeout (ns)", FIG4_SET, FLOWLETS_2500US, PlotKind::Cumulative(EventKind::NewFlowlets)),
        flowlet_panel("count", "New flowlets against the flowlet timeout", FIG4_SET, FLOWLETS_ALL, PlotKind::Lines),
        flowlet_panel("reorder", "(b) Reordering against the flowlet timeout", FIG4_SET, OUT_OF_ORDER, PlotKind::Lines),
        flowlet_panel("fct", "(c) Elephant FCT CDF per flowlet timeout (ns)", FIG4_SET, MAX_FCT, PlotKind::FctCdf),
        flowlet_panel("smaller", "(d) FCT CDF of 50 MB flows per flowlet timeout (ns)", FIG4_SMALLER_SET, MAX_FCT, PlotKind::FctCdf),
    ]),
    claims: &[
        Claim { what: "timeout 1,000 ns: new flowlets in the first 2.5 ms (paper: over 2,500)", paper: 2500.0, ours: Ours::Value(at_x(0, "letflow", "1000", FLOWLETS_2500US)) },
        Claim { what: "timeout 2,000 ns: new flowlets in the first 2.5 ms (paper: almost none)", paper: 0.0, ours: Ours::Value(at_x(0, "letflow", "2000", FLOWLETS_2500US)) },
        Claim { what: "timeout 1,200 ns: new flowlets after the first 1 ms (paper: few)", paper: 0.0, ours: Ours::Value(at_x(0, "letflow", "1200", FLOWLETS_AFTER_1MS)) },
    ],
};

/// Reunion Fig. 1.
pub(super) const FIG1: Figure = Figure {
    id: "reunion-fig1",
    paper: "Reunion Fig. 1",
    title: "Queue length at a leaf's uplinks during ring-AllReduce microbursts (64 hosts, 8 x 8 leaf-spine, ECMP, PFC + DCQCN)",
    small: "a 16 MiB AllReduce with 200 us between iterations instead of 256 MiB and 5 ms",
    body: Body::Sim(&[Panel {
        name: "",
        title: "Queue at leaf 0's uplinks over time",
        scenario: "scenarios/reunion-load.toml",
        lbs: &["ecmp"],
        // The paper states no set-up for this motivation figure: two iterations of a ring
        // AllReduce over every host (each step a burst of 64 synchronous flows), a compute
        // gap between them.
        set: &[
            "workload={ type = \"collective\", collective = \"ring_allreduce\", size = \"256MiB\", ranks = 64, placement = \"spread\", iterations = 2, compute_gap = \"5ms\" }",
            "collect={ switches = [\"leaf0\"], bucket = \"20us\" }",
        ],
        small_set: &["workload={ type = \"collective\", collective = \"ring_allreduce\", size = \"16MiB\", ranks = 64, placement = \"spread\", iterations = 2, compute_gap = \"200us\" }"],
        axis: None,
        metric: MAX_FCT,
        plot: PlotKind::Queues,
        series: true,
    }]),
    // Qualitative in the paper: periodic queue build-ups.
    claims: &[],
};

/// Reunion Fig. 5.
#[rustfmt::skip]
pub(super) const FIG5: Figure = Figure {
    id: "reunion-fig5",
    paper: "Reunion Fig. 5",
    title: "Missed rerouting: sending rates of the flows leaving one leaf under LetFlow (timeout 1.2 us) at 75 % load; once flows share a bottleneck no new flowlet moves them",
    small: "the first 2 ms instead of 10 ms",
    body: Body::Sim(&[Panel {
        name: "",
        title: "Rate of each flow from leaf 0's hosts",
        scenario: "scenarios/reunion-collisions.toml",
        lbs: &["letflow-1.2us"],
        set: &[
            "lb=[{ scheme = \"ecmp\", label = \"letflow-1.2us\", switch = { scheme = \"letflow\", at = \"source-tor\", timeout = \"1200ns\", events = true } }]",
            // The 48 ring members leave hosts 0-5 of leaf 0, one elephant each.
            "collect={ switches = [\"host0\", \"host1\", \"host2\", \"host3\", \"host4\", \"host5\"], bucket = \"50us\" }",
        ],
        small_set: &["end=\"2ms\""],
        axis: None,
        metric: FLOWLETS_AFTER_1MS,
        plot: PlotKind::HostRates,
        series: true,
    }]),
    claims: &[
        Claim { what: "new flowlets after the first 1 ms (paper: none once the flows settle)", paper: 0.0, ours: Ours::Value(at("letflow-1.2us", FLOWLETS_AFTER_1MS)) },
    ],
};
