//! Helpers shared by the integration tests: running the `repsim` binary from the repository
//! root. Each test file uses a different subset.
#![allow(dead_code)]
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The repository root (scenario paths in the tests are relative to it).
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Runs `repsim args...` in the repository root, successful or not.
pub fn repsim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_repsim"))
        .current_dir(repo())
        .args(args)
        .output()
        .expect("run repsim")
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
