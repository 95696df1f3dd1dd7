//! `repsim run`'s resource limits and stall detection: a limit stops the command with a
//! clear message, partial outputs marked incomplete and no completion marker; a run whose
//! flows cannot progress ends early, reported as stalled.
mod common;

use std::path::{Path, PathBuf};

use common::{repsim, repsim_ok};

fn out_dir(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("limits")
        .join(name);
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn summary(dir: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(dir.join("summary.json")).unwrap()).unwrap()
}

#[test]
fn max_events_stops_cleanly_with_partial_outputs_marked_incomplete() {
    let out = out_dir("max-events");
    let o = repsim(&[
        "run",
        "scenarios/reps-micro-symmetric.toml",
        "--out",
        out.to_str().unwrap(),
        "--quiet",
        "--max-events",
        "100000",
    ]);
    assert!(!o.status.success(), "a limit must fail the command");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("stopped early") && err.contains("--max-events 100000"),
        "{err}"
    );
    let s = summary(&out);
    let why = s["incomplete"]
        .as_str()
        .expect("summary.json says incomplete");
    assert!(
        why.starts_with("reps: --max-events 100000 reached"),
        "{why}"
    );
    // The first load balancer's partial run is there; the others were not run.
    let runs = s["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 1);
    assert!(runs[0]["events"].as_u64().unwrap() >= 100_000);
    assert!(
        runs[0]["events"].as_u64().unwrap() < 150_000,
        "checked often"
    );
    let info: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("run.json")).unwrap()).unwrap();
    assert_eq!(info["incomplete"], s["incomplete"]);
    assert!(out.join("flows.csv").is_file());
    assert!(!out.join("run.complete").exists(), "no completion marker");
}

#[test]
fn a_complete_run_is_not_marked() {
    let out = out_dir("complete");
    repsim_ok(&[
        "run",
        "scenarios/reps-micro-symmetric.toml",
        "--out",
        out.to_str().unwrap(),
        "--quiet",
        "--lb",
        "reps",
        "--max-events",
        "100000000",
        "--max-wall",
        "10m",
        "--max-memory",
        "64GiB",
    ]);
    assert!(summary(&out).get("incomplete").is_none());
    assert!(out.join("run.complete").is_file());
}

#[test]
fn bad_limits_are_rejected_with_what_is_allowed() {
    let o = repsim(&[
        "run",
        "scenarios/reps-micro-symmetric.toml",
        "--max-wall",
        "10",
    ]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("ms, s, m or h"));
    let o = repsim(&[
        "run",
        "scenarios/reps-micro-symmetric.toml",
        "--max-memory",
        "9pkt",
    ]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("GiB"));
}

#[test]
fn ecmp_pinned_to_a_dead_cable_is_reported_stalled_not_run_to_the_end() {
    // Without reconvergence, ECMP flows hashed onto the dead tor0->spine0 cable never finish.
    let run = |name: &str, stall: &str| {
        let out = out_dir(name);
        repsim_ok(&[
            "run",
            "scenarios/failures-one-cable-32.toml",
            "--out",
            out.to_str().unwrap(),
            "--quiet",
            "--lb",
            "ecmp",
            "--set",
            "end=20ms",
            "--stall-after",
            stall,
        ]);
        summary(&out)["runs"][0].clone()
    };
    let stalled = run("stalled", "2ms");
    let msgs = stalled["stalled"].as_array().expect("reported stalled");
    assert!(
        msgs.iter().any(|m| m
            .as_str()
            .unwrap()
            .starts_with("run stalled: no data packet delivered")),
        "{msgs:?}"
    );
    let ended = stalled["sim_time_us"].as_f64().unwrap();
    assert!(ended < 5_000.0, "ended at {ended} us, not early");
    assert!(stalled["flows_completed"].as_u64() < stalled["flows_total"].as_u64());
    // Control: with stall detection off the same run spins on (until its flows are given up
    // after `give_up_after`, 10 ms).
    let spun = run("spun", "off");
    let spun_end = spun["sim_time_us"].as_f64().unwrap();
    assert!(
        spun_end > 2.0 * ended,
        "without stall detection it ended at {spun_end} us"
    );
    assert_eq!(spun["flows_completed"], stalled["flows_completed"]);
}
