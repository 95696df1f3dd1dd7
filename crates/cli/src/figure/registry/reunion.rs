//! Reunion's figures: hash collisions that flowlet schemes leave in place.
use super::*;

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
