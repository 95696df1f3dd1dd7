//! Records the commit the libraries and the binary are built from (`REPSIM_COMMIT`: short hash,
//! `-dirty` when tracked files differ from it, `unknown` outside a git checkout), so that a
//! run's and a figure's results name the code that produced them.
use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn main() {
    let commit = git(&["rev-parse", "--short=7", "HEAD"]).unwrap_or_else(|| "unknown".into());
    let dirty =
        git(&["status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty());
    let suffix = if dirty { "-dirty" } else { "" };
    println!("cargo:rustc-env=REPSIM_COMMIT={commit}{suffix}");
    if let Some(dir) = git(&["rev-parse", "--absolute-git-dir"]) {
        println!("cargo:rerun-if-changed={dir}/HEAD");
        println!("cargo:rerun-if-changed={dir}/index");
        println!("cargo:rerun-if-changed={dir}/refs/heads");
    }
    // Any source change may make the tree dirty (or clean again).
    for src in [
        "src",
        "../repsim/src",
        "../theory/src",
        "../reps/src",
        "../plot/src",
        "../figures/src",
        "../cli/src",
    ] {
        println!("cargo:rerun-if-changed={src}");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
