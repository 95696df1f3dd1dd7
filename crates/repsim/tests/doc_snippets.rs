//! Every ```toml block of `README.md` and `docs/*.md` is checked against the code, so that the
//! guide cannot drift from what the scenario loader accepts.
//!
//! - A block with both `[topology]` and `[workload]` is a whole scenario: it must load with
//!   [`LoadedScenario::parse`], every run of its `lb` list must build, its `[collect]` section
//!   must fit its topology and its first run must set up as `repsim check` does.
//! - Any other block is part of a scenario: it is merged into [`BASE`] (its tables over the
//!   base's, key by key; a `[topology]` or `[workload]` table that names its `type` replaces the
//!   base's, and arrays such as `[[fault]]` replace the base's) and the result is checked the same
//!   way. Scenario sections deny unknown keys, so a documented key that does not exist fails.
//! - A block fenced ```` ```toml,sweep ```` is a sweep file: its keys must be sweep keys, and its
//!   base scenario (relative to `sweeps/`, where sweep files live) must load with its `set`
//!   overrides, with each axis value and with each point.
//! - A block fenced ```` ```toml,ignore ```` is not checked (the text beside it says why).
//!
//! Paths in snippets (files a scenario names) resolve against the repository root.
use std::path::{Path, PathBuf};

use repsim::scenario::{LoadedScenario, Override};
use repsim::Simulation;

/// The scenario a partial block is merged into: a 3-tier, 128-host fat tree (switch and link
/// names such as `tor0->agg1`, `agg2` and `core1` exist) with one small flow.
const BASE: &str = r#"
seed = 1
end = "10ms"

[topology]
type = "fat_tree"
tiers = 3
hosts = 128
hosts_per_tor = 4
pod_size = 16
link_speed = "400Gbps"

[workload]
type = "explicit"
flows = [{ src = 0, dst = 1, size = "64KiB" }]
"#;

/// Keys a sweep file may have at its top level.
const SWEEP_KEYS: &[&str] = &[
    "scenario", "name", "out", "lb", "collect", "set", "axis", "points",
];

/// One fenced block: where it starts, its info string and its text.
struct Block {
    file: String,
    line: usize,
    info: String,
    text: String,
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The Markdown files whose snippets are checked.
fn markdown_files() -> Vec<PathBuf> {
    let root = root();
    let mut files = vec![root.join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .expect("docs/ exists")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    files.extend(docs);
    files
}

/// Every fenced block of a Markdown text whose info string starts with `toml`.
fn toml_blocks(file: &str, text: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut open: Option<(usize, String, String)> = None; // line, info, text
    for (i, line) in text.lines().enumerate() {
        let t = line.trim_start();
        match &mut open {
            None => {
                if let Some(rest) = t.strip_prefix("```") {
                    open = Some((i + 1, rest.trim().to_string(), String::new()));
                }
            }
            Some((start, info, body)) => {
                if t.trim() == "```" {
                    if info.split([',', ' ']).next() == Some("toml") {
                        out.push(Block {
                            file: file.to_string(),
                            line: *start,
                            info: info.clone(),
                            text: std::mem::take(body),
                        });
                    }
                    open = None;
                } else {
                    body.push_str(line);
                    body.push('\n');
                }
            }
        }
    }
    assert!(open.is_none(), "{file}: a fenced block is never closed");
    out
}

/// Merges `over` into `base`: tables key by key, anything else replaced; a `topology` or
/// `workload` table naming its `type` replaces the base's whole table.
fn merge(base: &mut toml::Table, over: &toml::Table, top: bool) {
    for (k, v) in over {
        let tagged = top
            && (k == "topology" || k == "workload")
            && v.as_table().is_some_and(|t| t.contains_key("type"));
        match (base.get_mut(k), v) {
            (Some(toml::Value::Table(b)), toml::Value::Table(o)) if !tagged => merge(b, o, false),
            _ => {
                base.insert(k.clone(), v.clone());
            }
        }
    }
}

/// Loads a scenario text, builds every run, checks `[collect]` and sets up the first run.
fn check_scenario(text: &str) -> Result<(), String> {
    let path = root().join("doc-snippet.toml");
    let scn = LoadedScenario::parse(text, &path).map_err(|e| e.to_string())?;
    check_loaded(&scn, true)
}

fn check_loaded(scn: &LoadedScenario, every_run: bool) -> Result<(), String> {
    let runs = scn.runs().map_err(|e| e.to_string())?;
    let runs = if every_run { &runs[..] } else { &runs[..1] };
    for (i, run) in runs.iter().enumerate() {
        let spec = scn.build_run(run, None).map_err(|e| e.to_string())?;
        if i == 0 {
            scn.collect_config(&spec.topology)
                .map_err(|e| e.to_string())?;
            Simulation::new(spec).map_err(|e| format!("run {}: set-up: {e}", run.label))?;
        }
    }
    Ok(())
}

fn check_partial(table: &toml::Table) -> Result<(), String> {
    let mut base: toml::Table = toml::from_str(BASE).expect("the base parses");
    merge(&mut base, table, true);
    let text = toml::to_string(&base).map_err(|e| format!("cannot serialize the merge: {e}"))?;
    check_scenario(&text)
}

/// A sweep file: its keys, and its base scenario with its overrides.
fn check_sweep(table: &toml::Table) -> Result<(), String> {
    for k in table.keys() {
        if !SWEEP_KEYS.contains(&k.as_str()) {
            return Err(format!(
                "'{k}' is not a sweep file key ({})",
                SWEEP_KEYS.join(", ")
            ));
        }
    }
    let sweeps = root().join("sweeps");
    let scenario = table
        .get("scenario")
        .and_then(|v| v.as_str())
        .ok_or("a sweep names its base scenario")?;
    let ov = |key: &str, value: &toml::Value| Override {
        key: key.to_string(),
        value: value.clone(),
    };
    let mut set: Vec<Override> = Vec::new();
    if let Some(t) = table.get("set").and_then(|v| v.as_table()) {
        set.extend(t.iter().map(|(k, v)| ov(k, v)));
    }
    let load = |file: &str, extra: &[Override]| -> Result<(), String> {
        let mut all = set.clone();
        all.extend_from_slice(extra);
        let scn = LoadedScenario::load_with(&sweeps.join(file), &all).map_err(|e| e.to_string())?;
        check_loaded(&scn, false)
    };
    load(scenario, &[])?;
    for axis in table
        .get("axis")
        .and_then(|v| v.as_array())
        .into_iter()
        .flatten()
    {
        let key = axis
            .get("key")
            .and_then(|v| v.as_str())
            .ok_or("an axis has a key")?;
        let values = axis
            .get("values")
            .and_then(|v| v.as_array())
            .ok_or("an axis has values")?;
        for v in values {
            match key {
                "seed" => {}
                "scenario" => load(v.as_str().ok_or("a scenario axis lists files")?, &[])?,
                _ => load(scenario, &[ov(key, v)])?,
            }
        }
    }
    for point in table
        .get("points")
        .and_then(|v| v.as_array())
        .into_iter()
        .flatten()
    {
        let point = point.as_table().ok_or("a point is a table")?;
        let file = point
            .get("scenario")
            .and_then(|v| v.as_str())
            .unwrap_or(scenario);
        let extra: Vec<Override> = point
            .iter()
            .filter(|(k, _)| *k != "scenario" && *k != "seed")
            .map(|(k, v)| ov(k, v))
            .collect();
        load(file, &extra)?;
    }
    Ok(())
}

fn check_block(block: &Block) -> Result<&'static str, String> {
    let flags: Vec<&str> = block.info.split([',', ' ']).skip(1).collect();
    if flags.contains(&"ignore") {
        return Ok("ignored");
    }
    let table: toml::Table =
        toml::from_str(&block.text).map_err(|e| format!("not valid TOML: {e}"))?;
    if flags.contains(&"sweep") {
        return check_sweep(&table).map(|_| "sweep");
    }
    if let Some(other) = flags.first() {
        return Err(format!(
            "unknown fence flag '{other}' (use ignore or sweep)"
        ));
    }
    if table.contains_key("topology") && table.contains_key("workload") {
        check_scenario(&block.text).map(|_| "whole")
    } else {
        check_partial(&table).map(|_| "partial")
    }
}

#[test]
fn every_toml_snippet_in_the_docs_loads() {
    let mut failures = Vec::new();
    let mut counts = std::collections::BTreeMap::<&str, usize>::new();
    for path in markdown_files() {
        let text = std::fs::read_to_string(&path).expect("readable Markdown");
        let name = path
            .strip_prefix(root())
            .unwrap_or(&path)
            .display()
            .to_string();
        for block in toml_blocks(&name, &text) {
            match check_block(&block) {
                Ok(kind) => *counts.entry(kind).or_default() += 1,
                Err(e) => failures.push(format!("{}:{}: {e}", block.file, block.line)),
            }
        }
    }
    println!("checked snippets: {counts:?}");
    assert!(
        counts.get("whole").copied().unwrap_or(0) > 0
            && counts.get("partial").copied().unwrap_or(0) > 0,
        "no snippets found: {counts:?}"
    );
    assert!(
        failures.is_empty(),
        "{} snippet(s) do not load:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The checker itself rejects what it must: an unknown key in a section, an unknown scheme
/// parameter and invalid TOML.
#[test]
fn the_checker_rejects_bad_snippets() {
    let block = |text: &str| Block {
        file: "test.md".into(),
        line: 1,
        info: "toml".into(),
        text: text.into(),
    };
    assert!(check_block(&block(
        "[queue]\nsize = \"100pkt\"\necn_min = \"20pkt\"\necn_max = \"80pkt\"\ntrimming = true\n"
    ))
    .is_ok());
    for bad in [
        "[queue]\nsize = \"100pkt\"\necn_min = \"20pkt\"\necn_max = \"80pkt\"\ntrimming = true\nno_such_key = 1\n",
        "[transport]\nno_such_key = 1\n",
        "[pfc]\nenabled = true\nbuffr = \"9MiB\"\n",
        "lb = [{ scheme = \"reps\", no_such_parameter = 1 }]\n",
        "[cc]\nalgo = \"mprdma\"\nno_such_parameter = 1\n",
        "[topology]\ntype = \"leaf_spine\"\nleaves = 2\nspines = 2\nhosts_per_leaf = 2\nlink_speed = \"100Gbps\"\ntiers = 2\n",
        "[workload]\ntype = \"nope\"\n",
        "[[fault]]\nkind = \"link_down\"\nlink = \"tor0->nowhere\"\n",
        "not toml at all = = =\n",
    ] {
        assert!(check_block(&block(bad)).is_err(), "accepted:\n{bad}");
    }
    let fenced = "text\n```toml\n[loss]\nprobability = 1e-6\n```\n```sh\nls\n```\n";
    let blocks = toml_blocks("t.md", fenced);
    assert_eq!(blocks.len(), 1);
    assert_eq!(blocks[0].line, 2);
}

#[test]
fn the_readme_says_what_each_first_build_costs() {
    // A newcomer meets three builds before a first result of their own; the README names each
    // and how long it takes, next to the commands that start them.
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README.md");
    let intro: String = readme
        .split("**repsim** is")
        .next()
        .expect("the README opens with its commands")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    for expected in [
        "minutes",
        "`cargo run` compiles the workspace",
        "`pip install` compiles it again",
        "a crate of your own",
    ] {
        assert!(
            intro.contains(expected),
            "the README's opening should say {expected:?}: {intro}"
        );
    }
}
