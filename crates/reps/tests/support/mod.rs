//! Helpers shared by the integration tests that drive `rustc` and `cc` directly.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// The crate root (`crates/reps`).
pub fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A fresh scratch directory under cargo's per-target temporary directory.
pub fn scratch_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create scratch dir");
    dir
}

/// The compiler cargo uses (`$RUSTC`), else `rustc` from `PATH`.
pub fn rustc() -> Command {
    Command::new(std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into()))
}

/// Runs `cmd`, panicking with its output when it fails; returns stdout.
pub fn run(mut cmd: Command) -> String {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{cmd:?} failed ({})\nstdout:\n{stdout}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// Builds `src/lib.rs` as a `no_std` static library with the C API and its own panic
/// handler (the `reps_c_staticlib` cfg); returns the path of `libreps.a`.
pub fn build_c_staticlib(dir: &Path) -> PathBuf {
    let mut cmd = rustc();
    cmd.args([
        "--crate-name",
        "reps",
        "--crate-type",
        "staticlib",
        "--edition",
        "2021",
    ])
    .args([
        "-C",
        "opt-level=2",
        "-C",
        "panic=abort",
        "--cfg",
        "reps_c_staticlib",
    ])
    .arg(crate_dir().join("src/lib.rs"))
    .arg("--out-dir")
    .arg(dir);
    run(cmd);
    let lib = dir.join("libreps.a");
    assert!(lib.is_file(), "{} was not produced", lib.display());
    lib
}
