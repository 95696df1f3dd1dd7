//! The workspace's crates depend on each other by responsibility (`docs/architecture.md`):
//! only the command line parses arguments (clap), and the Python package builds on the library
//! crates, never on the command line. Read from `cargo metadata`, so a dependency that arrives
//! through another crate counts too.
use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

use serde_json::Value;

/// Every package's name and its non-development dependencies, by package id.
struct Graph {
    names: BTreeMap<String, String>,
    deps: BTreeMap<String, Vec<String>>,
    members: Vec<String>,
}

/// The triple of the machine the tests run on, from `rustc -vV`.
fn host_triple() -> String {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let out = Command::new(rustc)
        .arg("-vV")
        .output()
        .expect("rustc -vV runs");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: "))
        .expect("rustc -vV names its host")
        .to_string()
}

fn metadata() -> Graph {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let manifest = concat!(env!("CARGO_MANIFEST_DIR"), "/../../Cargo.toml");
    // Offline, and only this platform's dependencies: those the build downloaded (other
    // platforms' crates, which a fresh cargo cache lacks, would need the network).
    let out = Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--offline",
            "--filter-platform",
            &host_triple(),
            "--manifest-path",
        ])
        .arg(manifest)
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "cargo metadata: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: Value = serde_json::from_slice(&out.stdout).expect("cargo metadata prints JSON");
    let names = meta["packages"]
        .as_array()
        .expect("packages")
        .iter()
        .map(|p| {
            let id = p["id"].as_str().expect("id").to_string();
            (id, p["name"].as_str().expect("name").to_string())
        })
        .collect();
    let mut deps = BTreeMap::new();
    for node in meta["resolve"]["nodes"].as_array().expect("resolve nodes") {
        let id = node["id"].as_str().expect("id").to_string();
        let normal: Vec<String> = node["deps"]
            .as_array()
            .expect("deps")
            .iter()
            .filter(|d| {
                d["dep_kinds"]
                    .as_array()
                    .expect("dep_kinds")
                    .iter()
                    .any(|k| k["kind"].is_null() || k["kind"] == "build")
            })
            .map(|d| d["pkg"].as_str().expect("pkg").to_string())
            .collect();
        deps.insert(id, normal);
    }
    let members = meta["workspace_members"]
        .as_array()
        .expect("workspace_members")
        .iter()
        .map(|m| m.as_str().expect("member id").to_string())
        .collect();
    Graph {
        names,
        deps,
        members,
    }
}

impl Graph {
    /// The names of every package `id` depends on, directly or not (not itself).
    fn reachable(&self, id: &str) -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        let mut stack = self.deps[id].clone();
        while let Some(next) = stack.pop() {
            if seen.insert(next.clone()) {
                stack.extend(self.deps[&next].iter().cloned());
            }
        }
        seen.iter().map(|d| self.names[d].clone()).collect()
    }

    fn member(&self, name: &str) -> &str {
        self.members
            .iter()
            .find(|m| self.names[*m] == name)
            .unwrap_or_else(|| panic!("workspace member {name}"))
    }
}

#[test]
fn only_the_command_line_depends_on_clap() {
    let g = metadata();
    assert!(
        g.reachable(g.member("repsim-cli")).contains("clap"),
        "the command line parses with clap"
    );
    let mut with_clap = Vec::new();
    for m in &g.members {
        let name = &g.names[m];
        if name != "repsim-cli" && g.reachable(m).contains("clap") {
            with_clap.push(name.clone());
        }
    }
    assert!(
        with_clap.is_empty(),
        "crates depending on clap: {with_clap:?}"
    );
}

#[test]
fn the_python_package_builds_on_the_libraries_only() {
    let g = metadata();
    let deps = g.reachable(g.member("repsim-python"));
    assert!(deps.contains("repsim-experiment") && deps.contains("repsim"));
    assert!(
        !deps.contains("repsim-cli"),
        "the Python package depends on the command line"
    );
}

#[test]
fn the_libraries_do_not_depend_on_their_users() {
    let g = metadata();
    let layers: &[(&str, &[&str])] = &[
        (
            "repsim",
            &[
                "theory",
                "repsim-plot",
                "repsim-experiment",
                "repsim-figures",
            ],
        ),
        (
            "theory",
            &["repsim-plot", "repsim-experiment", "repsim-figures"],
        ),
        (
            "repsim-plot",
            &["repsim", "repsim-experiment", "repsim-figures"],
        ),
        ("repsim-experiment", &["repsim-figures", "theory"]),
    ];
    for (name, above) in layers {
        let deps = g.reachable(g.member(name));
        for a in *above {
            assert!(!deps.contains(*a), "{name} depends on {a}");
        }
        assert!(!deps.contains("repsim-cli"), "{name} depends on repsim-cli");
    }
}
