//! Every key a scenario section accepts appears in the scenario reference
//! (`docs/scenario-reference.md`, and `docs/schemes.md` for scheme parameters), so the guide
//! cannot miss a key. The keys are read from the
//! loader itself: a section given an unknown key is refused with the list of the keys it
//! accepts, for every section, topology family, load balancer, congestion control and switch
//! scheme.
use std::path::Path;

use repsim::cc::CcSpec;
use repsim::lb::LbSpec;
use repsim::net::topology::builder::TopologySpec;
use repsim::routing::SwitchSpec;
use repsim::scenario::LoadedScenario;

const PROBE: &str = "zz_not_a_key";

/// A complete scenario: `{LB}` is replaced by the `lb` list, `{TOPOLOGY}` and `{WORKLOAD}` by
/// those tables' bodies, `{EXTRA}` by more sections.
const BASE: &str = r#"
lb = {LB}
{EXTRA}
[topology]
{TOPOLOGY}
[workload]
{WORKLOAD}
"#;

const PERMUTATION: &str = "type = \"permutation\"\nsize = \"1MiB\"";

const FAT_TREE: &str =
    "type = \"fat_tree\"\ntiers = 2\nhosts = 16\nhosts_per_tor = 4\nlink_speed = \"400Gbps\"";

/// The keys a probe's error lists, loading and building the scenario.
fn accepted(what: &str, lb: &str, extra: &str, topology: &str) -> Vec<String> {
    let (topology, workload) = topology
        .split_once("\n[workload]\n")
        .unwrap_or((topology, PERMUTATION));
    let text = BASE
        .replace("{LB}", lb)
        .replace("{EXTRA}", extra)
        .replace("{TOPOLOGY}", topology)
        .replace("{WORKLOAD}", workload);
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../probe.toml");
    let error = match LoadedScenario::parse(&text, &path) {
        Err(e) => e.to_string(),
        Ok(s) => match s.runs() {
            Err(e) => e.to_string(),
            Ok(runs) => match s.build_run(&runs[0], None) {
                Err(e) => e.to_string(),
                Ok(_) => panic!("{what}: a probe key was accepted:\n{text}"),
            },
        },
    };
    // "unknown field `x`, expected one of `a`, `b`" or "expected `a` or `b`" or "expected `a`",
    // or "there are no fields".
    if error.contains(&format!("`{PROBE}`, there are no fields")) {
        return Vec::new();
    }
    let (_, list) = error
        .split_once(&format!("`{PROBE}`, expected"))
        .unwrap_or_else(|| panic!("{what}: not refused as an unknown key: {error}"));
    list.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

#[test]
fn every_key_of_every_section_is_in_the_reference() {
    // The scenario reference, and the schemes page it sends scheme parameters to.
    let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs");
    let reference: String = ["scenario-reference.md", "schemes.md"]
        .iter()
        .map(|page| {
            std::fs::read_to_string(docs.join(page)).unwrap_or_else(|e| panic!("docs/{page}: {e}"))
        })
        .collect();
    let ecmp = "[\"ecmp\"]";
    let mut probes: Vec<(String, Vec<String>)> = Vec::new();
    let mut probe = |what: String, lb: &str, extra: &str, topology: &str| {
        let keys = accepted(&what, lb, extra, topology);
        probes.push((what, keys));
    };
    for section in [
        "queue",
        "transport",
        "pfc",
        "metrics",
        "collect",
        "loss",
        "routing",
    ] {
        probe(
            format!("[{section}]"),
            ecmp,
            &format!("[{section}]\n{PROBE} = 1\n"),
            FAT_TREE,
        );
    }
    probe(
        "top level".into(),
        ecmp,
        &format!("{PROBE} = 1\n"),
        FAT_TREE,
    );
    probe(
        "[[degrade]]".into(),
        ecmp,
        &format!("[[degrade]]\n{PROBE} = 1\n"),
        FAT_TREE,
    );
    probe(
        "[[fault]]".into(),
        ecmp,
        &format!("[[fault]]\n{PROBE} = 1\n"),
        FAT_TREE,
    );
    probe(
        "[[class]]".into(),
        ecmp,
        &format!("[[class]]\nname = \"x\"\n{PROBE} = 1\n"),
        FAT_TREE,
    );
    probe(
        "[workload]".into(),
        ecmp,
        "",
        &format!("{FAT_TREE}\n[workload]\n{PERMUTATION}\n{PROBE} = 1"),
    );
    for family in TopologySpec::names() {
        probe(
            format!("topology {family}"),
            ecmp,
            "",
            &format!("type = \"{family}\"\n{PROBE} = 1"),
        );
    }
    for lb in LbSpec::names() {
        probe(
            format!("lb {lb}"),
            &format!("[{{ scheme = \"{lb}\", {PROBE} = 1 }}]"),
            "",
            FAT_TREE,
        );
    }
    for cc in CcSpec::names() {
        probe(
            format!("cc {cc}"),
            ecmp,
            &format!("[cc]\nalgo = \"{cc}\"\n{PROBE} = 1\n"),
            FAT_TREE,
        );
    }
    for switch in SwitchSpec::names() {
        probe(
            format!("switch {switch}"),
            ecmp,
            &format!("[routing]\nswitch = {{ scheme = \"{switch}\", {PROBE} = 1 }}\n"),
            FAT_TREE,
        );
    }
    let mut missing = Vec::new();
    assert!(
        probes.iter().filter(|(_, keys)| !keys.is_empty()).count() > 30,
        "too few sections list keys: {probes:?}"
    );
    for (what, keys) in &probes {
        for key in keys {
            let written = [
                format!("`{key}`"),
                format!("`[{key}]`"),
                format!("`[[{key}]]`"),
            ];
            if !written.iter().any(|w| reference.contains(w.as_str())) {
                missing.push(format!("{what}: `{key}`"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "keys in neither docs/scenario-reference.md nor docs/schemes.md:\n{}",
        missing.join("\n")
    );
}
