//! The `repsim` binary end to end: output files, determinism, errors.
use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn repsim(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_repsim"))
        .current_dir(repo())
        .args(args)
        .output()
        .expect("run repsim")
}

fn run_to(dir: &Path, extra: &[&str]) -> Vec<u8> {
    let out = dir.to_str().unwrap();
    let mut args = vec![
        "run",
        "scenarios/reps-micro-symmetric.toml",
        "--out",
        out,
        "--quiet",
    ];
    args.extend_from_slice(extra);
    let o = repsim(&args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    std::fs::read(dir.join("flows.csv")).unwrap()
}

#[test]
fn writes_the_documented_files() {
    let dir = tempfile::tempdir().unwrap();
    let csv = run_to(dir.path(), &[]);
    let text = String::from_utf8(csv).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next().unwrap(),
        "lb,id,src,dst,bytes,start,finish,fct_us,retransmissions"
    );
    assert_eq!(lines.count(), 24, "8 flows x 3 load balancers");
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("summary.json")).unwrap()).unwrap();
    let runs = summary["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 3);
    for r in runs {
        for k in [
            "lb",
            "flows_total",
            "flows_completed",
            "drops",
            "trims",
            "ecn_marks",
            "retransmissions",
            "events",
            "wall_s",
        ] {
            assert!(!r[k].is_null(), "missing {k}");
        }
        for k in ["min", "mean", "p50", "p99", "max"] {
            assert!(r["fct_us"][k].as_f64().unwrap() > 0.0, "fct_us.{k}");
        }
        assert_eq!(r["flows_completed"], 8);
    }
    let resolved = std::fs::read_to_string(dir.path().join("scenario.toml")).unwrap();
    assert!(resolved.contains("name = \"reps-micro-symmetric\""));
}

#[test]
fn same_seed_same_bytes_different_seed_different_results() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    let c = tempfile::tempdir().unwrap();
    let args = ["--lb", "ops,reps,ecmp"];
    let first = run_to(a.path(), &args);
    let second = run_to(b.path(), &args);
    assert_eq!(
        first, second,
        "same scenario and seed must give byte-identical flows.csv"
    );
    let other = run_to(c.path(), &["--lb", "ops,reps,ecmp", "--seed", "6"]);
    assert_ne!(
        first, other,
        "a different seed must change the random choices"
    );
}

#[test]
fn json_summary_on_stdout() {
    let dir = tempfile::tempdir().unwrap();
    let o = repsim(&[
        "run",
        "scenarios/reps-micro-symmetric.toml",
        "--lb",
        "reps",
        "--json",
        "--out",
        dir.path().to_str().unwrap(),
    ]);
    assert!(o.status.success());
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("stdout is JSON");
    assert_eq!(v["runs"][0]["lb"], "reps");
}

#[test]
fn bad_scenarios_fail_with_file_and_field() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.toml");
    let base = std::fs::read_to_string(repo().join("scenarios/reps-micro-symmetric.toml")).unwrap();
    let cases = [
        (
            base.replace("link_speed = \"400Gbps\"", "link_speed = \"fast\""),
            "topology.link_speed",
        ),
        (
            base.replace("size = \"100pkt\"", "size = \"100\""),
            "queue.size",
        ),
        (
            base.replace("hosts_per_tor = 8", "hosts_per_tor = 7"),
            "topology",
        ),
        (
            base.replace(
                "lb = [\"reps\", \"ops\", \"ecmp\"]",
                "lb = [\"reps\", \"magic\"]",
            ),
            "lb",
        ),
        (
            base.replace("src = \"0-7\"", "src = \"0-700\""),
            "workload.flows[0]",
        ),
        (
            base.replace("[queue]", "[queue]\ncolour = \"red\""),
            "colour",
        ),
        (
            base.replace("cc = \"mprdma\"", "cc = \"cubic\""),
            "transport.cc",
        ),
    ];
    for (text, field) in cases {
        std::fs::write(&bad, text).unwrap();
        let o = repsim(&[
            "run",
            bad.to_str().unwrap(),
            "--out",
            dir.path().join("o").to_str().unwrap(),
        ]);
        assert!(!o.status.success());
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("bad.toml") && err.contains(field),
            "expected file and '{field}' in: {err}"
        );
        assert!(!err.contains("panicked"), "{err}");
    }
    let o = repsim(&["run", "does/not/exist.toml"]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("does/not/exist.toml"));
}

#[test]
fn check_and_lb_override() {
    let o = repsim(&["check", "scenarios/permutation-1024.toml"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("1024 flows") && text.contains("RTO"),
        "{text}"
    );
    let dir = tempfile::tempdir().unwrap();
    let csv = run_to(dir.path(), &["--lb", "ecmp"]);
    let text = String::from_utf8(csv).unwrap();
    assert!(text.lines().skip(1).all(|l| l.starts_with("ecmp,")));
}
