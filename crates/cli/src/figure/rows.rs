//! Rows of the reproduction matrix that have no figure entry yet, with the reason: either not
//! simulatable at all (hardware) or waiting for a scheme or for the figure to be written.

/// A matrix row without a runnable figure.
pub struct Row {
    /// Id it will have.
    pub id: &'static str,
    /// Paper and figure.
    pub paper: &'static str,
    /// What it shows.
    pub title: &'static str,
    /// Why it is not here.
    pub status: &'static str,
}

const FPGA: &str = "not simulatable: FPGA testbed measurement";

/// Every such row, in matrix order.
pub static ROWS: &[Row] = &[
    Row {
        id: "reps-fig10",
        paper: "REPS Fig. 10",
        title: "FPGA goodput, symmetric and asymmetric",
        status: FPGA,
    },
    Row {
        id: "reps-fig11",
        paper: "REPS Fig. 11",
        title: "FPGA FCT distribution and drops on a link failure",
        status: FPGA,
    },
    Row {
        id: "reps-table1",
        paper: "REPS Table 1",
        title: "Per-connection state of REPS (analytic; checked by the reps crate's size test)",
        status: "not a simulation: analytic",
    },
    Row {
        id: "laps-table2",
        paper: "LAPS Table 2",
        title: "FPGA resource usage",
        status: "not simulatable: FPGA synthesis report",
    },
    Row {
        id: "reunion-fig1",
        paper: "Reunion Fig. 1",
        title: "Queue length during AllReduce microbursts (motivation)",
        status: "not yet: schemes exist (DCQCN, PFC); figure entry not written",
    },
    Row {
        id: "reunion-fig4",
        paper: "Reunion Fig. 4",
        title: "LetFlow flowlet-timeout sensitivity",
        status: "not yet: LetFlow exists; needs flowlet counts over time and reorder metrics",
    },
    Row {
        id: "reunion-fig5",
        paper: "Reunion Fig. 5",
        title: "Colliding flows over time (illustration)",
        status: "not yet: LetFlow exists; needs colliding-flow instrumentation",
    },
    Row {
        id: "reunion-fig9",
        paper: "Reunion Fig. 9",
        title: "Elephant FCT CDF, loads 40-90 %",
        status: "not yet: data from scenarios/reunion-load.toml (--set workload.ranks for 40-90 %); figure entry not written",
    },
    Row {
        id: "reunion-fig10",
        paper: "Reunion Fig. 10",
        title: "Max FCT per scheme vs load",
        status: "not yet: data from scenarios/reunion-load.toml (--set workload.ranks for 40-90 %); figure entry not written",
    },
    Row {
        id: "reunion-fig12",
        paper: "Reunion Fig. 12",
        title: "Robustness to the statistical interval",
        status: "not yet: data from scenarios/reunion-interval.toml; figure entry not written",
    },
    Row {
        id: "reunion-fig13",
        paper: "Reunion Fig. 13",
        title: "PFC off with IRN SACK",
        status: "not yet: data from scenarios/reunion-irn.toml; figure entry not written",
    },
    Row {
        id: "reunion-fig14",
        paper: "Reunion Fig. 14",
        title: "Flow slicing into 2-4 sub-flows",
        status: "not yet: data from scenarios/reunion-slicing.toml; figure entry not written",
    },
];
