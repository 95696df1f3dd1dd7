//! Flow slicing (Reunion Fig. 14): every flow becomes k concurrent slices; the flow completes
//! with its last slice, and under ECMP the slices hash onto different paths.
mod common;

fn scenario(slices: u32) -> String {
    let tree = common::TREE_32;
    format!(
        r#"
seed = 4
lb = "ecmp"
{tree}
[queue]
size = "100pkt"
ecn_min = "20pkt"
ecn_max = "80pkt"
trimming = false
[workload]
type = "permutation"
size = "4MiB"
slices = {slices}
"#
    )
}

#[test]
fn a_sliced_flow_completes_with_its_last_slice() {
    let whole = common::run(&common::parse(&scenario(1)), "ecmp", None);
    let sliced = common::run(&common::parse(&scenario(4)), "ecmp", None);
    common::assert_all_delivered(&sliced);
    assert_eq!(sliced.flows().len(), 4 * whole.flows().len());
    let (w, s) = (whole.summary(0.0), sliced.summary(0.0));
    assert_eq!(
        s.flows_total, w.flows_total,
        "the summary counts the workload's flows"
    );
    // Each logical FCT is its last slice's finish minus its first slice's start.
    let logical = sliced.logical_flows();
    for (i, (bytes, fct, _)) in logical.iter().enumerate() {
        let slices: Vec<_> = sliced.flows()[4 * i..4 * i + 4].iter().collect();
        assert_eq!(*bytes, 4 << 20);
        let last = slices.iter().map(|f| f.finish.unwrap()).max().unwrap();
        let first = slices.iter().map(|f| f.started_at.unwrap()).min().unwrap();
        assert_eq!(*fct, Some(last - first));
    }
    // Under ECMP, slices spread a flow over several paths: the worst collision shrinks.
    // Over seeds (one seed can go either way): under ECMP, slices spread a flow over several
    // paths, so the worst collision shrinks on average (Reunion reports 25.5 %).
    let (mut whole_max, mut sliced_max) = (0.0, 0.0);
    for seed in 1..=6 {
        whole_max += common::run(&common::parse(&scenario(1)), "ecmp", Some(seed))
            .summary(0.0)
            .fct_us
            .max;
        sliced_max += common::run(&common::parse(&scenario(4)), "ecmp", Some(seed))
            .summary(0.0)
            .fct_us
            .max;
    }
    assert!(
        sliced_max < 0.95 * whole_max,
        "mean max FCT sliced {} vs whole {}",
        sliced_max / 6.0,
        whole_max / 6.0
    );
}
