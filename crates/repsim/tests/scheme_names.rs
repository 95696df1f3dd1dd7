//! The simulation, the network and the transport name no scheme: every load balancer,
//! congestion control and switch scheme reaches them through its contract alone, so a scheme
//! registered from outside the crate can do whatever a built-in does.
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The folders of `crates/repsim/src` that must stay free of scheme names.
const SCHEME_FREE: [&str; 3] = ["sim", "net", "transport"];

/// True if `line` names `scheme` as a word of its own (case and `_`/`-` aside), not as part of
/// a longer identifier or a `std::` path (`std::ops` is no load balancer).
fn names_scheme(line: &str, scheme: &str) -> bool {
    let line = line.to_ascii_lowercase().replace('_', "-");
    let is_word = |c: char| c.is_ascii_alphanumeric() || c == '-';
    line.match_indices(scheme).any(|(at, _)| {
        let before = line[..at].chars().next_back();
        let after = line[at + scheme.len()..].chars().next();
        !before.is_some_and(is_word)
            && !after.is_some_and(is_word)
            && !line[..at].ends_with("std::")
    })
}

/// Every `.rs` file under `dir`, sorted.
fn sources(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let entries = std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display()));
        for entry in entries {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

#[test]
fn the_word_rule_tells_names_from_parts_of_words() {
    assert!(names_scheme("let c = CcSpec::Eqds(x);", "eqds"));
    assert!(names_scheme(
        "use crate::lb::reps_legacy::X;",
        "reps-legacy"
    ));
    assert!(!names_scheme("use std::ops::Index;", "ops"));
    assert!(!names_scheme("let repsim = 1;", "reps"));
    assert!(!names_scheme("fn drops(&self)", "ops"));
}

#[test]
fn simulation_network_and_transport_name_no_scheme() {
    // ECMP is the network's own forwarding (the tables' equal-cost groups), which the
    // simulation inlines for every scheme that forwards by the hash alone.
    let schemes: BTreeSet<&str> = repsim::Registry::lbs()
        .into_iter()
        .chain(repsim::Registry::ccs())
        .chain(repsim::Registry::switches())
        .filter(|s| *s != "ecmp")
        .collect();
    assert!(schemes.len() > 20, "the registries list the built-ins");
    for built_in in ["reps", "laps", "eqds", "mprdma", "conga", "reunion"] {
        assert!(schemes.contains(built_in), "{built_in} is registered");
    }
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut found = Vec::new();
    for folder in SCHEME_FREE {
        let files = sources(&src.join(folder));
        assert!(
            files.len() >= 5,
            "{folder}/ was scanned ({} files)",
            files.len()
        );
        for file in files {
            let text = std::fs::read_to_string(&file).expect("readable source");
            for (i, line) in text.lines().enumerate() {
                let code = line.split("//").next().unwrap_or("");
                for s in &schemes {
                    if names_scheme(code, s) {
                        let shown = file.strip_prefix(&src).unwrap_or(&file);
                        found.push(format!("{}:{}: {s}", shown.display(), i + 1));
                    }
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "scheme names in {SCHEME_FREE:?}: {found:#?}"
    );
}
