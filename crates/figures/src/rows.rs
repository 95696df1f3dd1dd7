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
];
