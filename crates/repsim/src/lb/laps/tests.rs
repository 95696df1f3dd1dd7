//! Rules of the LAPS path chooser: the softmax's extremes, the probing rules and their
//! cool-downs, and the congestion signal over valid routes.
use super::*;
use crate::engine::time::{NS, US};

/// Packet size of the test routes.
const MTU: u32 = 4150;

/// Three routes: idle baselines 3, 5 and 9 us, unloaded latencies 2, 4 and 8 us (2, 4 and 5
/// links, each slowest rate making the extra serialisations 1 us in all).
fn routes() -> Vec<Route> {
    [(2, 2), (4, 4), (8, 5)]
        .iter()
        .enumerate()
        .map(|(i, &(unloaded, hops))| Route {
            id: 100 + i as PathId,
            hops,
            base_rtt: 2 * (unloaded + 1) * US,
            one_way: unloaded * US,
            slowest_rate: MTU as u64 * 8 * hops as u64 * 1_000_000,
        })
        .collect()
}

fn laps(config: LapsConfig) -> Laps {
    Laps::new(&config, &routes(), MTU)
}

#[test]
fn idle_baselines_add_a_serialisation_per_link_at_the_slowest_speed() {
    let idle: Vec<Time> = routes().iter().map(|r| idle_latency(r, MTU)).collect();
    assert_eq!(idle, [3 * US, 5 * US, 9 * US]);
    assert_eq!(LapsConfig::target(&routes(), MTU), 9 * US);
}

#[test]
fn target_delays_match_the_laps_fabrics() {
    use crate::net::candidates::{candidate_routes, slowest_rate, unloaded_latency};
    use crate::net::topology::Topology;
    use crate::net::{DragonflySpec, RailSpec};
    // peers.md 6.1 and 6.2: T = 8,162 ns (7 links at 100G), 4,664 ns intra-group (4 links),
    // 2,332 ns same switch; rail inter-cluster 9,244 ns, intra-cluster 4,580 ns.
    let target = |t: &Topology, src: u32, dst: u32| {
        let routes: Vec<Route> = candidate_routes(t, src, dst, 64)
            .iter()
            .map(|r| Route {
                id: 0,
                hops: r.len() as u32,
                base_rtt: 0,
                one_way: unloaded_latency(t, r, 1048),
                slowest_rate: slowest_rate(t, r),
            })
            .collect();
        LapsConfig::target(&routes, 1048)
    };
    let d = DragonflySpec::example().build().unwrap();
    assert_eq!(target(&d, 0, 143), 8_162 * NS);
    assert_eq!(target(&d, 0, 4), 4_664 * NS);
    assert_eq!(target(&d, 0, 1), 2_332 * NS);
    let r = RailSpec::example().build().unwrap();
    assert_eq!(target(&r, 0, 63), 9_244 * NS);
    assert_eq!(target(&r, 0, 5), 4_580 * NS);
}

/// How often each route is chosen in `draws` packets sent at time `now`.
fn shares(l: &mut Laps, draws: u32, now: Time) -> Vec<f64> {
    let mut rng = Rng::new(7);
    let mut counts = [0u32; 3];
    for _ in 0..draws {
        let c = l.next(now, &mut rng);
        assert_eq!(
            c.route,
            100 + c.ev as PathId,
            "the route of the chosen index"
        );
        counts[c.ev as usize] += 1;
    }
    counts.iter().map(|&c| c as f64 / draws as f64).collect()
}

#[test]
fn beta_zero_sprays_uniformly_whatever_the_latencies() {
    let mut l = laps(LapsConfig {
        beta: 0.0,
        ..Default::default()
    });
    l.on_one_way(0, 50 * US, 0);
    l.on_one_way(2, NS, 0);
    for share in shares(&mut l, 60_000, 0) {
        assert!((share - 1.0 / 3.0).abs() < 0.01, "share {share}");
    }
}

#[test]
fn large_beta_picks_the_lowest_latency_route() {
    let mut l = laps(LapsConfig {
        beta: 1000.0,
        ..Default::default()
    });
    // The longest route is the least loaded now.
    l.on_one_way(0, 7 * US, 0);
    l.on_one_way(1, 6 * US, 0);
    l.on_one_way(2, 5 * US, 0);
    assert_eq!(shares(&mut l, 1000, 0), vec![0.0, 0.0, 1.0]);
}

#[test]
fn beta_one_biases_by_latency_over_the_largest_baseline() {
    let mut l = laps(LapsConfig::default());
    // Unloaded latencies 2, 4, 8 us over T = 9 us: weights exp(-2/9), exp(-4/9), exp(-8/9).
    let w: Vec<f64> = [2.0f64, 4.0, 8.0]
        .iter()
        .map(|x| (-x / 9.0).exp())
        .collect();
    let total: f64 = w.iter().sum();
    for (share, w) in shares(&mut l, 100_000, 0).iter().zip(&w) {
        assert!((share - w / total).abs() < 0.01, "{share} vs {}", w / total);
    }
}

/// The probes `next` asks for at each of `times`, as (time, route index).
fn probes_at(l: &mut Laps, times: &[Time]) -> Vec<(Time, u16)> {
    let mut rng = Rng::new(3);
    let mut out = Vec::new();
    for &t in times {
        l.next(t, &mut rng);
        if let Some(p) = l.take_probe() {
            assert_eq!(p.route, 100 + p.ev as PathId);
            out.push((t, p.ev));
        }
    }
    out
}

#[test]
fn paper_rule_probes_a_stale_route_once_per_cool_down() {
    let mut l = laps(LapsConfig::default());
    // Routes 0 and 1 fresh at 100 us; route 2 last measured at 0 (8 us): stale after 16 us.
    l.on_one_way(0, 2 * US, 100 * US);
    l.on_one_way(1, 4 * US, 100 * US);
    l.on_one_way(2, 8 * US, 0);
    let times: Vec<Time> = (0..40).map(|i| 100 * US + i * US).collect();
    let probes = probes_at(&mut l, &times);
    // Route 2 at once, its latency doubled to 16 us and its clock reset: not again before
    // 32 us later. Route 0 (2 us, stale after 4 us) and route 1 (4 us, after 8 us) go stale
    // too, each probed with the same doubling.
    let of = |r: u16| -> Vec<Time> {
        probes
            .iter()
            .filter(|p| p.1 == r)
            .map(|p| (p.0 - 100 * US) / US)
            .collect()
    };
    assert_eq!(of(2), vec![0, 33], "route 2: {probes:?}");
    // Route 0: stale when more than 4 us old (at 5), then doubled each time: 4 -> 8 (next
    // after 8 us: 14), 8 -> 16 (next after 16 us: 31).
    assert_eq!(of(0), vec![5, 14, 31], "route 0: {probes:?}");
    // Route 1: stale after 8 us (at 9), then after 16 us (at 26).
    assert_eq!(of(1), vec![9, 26], "route 1: {probes:?}");
    // At most one probe per packet.
    let mut seen: Vec<Time> = probes.iter().map(|p| p.0).collect();
    seen.dedup();
    assert_eq!(seen.len(), probes.len());
}

#[test]
fn a_probed_route_is_not_valid_until_its_answer() {
    let mut l = laps(LapsConfig::default());
    l.on_one_way(0, 20 * US, 100 * US);
    l.on_one_way(1, 20 * US, 110 * US);
    l.on_one_way(2, 20 * US, 110 * US);
    assert!(l.path_signal().congested, "every route over T = 9 us");
    // Route 0 goes stale (not updated for more than 2 x 20 us) and is probed: waiting.
    assert_eq!(probes_at(&mut l, &[141 * US]).first().map(|p| p.1), Some(0));
    assert_eq!(l.latency(0), 40 * US, "its latency doubles while waiting");
    // Routes 1 and 2 still over T: the valid ones are all congested.
    assert!(l.path_signal().congested);
    // Route 1 answers under T: not congested.
    l.on_one_way(1, 4 * US, 142 * US);
    assert!(!l.path_signal().congested);
    // The probe answer clears route 0's wait.
    l.on_one_way(0, 30 * US, 143 * US);
    l.on_one_way(1, 30 * US, 143 * US);
    assert!(l.path_signal().congested);
}

#[test]
fn code_rule_probes_without_doubling_and_sending_counts() {
    let mut l = laps(LapsConfig {
        probing: LapsProbing::Code,
        beta: 1000.0,
        ..Default::default()
    });
    // Route 0 fastest and fresh; 1 and 2 measured long ago. L_max = 8 us: stale after 16 us.
    l.on_one_way(0, US, 100 * US);
    l.on_one_way(1, 4 * US, 0);
    l.on_one_way(2, 8 * US, 0);
    let times: Vec<Time> = (0..20).map(|i| 100 * US + i * US).collect();
    let probes = probes_at(&mut l, &times);
    // Both stale routes at once (one per packet), then not again for 2 x 8 us since their
    // last send; no doubling.
    assert_eq!(probes.len(), 4, "{probes:?}");
    assert_eq!(probes[0].0, 100 * US);
    assert_eq!(probes[1].0, 101 * US);
    assert_ne!(probes[0].1, probes[1].1);
    assert!(probes[2].0 > probes[0].0 + 16 * US, "{probes:?}");
    assert_eq!(l.latency(2), 8 * US);
    assert!(probes.iter().all(|p| p.1 != 0), "route 0 is fresh");
}

#[test]
fn validation_names_the_field() {
    let bad = LapsConfig {
        beta: -1.0,
        ..Default::default()
    };
    assert!(bad
        .validate(&RunContext::new(4150, 64))
        .unwrap_err()
        .to_string()
        .starts_with("beta:"));
    let bad = LapsConfig {
        paths: 0,
        ..Default::default()
    };
    assert!(bad
        .validate(&RunContext::new(4150, 64))
        .unwrap_err()
        .to_string()
        .starts_with("paths:"));
    assert!(LapsConfig::default()
        .validate(&RunContext::new(4150, 64))
        .is_ok());
}

#[test]
fn the_guards_read_as_written_in_scenarios() {
    let guard = |text: &str| toml::from_str::<LapsConfig>(text).map(|c| c.decrease_guard);
    assert_eq!(
        guard("decrease_guard = \"2T\""),
        Ok(LapsDecreaseGuard::Target)
    );
    assert_eq!(
        guard("decrease_guard = \"target\""),
        Ok(LapsDecreaseGuard::Target)
    );
    assert_eq!(
        guard("decrease_guard = \"latency\""),
        Ok(LapsDecreaseGuard::Latency)
    );
    assert_eq!(
        guard(""),
        Ok(LapsDecreaseGuard::Latency),
        "the code's guard by default"
    );
    assert!(guard("decrease_guard = \"2t\"").is_err());
    let paper = toml::from_str::<LapsConfig>("pacing = true\ndecrease_guard = \"2T\"").unwrap();
    assert_eq!(paper, LapsConfig::paper_text());
    // The resolved scenario writes the paper's guard back as it is read.
    let written = toml::to_string(&LapsConfig::paper_text()).unwrap();
    assert!(written.contains("decrease_guard = \"2T\""), "{written}");
}
