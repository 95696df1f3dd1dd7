//! Helpers shared by the integration tests: running the `repsim` binary from the repository
//! root. Each test file uses a different subset.
#![allow(dead_code)]
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The repository root (scenario paths in the tests are relative to it).
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Runs `repsim args...` in the repository root, successful or not.
pub fn repsim(args: &[&str]) -> Output {
    repsim_with(args, &[])
}

/// Runs `repsim args...` from the repository root with environment variables `vars` set (one
/// set to "" is unset). `REPSIM_THREADS` is 1 unless given: runs go on one thread unless a
/// test asks for more, whatever the machine's cores or the user's setting.
pub fn repsim_with(args: &[&str], vars: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_repsim"));
    command.current_dir(repo()).env("REPSIM_THREADS", "1");
    for &(name, value) in vars {
        if value.is_empty() {
            command.env_remove(name);
        } else {
            command.env(name, value);
        }
    }
    command.args(args).output().expect("run repsim")
}

/// Runs `repsim args...` and fails the test (with its stderr) unless it succeeds.
pub fn repsim_ok(args: &[&str]) -> Output {
    let o = repsim(args);
    assert!(
        o.status.success(),
        "repsim {args:?} failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

/// `repsim run scenarios/reps-micro-symmetric.toml --out DIR --quiet EXTRA...`, which must
/// succeed.
pub fn run_micro(out: &Path, extra: &[&str]) {
    let mut args = vec![
        "run",
        "scenarios/reps-micro-symmetric.toml",
        "--out",
        out.to_str().unwrap(),
        "--quiet",
    ];
    args.extend_from_slice(extra);
    repsim_ok(&args);
}

/// Every file in `dir` (relative name -> bytes).
pub fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(dir).unwrap().display().to_string();
                out.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

/// `run.json` without what differs from process to process (wall-clock times, the start time
/// and the command line, which names the output directory) and without the per-run fields
/// `per_run` (measures of the simulator itself, such as `peak_packets` across thread counts).
pub fn run_json_without_wall_clock(bytes: &[u8], per_run: &[&str]) -> serde_json::Value {
    let mut v: serde_json::Value = serde_json::from_slice(bytes).expect("run.json parses");
    let o = v.as_object_mut().unwrap();
    for k in ["wall_s", "started_unix_s", "command"] {
        assert!(o.remove(k).is_some(), "run.json lacks {k}");
    }
    for r in o["runs"].as_array_mut().unwrap() {
        let r = r.as_object_mut().unwrap();
        for k in std::iter::once(&"wall_s").chain(per_run) {
            assert!(r.remove(*k).is_some(), "run.json's runs lack {k}");
        }
    }
    v
}

/// Asserts two output directories hold the same files with the same bytes, except `run.json`
/// (compared without wall-clock fields and the per-run fields `per_run`) and `run.complete`
/// (its start time); returns the number of files.
pub fn assert_same_outputs(what: &str, a: &Path, b: &Path, per_run: &[&str]) -> usize {
    let (fa, fb) = (files(a), files(b));
    assert_eq!(
        fa.keys().collect::<Vec<_>>(),
        fb.keys().collect::<Vec<_>>(),
        "{what}: different files written"
    );
    for (name, bytes) in &fa {
        let other = &fb[name];
        match name.as_str() {
            "run.json" => assert_eq!(
                run_json_without_wall_clock(bytes, per_run),
                run_json_without_wall_clock(other, per_run),
                "{what}: run.json differs beyond wall-clock fields"
            ),
            // The start time (unix seconds) and nothing else.
            "run.complete" => {}
            _ => assert!(
                bytes == other,
                "{what}: {name} differs ({} vs {} bytes)",
                bytes.len(),
                other.len()
            ),
        }
    }
    fa.len()
}
