//! The RoCE world's transport modes (go-back-N, IRN) and rate-based congestion controls (DCQCN,
//! rate-based DCTCP) on small networks: they finish lossy incasts and permutations, IRN resends
//! less than go-back-N, and CNPs slow DCQCN senders down end to end.
mod common;

use repsim::engine::time::US;
use repsim::scenario::LoadedScenario;
use repsim::transport::TransportMode;
use repsim::Simulation;

/// The references' RoCE packets (1000 B payload + 48 B headers) under `mode` and `cc`.
fn rnic(mode: TransportMode, cc: &str) -> String {
    format!(
        "[transport]\nmode = \"{}\"\nmtu = \"1048B\"\nheader = \"48B\"\n[cc]\nalgo = \"{cc}\"\n",
        mode.name()
    )
}

/// A 12-to-1 incast of 200 KB per sender, 100-packet buffers, no trimming (losses are drops).
fn incast(mode: TransportMode, cc: &str) -> Simulation {
    let text = common::incast_32(3, "ecmp", "200KB", (100, 20, 80), false, &rnic(mode, cc));
    common::run(&common::parse(&text), "ecmp", None)
}

fn retransmissions(sim: &Simulation) -> u64 {
    sim.flows().iter().map(|f| f.stats.retransmissions).sum()
}

#[test]
fn every_mode_finishes_a_lossy_incast_with_the_rate_based_controllers() {
    for mode in TransportMode::ALL {
        for cc in ["dcqcn", "dctcp-rate"] {
            let sim = incast(mode, cc);
            common::assert_all_delivered(&sim);
            assert!(
                sim.counters().data_dropped > 0,
                "{}/{cc}: the incast should overflow",
                mode.name()
            );
        }
    }
}

#[test]
fn go_back_n_resends_more_than_irn() {
    let gbn = incast(TransportMode::Gbn, "dcqcn");
    let irn = incast(TransportMode::Irn, "dcqcn");
    let (g, i) = (retransmissions(&gbn), retransmissions(&irn));
    assert!(g > i, "go-back-N {g} retransmissions, IRN {i}");
    // The go-back-N receiver discards what arrives after a hole: those count as duplicates.
    assert!(gbn.counters().data_duplicates > irn.counters().data_duplicates);
    assert!(gbn.counters().nacks_sent > 0 && irn.counters().nacks_sent > 0);
}

#[test]
fn cnps_slow_dcqcn_senders_down() {
    let text = common::incast_32(
        3,
        "ecmp",
        "2MB",
        (100, 20, 80),
        false,
        &rnic(TransportMode::Gbn, "dcqcn"),
    );
    let scn = common::parse(&text);
    let mut sim = Simulation::new(scn.build("ecmp", None).unwrap()).unwrap();
    sim.run_until(30 * US);
    let rates: Vec<u64> = sim
        .flows()
        .iter()
        .map(|f| f.sender().unwrap().cc().pacing_rate().unwrap())
        .collect();
    assert!(
        rates.iter().all(|&r| r < 400_000_000_000),
        "every incast sender heard a CNP and slowed down: {rates:?}"
    );
    sim.run_until_idle();
    common::assert_all_delivered(&sim);
}

#[test]
fn every_mode_finishes_a_permutation() {
    for mode in TransportMode::ALL {
        for cc in ["dcqcn", "dctcp-rate", "mprdma"] {
            let text = format!(
                "seed = 4\nlb = \"ecmp\"\n{}\n[workload]\ntype = \"permutation\"\nsize = \"300KB\"\n{}",
                common::TREE_32,
                rnic(mode, cc)
            );
            let sim = common::run(&common::parse(&text), "ecmp", None);
            common::assert_all_delivered(&sim);
        }
    }
}

#[test]
fn transport_mode_keys_are_checked() {
    let with = |extra: &str| {
        let text = format!(
            "{}\n[workload]\ntype = \"explicit\"\nflows = [{{ src = 0, dst = 5, size = \"1MB\" }}]\n{extra}",
            common::TREE_32
        );
        let path = common::scenario_path("inline.toml");
        let scn = LoadedScenario::parse(&text, &path).map_err(|e| e.to_string())?;
        scn.build("reps", None)
            .map(|_| ())
            .map_err(|e| e.to_string())
    };
    assert!(with("[transport]\nmode = \"irn\"\nirn_bdp = \"104000B\"").is_ok());
    let e = with("[transport]\nmode = \"roce\"").unwrap_err();
    assert!(e.contains("gbn"), "{e}");
    let e = with("[transport]\nmode = \"gbn\"\n[cc]\nalgo = \"eqds\"").unwrap_err();
    assert!(e.contains("transport.mode") && e.contains("eqds"), "{e}");
    let e = with("[transport]\nmode = \"irn\"\nirn_rto_low = \"1ms\"").unwrap_err();
    assert!(e.contains("transport.irn_rto_low"), "{e}");
    let e = with("[transport]\nnack_interval = \"0us\"").unwrap_err();
    assert!(e.contains("transport.nack_interval"), "{e}");
    assert!(with("[transport]\nmode = \"gbn\"\ngbn_rewind = \"every-nack\"").is_ok());
    let e = with("[transport]\nmode = \"irn\"\ngbn_rewind = \"every-nack\"").unwrap_err();
    assert!(
        e.contains("transport.gbn_rewind") && e.contains("gbn"),
        "{e}"
    );
    let e = with("[transport]\nmode = \"gbn\"\ngbn_rewind = \"always\"").unwrap_err();
    assert!(e.contains("every-nack"), "{e}");
}
