//! Every REPS-artifact command line that docs/fidelity.md quotes, run through `repsim htsim
//! --artifact reps` and through the scenario the figure uses: the two must finish every flow at
//! the same picosecond. Where the figure's own run is too long for a test, both sides take the
//! same smaller input (a shorter `-end`, the first connections of the matrix).
use std::path::{Path, PathBuf};

use repsim::engine::time::to_us;
use repsim::scenario::{LoadedScenario, Override};
use repsim::Simulation;
use repsim_htsim::run::{self, HtsimRun};
use repsim_htsim::HtsimArgs;

/// The repository root.
fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A folder of its own for files a test writes.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("repsim-artifact-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Each finished flow as (source, destination, FCT in us), sorted.
type Finishes = Vec<(u32, u32, f64)>;

/// Runs an artifact command line (paths the artifact's scripts use, found in data/htsim/).
fn htsim(line: &str, roots: &[PathBuf]) -> (Finishes, HtsimRun) {
    let mut argv = vec!["--artifact", "reps"];
    argv.extend(line.split_whitespace());
    let args = HtsimArgs::parse(&argv).unwrap_or_else(|e| panic!("{e}\n{line}"));
    let run = run::run(&args, roots).unwrap_or_else(|e| panic!("{e}\n{line}"));
    let mut finishes: Finishes = run
        .finishes
        .iter()
        .map(|f| {
            let (src, dst) = f.name["Uec_".len()..].split_once('_').unwrap();
            (src.parse().unwrap(), dst.parse().unwrap(), f.fct_us)
        })
        .collect();
    finishes.sort_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)).then(a.2.total_cmp(&b.2)));
    (finishes, run)
}

/// Runs load balancer `lb` of a scenario file with `--set` overrides.
fn scenario(file: &str, lb: &str, sets: &[&str]) -> Finishes {
    let overrides: Vec<Override> = sets.iter().map(|s| Override::parse(s).unwrap()).collect();
    let scn =
        LoadedScenario::load_with(&repo().join(file), &overrides).unwrap_or_else(|e| panic!("{e}"));
    let spec = scn.build(lb, None).unwrap_or_else(|e| panic!("{e}"));
    let mut sim = Simulation::new(spec).unwrap();
    sim.run_until_idle();
    let mut finishes: Finishes = sim
        .flows()
        .iter()
        .filter_map(|f| Some((f.spec.src, f.spec.dst, to_us(f.fct()?))))
        .collect();
    finishes.sort_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)).then(a.2.total_cmp(&b.2)));
    finishes
}

/// The line and the scenario finish the same flows at the same times, and at least `min` flows.
fn same(
    line: &str,
    roots: &[PathBuf],
    file: &str,
    lb: &str,
    sets: &[&str],
    min: usize,
) -> HtsimRun {
    let (ours, run) = htsim(line, roots);
    let theirs = scenario(file, lb, sets);
    assert!(ours.len() >= min, "{} flows finished: {line}", ours.len());
    assert_eq!(
        ours.len(),
        theirs.len(),
        "{line}\nagainst {file} {lb} {sets:?}"
    );
    for (a, b) in ours.iter().zip(&theirs) {
        assert_eq!(a, b, "{line}\nagainst {file} {lb} {sets:?}");
    }
    run
}

const FIG7: &str = "-failed 42 -sack_threshold 4000 -end 90000 -seed 5 -paths 65535 -sender_cc_only -sender_cc_algo mprdma -topo ../htsim/sim/datacenter/topologies/reps/fat_tree_128_1os_3t_400g.topo -linkspeed 400000 -ecn 20 80 -q 100 -cwnd 151 -log_link -tm ../htsim/sim/datacenter/connection_matrices/test_symm32.cm -collect_data -load_balancing_algo";

#[test]
fn fig7_timed_outages() {
    let reps = same(
        &format!("{FIG7} freezing -exit_freeze 100000000"),
        &[],
        "scenarios/reps-micro-failures.toml",
        "reps",
        &[],
        4,
    );
    let ops = same(
        &format!("{FIG7} oblivious"),
        &[],
        "scenarios/reps-micro-failures.toml",
        "ops",
        &[],
        4,
    );
    // The outages drop data: OPS loses more packets than REPS (Fig. 7's claim).
    assert!(reps.fault_drops > 0 && ops.fault_drops > reps.fault_drops);
}

const FIG15: &str = "-sack_threshold 4000 -end 90000 -seed 20 -sender_cc_only -sender_cc_algo mprdma -topo ../htsim/sim/datacenter/topologies/reps/fat_tree_128_1os_2t_400g.topo -linkspeed 400000 -ecn 25 76 -q 100 -cwnd 151 -tm ../htsim/sim/datacenter/connection_matrices/perm_n128_s8388608.cm";

#[test]
fn fig15_ev_set_sizes() {
    let file = "scenarios/evs-sweep-128.toml";
    // The artifact's `reps` is the older variant, `reps-legacy` here.
    let line = format!("{FIG15} -paths 32 -load_balancing_algo reps");
    same(
        &line,
        &[],
        file,
        "reps-legacy",
        &["transport.evs_size=32"],
        128,
    );
    let line = format!("{FIG15} -paths 32 -load_balancing_algo oblivious");
    same(&line, &[], file, "ops", &["transport.evs_size=32"], 128);
    // 65,535 is the artifact's "every EV".
    let line = format!("{FIG15} -paths 65535 -load_balancing_algo oblivious");
    same(&line, &[], file, "ops", &[], 128);
}

#[test]
fn fig8_bit_errors_on_a_cable() {
    let line = "-connections_mapping -disable_trim -sack_threshold 4000 -failures_input ../failures_input/ber_cable_one_percent.txt -tm connection_matrices/permutation_size8388608B.cm -end 90000 -seed 42 -paths 65535 -sender_cc_only -sender_cc_algo mprdma -topo topologies/reps/fat_tree_32_1os_2t_400g.topo -linkspeed 400000 -ecn 25 76 -q 101 -other_location -cwnd 151 -load_balancing_algo";
    let fault =
        "fault=[{ kind = \"file\", file = \"../data/htsim/failures/ber_cable_one_percent.txt\" }]";
    for (lb, ours) in [("oblivious", "ops"), ("freezing", "reps")] {
        let run = same(
            &format!("{line} {lb}"),
            &[],
            "scenarios/failures-one-cable-32.toml",
            ours,
            &[fault],
            32,
        );
        assert!(run.fault_drops > 0, "the bit errors drop packets");
    }
}

#[test]
fn fig5_websearch_with_degraded_uplinks() {
    // The first 2 ms of the 100 % load trace (the figure's run lasts 10 ms).
    let line = "-disable_trim -failed 4 -connections_mapping -sack_threshold 4000 -end 2000 -seed 1019 -paths 65535 -sender_cc_only -sender_cc_algo mprdma -topo topologies/reps/fat_tree_128_1os_2t_400g.topo -linkspeed 400000 -ecn 25 76 -q 100 -cwnd 151 -tm connection_matrices/100load_ae.cm -load_balancing_algo";
    let sets = [
        "degrade=[{ link = \"tor0->spine0\", speed = \"200Gbps\" }, { link = \"tor0->spine1\", speed = \"200Gbps\" }, { link = \"tor0->spine2\", speed = \"200Gbps\" }, { link = \"tor0->spine3\", speed = \"200Gbps\" }]",
        "workload={ type = \"cm\", file = \"../data/htsim/connection_matrices/100load_ae.cm\" }",
        "transport.reuse_connections=true",
        "seed=1019",
        "end=\"2ms\"",
        // The artifact's BitMap runs with -paths 65535 (every EV; our figures' BitMap keeps 256).
        "lb=[\"reps\", \"ecmp\", { scheme = \"bitmap\", evs_size = 65536 }]",
    ];
    for (lb, ours) in [("ecmp", "ecmp"), ("bitmap", "bitmap"), ("freezing", "reps")] {
        let run = same(
            &format!("{line} {lb}"),
            &[],
            "scenarios/websearch-128.toml",
            ours,
            &sets,
            100,
        );
        assert!(run.unfinished > 0, "the trace runs past 2 ms");
    }
}

#[test]
fn fig5_permutation_with_one_slow_uplink_per_fourth_tor() {
    // Not quoted in docs/fidelity.md: the artifact's synthetic asymmetric runs (`-skip_asy`).
    let line = "-failed 4 -skip_asy -connections_mapping -disable_trim -enable_qa_gate -sack_threshold 4000 -end 90000 -seed 42 -paths 65535 -sender_cc_only -sender_cc_algo mprdma -topo topologies/reps/fat_tree_128_1os_2t_400g.topo -linkspeed 400000 -ecn 25 76 -q 101 -cwnd 151 -tm connection_matrices/perm_n128_s8388608.cm -load_balancing_algo ecmp";
    let degraded = "degrade=[{ link = \"tor0->spine0\", speed = \"200Gbps\" }, { link = \"tor4->spine0\", speed = \"200Gbps\" }, { link = \"tor8->spine0\", speed = \"200Gbps\" }, { link = \"tor12->spine0\", speed = \"200Gbps\" }]";
    same(
        line,
        &[],
        "scenarios/baselines-permutation-128.toml",
        "ecmp",
        &[degraded],
        128,
    );
}

#[test]
fn fig6_tornado_with_ecmp_background() {
    // The tornado matrix the artifact's generator writes: host i to i + N/2 (mod N).
    let dir = scratch("fig6");
    let cm = dir.join("connection_matrices");
    std::fs::create_dir_all(&cm).unwrap();
    let mut text = String::from("Nodes 128\nConnections 128\n");
    for i in 0..128 {
        text.push_str(&format!(
            "{i}->{} id {} start 0 size 8388608\n",
            (i + 64) % 128,
            i + 1
        ));
    }
    std::fs::write(cm.join("tornado_n128_s8388608.cm"), text).unwrap();
    let line = "-connections_mapping -mixed_lb_traffic -sack_threshold 4000 -tm connection_matrices/tornado_n128_s8388608.cm -end 90000 -seed 42 -paths 65535 -sender_cc_only -sender_cc_algo mprdma -topo topologies/reps/fat_tree_128_1os_2t_400g.topo -enable_qa_gate -linkspeed 400000 -ecn 25 76 -q 101 -cwnd 151 -load_balancing_algo";
    let sets = [
        "queue.trimming=true",
        "workload={ type = \"tornado\", size = \"8MiB\", ecmp_every = 10 }",
    ];
    for (lb, ours) in [("freezing", "reps"), ("ecmp", "ecmp")] {
        let run = same(
            &format!("{line} {lb}"),
            std::slice::from_ref(&dir),
            "scenarios/baselines-permutation-128.toml",
            ours,
            &sets,
            128,
        );
        let background = run.finishes.iter().filter(|f| f.background).count();
        assert_eq!(background, 13, "hosts 0, 10, ..., 120 send the background");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn fig3_triggered_alltoall() {
    // The artifact's AllToAll with 8 connections at once (its 32-host matrix), as its AI runs
    // take it: on the 128-host tree, every host's flows chained by triggers.
    let line = "-disable_trim -connections_mapping -down_ratio 0.5 -sack_threshold 4000 -end 90000 -seed 1019 -paths 65535 -sender_cc_only -sender_cc_algo mprdma -topo topologies/reps/fat_tree_128_1os_2t_400g.topo -linkspeed 400000 -ecn 25 76 -q 100 -cwnd 151 -tm alltoall8.cm -load_balancing_algo";
    let sets = [
        "workload={ type = \"cm\", file = \"../data/htsim/connection_matrices/alltoall8.cm\" }",
        "seed=1019",
    ];
    for (lb, ours) in [("oblivious", "ops"), ("freezing", "reps")] {
        same(
            &format!("{line} {lb}"),
            &[],
            "scenarios/alltoall-128.toml",
            ours,
            &sets,
            992,
        );
    }
}

#[test]
fn fig9_failed_tor_uplinks() {
    // The first 96 connections of the 1,024-host permutation, on the full tree.
    let dir = scratch("fig9");
    let full = std::fs::read_to_string(
        repo().join("data/htsim/connection_matrices/perm_n1024_s8388608.cm"),
    )
    .unwrap();
    let flows: Vec<&str> = full.lines().filter(|l| l.contains("->")).take(96).collect();
    let small = dir.join("perm_small.cm");
    std::fs::write(
        &small,
        format!("Nodes 1024\nConnections 96\n{}\n", flows.join("\n")),
    )
    .unwrap();
    let small = small.display().to_string();
    let workload = format!("workload={{ type = \"cm\", file = {small:?} }}");
    let line = format!("-sack_threshold 4000 -end 90000 -seed 44 -paths 65535 -sender_cc_only -sender_cc_algo mprdma -topo ../htsim/sim/datacenter/topologies/reps/fat_tree_1024_1os_2t_400g.topo -linkspeed 400000 -ecn 20 80 -q 100 -cwnd 151 -tm {small}");
    let run = same(
        &format!("{line} -failures_input ../htsim/sim/failures_input/50_percent_failed_cables.txt -load_balancing_algo freezing -exit_freeze 10000000000"),
        &[],
        "scenarios/failures-extreme.toml",
        "reps",
        &[
            &workload,
            "fault=[{ kind = \"first_tor_uplinks\", direction = \"forward\", percent = 50 }]",
        ],
        96,
    );
    assert!(run.fault_drops > 0, "half the uplinks drop what they get");
    same(
        &format!("{line} -failures_input ../htsim/sim/failures_input/20_percent_failed_cables.txt -load_balancing_algo plb"),
        &[],
        "scenarios/failures-extreme.toml",
        "plb",
        &[
            &workload,
            "fault=[{ kind = \"first_tor_uplinks\", direction = \"forward\", percent = 20 }]",
            "lb=[\"reps\", \"plb\"]",
        ],
        96,
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_missing_file_is_named_with_where_it_was_looked_for() {
    let args = HtsimArgs::parse(&["--artifact", "reps", "-tm", "nowhere/none.cm"]).unwrap();
    let e = run::run(&args, &[]).unwrap_err();
    assert!(
        e.0.contains("-tm nowhere/none.cm")
            && e.0.contains("data/htsim/connection_matrices/none.cm"),
        "{e}"
    );
    assert!(Path::new(&repo().join("data/htsim/connection_matrices")).is_dir());
}
