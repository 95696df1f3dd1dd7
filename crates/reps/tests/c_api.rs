//! Compiles `c/reps_test.c` with the system C compiler against `include/reps.h` and the
//! crate built as a `no_std` static library, then runs it.
//!
//! The static library is produced by invoking `rustc` on `src/lib.rs` directly (see
//! `support::build_c_staticlib`), so the test needs no extra cargo invocation, no build
//! script and no `cc` crate. The C compiler is `$CC`, else `/usr/bin/cc`, else `cc`.

mod support;

use std::path::PathBuf;
use std::process::Command;

fn c_compiler() -> PathBuf {
    if let Some(cc) = std::env::var_os("CC") {
        return cc.into();
    }
    let usr = PathBuf::from("/usr/bin/cc");
    if usr.exists() {
        usr
    } else {
        PathBuf::from("cc")
    }
}

#[test]
fn c_program_uses_every_function_of_the_header() {
    let dir = support::scratch_dir("reps_c_api");
    let lib = support::build_c_staticlib(&dir);
    let exe = dir.join("reps_test");
    let crate_dir = support::crate_dir();

    let mut cc = Command::new(c_compiler());
    cc.args([
        "-std=c11",
        "-Wall",
        "-Wextra",
        "-Werror",
        "-pedantic",
        "-O1",
    ])
    .arg("-I")
    .arg(crate_dir.join("include"))
    .arg(crate_dir.join("c/reps_test.c"))
    .arg(&lib)
    .arg("-o")
    .arg(&exe);
    support::run(cc);

    let stdout = support::run(Command::new(&exe));
    assert!(
        stdout.contains("reps C API: OK"),
        "unexpected output: {stdout}"
    );
}

/// `(name, value)` pairs for Rust constants that `reps.h` repeats under the same name.
macro_rules! same_name {
    ($($name:ident),* $(,)?) => {
        [$((stringify!($name), i64::from($name))),*]
    };
}

#[test]
fn header_constants_match_rust() {
    use reps::ffi::*;
    let header = std::fs::read_to_string(support::crate_dir().join("include/reps.h")).unwrap();
    let ffi_constants = same_name![
        REPS_EXPLORE_REFERENCE,
        REPS_EXPLORE_PAPER_PSEUDOCODE,
        REPS_COALESCING_PER_ACK,
        REPS_COALESCING_CARRY_EVS,
        REPS_COALESCING_REUSE_EVS,
        REPS_TRANSITION_NONE,
        REPS_TRANSITION_ENTERED_FREEZING,
        REPS_TRANSITION_EXITED_FREEZING,
        REPS_CONFIG_OK,
        REPS_CONFIG_BAD_EVS_SIZE,
        REPS_CONFIG_BAD_FREEZE_DURATION,
        REPS_CONFIG_BAD_REUSE_MAX_USES,
        REPS_CONFIG_BAD_ENUM,
        REPS_CONFIG_NULL,
    ];
    let limits = [
        ("REPS_BUFFER_SLOTS", reps::BUFFER_SLOTS as i64),
        ("REPS_MAX_EVS_SIZE", i64::from(reps::MAX_EVS_SIZE)),
        ("REPS_MAX_REUSE_USES", i64::from(reps::MAX_REUSE_USES)),
        (
            "REPS_STATE_SIZE",
            std::mem::size_of::<reps::RepsState>() as i64,
        ),
    ];
    for (name, value) in ffi_constants.into_iter().chain(limits) {
        let line = format!("#define {name} {value}");
        // The value may carry C's unsigned suffix, and must end there.
        let defines_it = |l: &str| {
            l.strip_prefix(&line)
                .map(|rest| rest.strip_prefix('u').unwrap_or(rest))
                .is_some_and(|rest| !rest.starts_with(|c: char| c.is_ascii_alphanumeric()))
        };
        assert!(header.lines().any(defines_it), "reps.h lacks `{line}`");
    }
}
