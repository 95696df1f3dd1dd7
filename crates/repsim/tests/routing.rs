//! Switch-side routing schemes selected with `[routing] switch`.
mod common;

#[test]
fn adaptive_routing_spreads_a_single_path_sender() {
    // ECMP senders pin each flow to one EV; with hash routing the 8 flows collide on ToR 0's
    // uplinks, with adaptive (least-queued) routing the switches spread them packet by packet.
    let text = std::fs::read_to_string(common::scenario_path("reps-micro-symmetric.toml")).unwrap();
    let hashed = common::run(&common::parse(&text), "ecmp", None);
    let adaptive_text = format!("{text}\n[routing]\nswitch = \"adaptive\"\n");
    let adaptive = common::run(&common::parse(&adaptive_text), "ecmp", None);
    let (h, a) = (common::max_fct(&hashed), common::max_fct(&adaptive));
    assert!(
        a * 1.5 < h,
        "adaptive {a:.1} us should beat hashed ECMP {h:.1} us by far"
    );
    assert!(
        a < 380.0,
        "adaptive routing should approach line rate (~351 us), got {a:.1} us"
    );
    for f in adaptive.flows() {
        assert_eq!(f.delivered, f.spec.bytes);
    }
}

#[test]
fn unknown_switch_routing_is_rejected_with_the_field() {
    let text = std::fs::read_to_string(common::scenario_path("reps-micro-symmetric.toml")).unwrap();
    let bad = format!("{text}\n[routing]\nswitch = \"teleport\"\n");
    let err = common::parse(&bad)
        .build("reps", None)
        .err()
        .expect("must fail")
        .to_string();
    assert!(
        err.contains("routing.switch") && err.contains("adaptive"),
        "{err}"
    );
}
