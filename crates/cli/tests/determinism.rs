//! Determinism across processes: ready scenarios (cut short with `--set`; one with randomly
//! chosen failed cables, one with PFC, one trace, one collective), each run twice by separate
//! `repsim run` processes with every time series on (`--collect all`), write every output file
//! byte for byte the same. Wall-clock fields live only in `run.json` (and the start time in
//! `run.complete`); `run.json` is compared without them. A second test permutes the rows of a
//! connection matrix, whose order carries no meaning, and expects the same results. A third
//! runs load balancers side by side (`-j 3`) and expects the files of one after another.
mod common;

use std::path::{Path, PathBuf};

use common::{repo, repsim_ok};

/// (scenario, `--set` overrides that keep it short).
const CASES: &[(&str, &[&str])] = &[
    (
        "reps-micro-symmetric",
        &["workload.flows=[{ src = \"0-7\", dst = \"64-71\", size = \"512KiB\" }]"],
    ),
    // 8 % of the cables failed, chosen at random from the seed (fault_elements.txt).
    ("ack-coalescing-128", &["end=300us"]),
    ("reps-micro-failures", &["end=400us"]),
    ("websearch-128", &["workload.duration=60us", "end=2ms"]),
    ("conweave-leafspine-lossless", &["workload.duration=40us"]),
    ("allreduce-ring-128", &["workload.size=256KiB"]),
];

/// Runs `scenario` into `out` with every collector on.
fn run(scenario: &str, sets: &[&str], out: &Path) {
    run_with(scenario, sets, out, &["--quiet"]);
}

/// Runs `scenario` into `out` with every collector on and `extra` arguments; returns stderr.
fn run_with(scenario: &str, sets: &[&str], out: &Path, extra: &[&str]) -> String {
    let file = format!("scenarios/{scenario}.toml");
    let mut args = vec![
        "run",
        file.as_str(),
        "--out",
        out.to_str().unwrap(),
        "--collect",
        "all",
    ];
    args.extend_from_slice(extra);
    for s in sets {
        args.push("--set");
        args.push(s);
    }
    String::from_utf8_lossy(&repsim_ok(&args).stderr).into_owned()
}

fn out_dir(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("determinism")
        .join(name);
    let _ = std::fs::remove_dir_all(&d);
    d
}

#[test]
fn ready_scenarios_write_identical_files_in_separate_processes() {
    for (scenario, sets) in CASES {
        let (a, b) = (
            out_dir(&format!("{scenario}-a")),
            out_dir(&format!("{scenario}-b")),
        );
        run(scenario, sets, &a);
        run(scenario, sets, &b);
        let n = common::assert_same_outputs(scenario, &a, &b, &[]);
        // The time series are on: every run writes them.
        for f in [
            "flows.csv",
            "summary.json",
            "flow_stats.csv",
            "port_series.csv",
            "run.complete",
        ] {
            assert!(a.join(f).is_file(), "{scenario}: {f} missing");
        }
        eprintln!("{scenario}: {n} files identical");
    }
    // The randomly failed cables are listed, and the same in both runs (compared above).
    let faults =
        PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("determinism/ack-coalescing-128-a");
    let chosen = std::fs::read_to_string(faults.join("fault_elements.txt")).unwrap();
    assert!(chosen.lines().count() > 1, "{chosen}");
}

/// Scenarios run one load balancer at a time and side by side: (scenario, `--set` overrides,
/// other arguments). Besides four of [`CASES`]: LAPS's seven baselines and senders with PFC
/// and every series, and a run that stalls (a cable fails for good under ECMP).
const SIDE_BY_SIDE: &[(&str, &[&str], &[&str])] = &[
    (
        "reps-micro-symmetric",
        &["workload.flows=[{ src = \"0-7\", dst = \"64-71\", size = \"512KiB\" }]"],
        &[],
    ),
    ("ack-coalescing-128", &["end=300us"], &[]),
    ("reps-micro-failures", &["end=400us"], &[]),
    ("allreduce-ring-128", &["workload.size=256KiB"], &[]),
    ("laps-llm-incast", &["end=200us"], &[]),
    (
        "failures-one-cable-32",
        &["end=20ms"],
        &["--lb", "ecmp,ops,reps", "--stall-after", "2ms"],
    ),
];

/// `repsim run -j 3` simulates a scenario's load balancers side by side and writes the files
/// of one after another; a trace workload, which streams its flows into one file, runs them
/// one at a time and says so.
#[test]
fn load_balancers_side_by_side_write_the_files_of_one_after_another() {
    let mut stalled = false;
    for (scenario, sets, extra) in SIDE_BY_SIDE {
        let (a, b) = (
            out_dir(&format!("{scenario}-in-turn")),
            out_dir(&format!("{scenario}-side-by-side")),
        );
        let quiet: Vec<&str> = extra.iter().copied().chain(["--quiet"]).collect();
        run_with(scenario, sets, &a, &quiet);
        let jobs: Vec<&str> = extra.iter().copied().chain(["-j", "3"]).collect();
        let stderr = run_with(scenario, sets, &b, &jobs);
        assert!(
            stderr.contains("load balancers in") && stderr.contains(" threads"),
            "{scenario}: not run side by side: {stderr}"
        );
        let what = format!("{scenario} in turn and side by side");
        let n = common::assert_same_outputs(&what, &a, &b, &[]);
        stalled |= std::fs::read_to_string(a.join("summary.json"))
            .unwrap()
            .contains("no data packet");
        eprintln!("{what}: {n} files identical");
    }
    assert!(
        stalled,
        "no case stalled: the stalled path was not compared"
    );
    let (scenario, sets) = CASES[4];
    let (a, b) = (
        out_dir(&format!("{scenario}-in-turn")),
        out_dir(&format!("{scenario}-jobs")),
    );
    run(scenario, sets, &a);
    let stderr = run_with(scenario, sets, &b, &["-j", "3"]);
    assert!(
        stderr.contains("running one load balancer at a time: a trace workload streams"),
        "{stderr}"
    );
    common::assert_same_outputs(&format!("{scenario} with -j 3"), &a, &b, &[]);
}

#[test]
fn permuting_a_connection_matrix_changes_nothing() {
    // The .cm rows (one flow each, with its own id) are read into flows by id, so their
    // order in the file carries no meaning.
    let src = repo().join("data/htsim/connection_matrices/permutation_size8388608B.cm");
    let text = std::fs::read_to_string(&src).unwrap();
    let (header, rows): (Vec<&str>, Vec<&str>) = text
        .lines()
        .partition(|l| l.split_whitespace().count() < 4 || l.starts_with('#'));
    assert!(rows.len() >= 8, "the matrix has {} rows", rows.len());
    let mut permuted: Vec<&str> = rows.clone();
    permuted.reverse();
    permuted.rotate_left(rows.len() / 3);
    assert_ne!(permuted, rows);
    let dir = out_dir("cm-permuted");
    std::fs::create_dir_all(&dir).unwrap();
    let mut outputs = Vec::new();
    for (name, order) in [("in-order", &rows), ("permuted", &permuted)] {
        let cm = dir.join(format!("{name}.cm"));
        let body: Vec<&str> = header.iter().chain(order.iter()).copied().collect();
        std::fs::write(&cm, body.join("\n") + "\n").unwrap();
        let out = dir.join(name);
        let file_set = format!("workload.file=\"{}\"", cm.display());
        repsim_ok(&[
            "run",
            "scenarios/failures-one-cable-32.toml",
            "--out",
            out.to_str().unwrap(),
            "--quiet",
            "--set",
            &file_set,
            "--set",
            "end=500us",
        ]);
        outputs.push(out);
    }
    // Per-flow tables may list flows in file order: compare their rows as sets (each row
    // names its flow id); the totals must be the same bytes.
    for f in [
        "flows.csv",
        "flow_stats.csv",
        "lb_events.csv",
        "summary.json",
    ] {
        let read = |d: &Path| {
            let text = std::fs::read_to_string(d.join(f)).unwrap();
            let mut lines: Vec<String> = text.lines().map(String::from).collect();
            if f.ends_with(".csv") {
                lines[1..].sort();
            }
            lines
        };
        assert_eq!(
            read(&outputs[0]),
            read(&outputs[1]),
            "{f} depends on the order of the .cm rows"
        );
    }
}
