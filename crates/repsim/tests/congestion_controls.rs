//! DCTCP and NSCC in a network: a 12-to-1 incast on a 32-host tree, with and without
//! trimming, conserves every byte and packet, finishes every flow, and backs off: both lose
//! fewer packets than a window that never shrinks.
mod common;

/// The incast, with its congestion control written as a `[cc]` table's lines.
fn incast(trimming: bool, cc: &str) -> String {
    common::incast_32(
        3,
        "ops",
        "1MiB",
        (24, 4, 16),
        trimming,
        &format!("[cc]\n{cc}"),
    )
}

/// Packets lost (trimmed or dropped) in the incast under `cc`, after checking conservation.
fn losses(trimming: bool, cc: &str) -> u64 {
    let sim = common::run(&common::parse(&incast(trimming, cc)), "ops", None);
    common::assert_all_delivered(&sim);
    let c = sim.counters();
    c.trims + c.data_dropped
}

#[test]
fn dctcp_and_nscc_conserve_and_back_off_in_an_incast() {
    for trimming in [true, false] {
        let constant = losses(trimming, "algo = \"constant\"");
        assert!(constant > 0, "the incast should overflow");
        for cc in [
            "algo = \"dctcp\"",
            "algo = \"dctcp\"\nvariant = \"reference\"",
            "algo = \"nscc\"",
            "algo = \"nscc\"\nvariant = \"reps2024\"",
        ] {
            let lost = losses(trimming, cc);
            assert!(
                lost < constant,
                "{cc} (trimming {trimming}): {lost} lost, constant window {constant}"
            );
        }
    }
}
