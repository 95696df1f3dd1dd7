//! Golden outputs: every ready scenario, run with its own load balancers and seed, must write
//! the same `flows.csv`, `lb_events.csv` and `summary.json` (all but `wall_s`) as recorded in
//! `tests/golden/<scenario>/`.
//!
//! A scenario too long for a test keeps a file `tests/golden/<scenario>/overrides` next to
//! its goldens: one `KEY=VALUE` per line (`#` comments allowed), passed as `--set KEY=VALUE`
//! when the golden is recorded and checked, so the golden states exactly which reduction of
//! the scenario it holds (e.g. `workload.size=2MB` for 2 GB elephants). Only this test reads it.
//!
//! Refactors keep these byte-identical. A change that alters behaviour on purpose re-records
//! them with `REPSIM_BLESS=1 cargo test --release -p repsim-cli --test golden` and explains
//! every difference (the git diff of `tests/golden/` shows exactly which numbers moved).
mod common;

use std::path::{Path, PathBuf};

use common::{repo, repsim_ok};

/// The files compared, as `repsim run` writes them.
const FILES: &[&str] = &["flows.csv", "lb_events.csv", "summary.json"];

fn golden_dir(scenario: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(scenario)
}

/// `summary.json` without the wall-clock fields, which differ from run to run.
fn stable_summary(bytes: &[u8]) -> Vec<u8> {
    let mut v: serde_json::Value = serde_json::from_slice(bytes).expect("summary.json parses");
    for run in v["runs"].as_array_mut().expect("runs array") {
        run.as_object_mut().expect("run object").remove("wall_s");
    }
    let mut out = serde_json::to_vec_pretty(&v).expect("serializes");
    out.push(b'\n');
    out
}

/// Mean and max FCT per load balancer from a flows.csv text (for the failure message).
fn fct_by_lb(csv: &str) -> Vec<(String, f64, f64)> {
    let mut out: Vec<(String, f64, f64, usize)> = Vec::new();
    for line in csv.lines().skip(1) {
        let cols: Vec<&str> = line.split(',').collect();
        let Some(fct) = cols.get(7).and_then(|c| c.parse::<f64>().ok()) else {
            continue;
        };
        match out.iter_mut().find(|e| e.0 == cols[0]) {
            Some(e) => {
                e.1 += fct;
                e.2 = e.2.max(fct);
                e.3 += 1;
            }
            None => out.push((cols[0].to_string(), fct, fct, 1)),
        }
    }
    out.into_iter()
        .map(|(lb, sum, max, n)| (lb, sum / n as f64, max))
        .collect()
}

/// A readable account of how `got` differs from `want`.
fn describe(file: &str, want: &str, got: &str) -> String {
    let mut msg = format!("{file} differs from its golden copy");
    let first = want
        .lines()
        .zip(got.lines())
        .enumerate()
        .find(|(_, (w, g))| w != g);
    match first {
        Some((i, (w, g))) => {
            msg += &format!("; first at line {}:\n  golden: {w}\n  now:    {g}", i + 1)
        }
        None => {
            msg += &format!(
                "; {} lines golden, {} now",
                want.lines().count(),
                got.lines().count()
            )
        }
    }
    if file == "flows.csv" {
        let (w, g) = (fct_by_lb(want), fct_by_lb(got));
        for (lb, mean, max) in &w {
            if let Some((_, gm, gx)) = g.iter().find(|e| &e.0 == lb) {
                msg += &format!(
                    "\n  {lb}: mean FCT {mean:.3} -> {gm:.3} us ({:+.2} %), max {max:.3} -> {gx:.3} us ({:+.2} %)",
                    (gm / mean - 1.0) * 100.0,
                    (gx / max - 1.0) * 100.0
                );
            }
        }
    }
    msg
}

/// The `--set` arguments a golden is recorded with: the lines of its `overrides` file
/// (blank lines and `#` comments skipped), none if it has no such file.
fn overrides(golden: &Path) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(golden.join("overrides")) else {
        return Vec::new();
    };
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .flat_map(|l| ["--set".to_string(), l.to_string()])
        .collect()
}

/// Runs `scenarios/<name>.toml` and compares (or, with `REPSIM_BLESS=1`, records) its outputs.
fn check(name: &str) {
    let out = tempfile::tempdir().unwrap();
    let scenario = format!("scenarios/{name}.toml");
    let golden = golden_dir(name);
    let mut args: Vec<String> = [
        "run",
        &scenario,
        "--out",
        out.path().to_str().unwrap(),
        "--quiet",
        "--collect",
        "none",
    ]
    .map(String::from)
    .to_vec();
    args.extend(overrides(&golden));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    repsim_ok(&args);
    let bless = std::env::var_os("REPSIM_BLESS").is_some_and(|v| v != "0");
    let mut problems = Vec::new();
    for file in FILES {
        let mut got = std::fs::read(out.path().join(file))
            .unwrap_or_else(|e| panic!("{name}: {file} was not written: {e}"));
        if *file == "summary.json" {
            got = stable_summary(&got);
        }
        let path = golden.join(file);
        if bless {
            std::fs::create_dir_all(&golden).unwrap();
            std::fs::write(&path, &got).unwrap();
            continue;
        }
        let want = std::fs::read(&path).unwrap_or_else(|e| {
            panic!(
                "{name}: no golden {} ({e}); record it with REPSIM_BLESS=1",
                path.display()
            )
        });
        if want != got {
            problems.push(describe(
                file,
                &String::from_utf8_lossy(&want),
                &String::from_utf8_lossy(&got),
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "{name}: outputs changed (re-record with REPSIM_BLESS=1 only if the change is intended \
         and explained):\n{}",
        problems.join("\n")
    );
}

macro_rules! golden {
    ($($test:ident => $name:literal),* $(,)?) => {
        $(
            #[test]
            fn $test() {
                check($name);
            }
        )*
        /// Every scenario shipped in `scenarios/` has a golden test above.
        #[test]
        fn every_ready_scenario_has_a_golden_test() {
            let covered = [$($name),*];
            let mut missing = Vec::new();
            for entry in std::fs::read_dir(repo().join("scenarios")).unwrap() {
                let path = entry.unwrap().path();
                if path.extension().is_some_and(|e| e == "toml") {
                    let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
                    if !covered.contains(&stem.as_str()) {
                        missing.push(stem);
                    }
                }
            }
            assert!(missing.is_empty(), "scenarios without a golden test: {missing:?}");
        }
    };
}

golden! {
    ack_coalescing_128 => "ack-coalescing-128",
    allreduce_butterfly_128 => "allreduce-butterfly-128",
    allreduce_ring_128 => "allreduce-ring-128",
    alltoall_128 => "alltoall-128",
    baselines_incast_128 => "baselines-incast-128",
    baselines_permutation_128 => "baselines-permutation-128",
    baselines_tornado_128 => "baselines-tornado-128",
    conweave_leafspine_irn => "conweave-leafspine-irn",
    conweave_leafspine_lossless => "conweave-leafspine-lossless",
    evs_sweep_128 => "evs-sweep-128",
    failures_extreme_10 => "failures-extreme",
    failures_extreme_25 => "failures-extreme-25",
    failures_extreme_50 => "failures-extreme-50",
    failures_incremental => "failures-incremental",
    failures_one_cable_32 => "failures-one-cable-32",
    incast_with_background => "incast-with-background",
    laps_dragonfly_hdp => "laps-dragonfly-hdp",
    laps_dragonfly_rpc => "laps-dragonfly-rpc",
    laps_llm_allscatter => "laps-llm-allscatter",
    laps_llm_incast => "laps-llm-incast",
    laps_rail_dm => "laps-rail-dm",
    laps_rail_str => "laps-rail-str",
    llm_incast_64mb => "llm-incast-64mb",
    permutation_1024 => "permutation-1024",
    permutation_128 => "permutation-128",
    reps_micro_asymmetric => "reps-micro-asymmetric",
    reps_micro_failures => "reps-micro-failures",
    reps_micro_symmetric => "reps-micro-symmetric",
    reunion_collisions => "reunion-collisions",
    reunion_interval => "reunion-interval",
    reunion_irn => "reunion-irn",
    reunion_load => "reunion-load",
    reunion_slicing => "reunion-slicing",
    ring_2gb_elephants => "ring-2gb-elephants",
    websearch_128 => "websearch-128",
}

#[test]
fn overrides_become_set_arguments() {
    let dir = tempfile::tempdir().unwrap();
    assert!(overrides(dir.path()).is_empty(), "no file, no overrides");
    std::fs::write(
        dir.path().join("overrides"),
        "# smaller flows\nworkload.size=2MB\n\n  end=1s \n",
    )
    .unwrap();
    assert_eq!(
        overrides(dir.path()),
        ["--set", "workload.size=2MB", "--set", "end=1s"]
    );
}

#[test]
fn summaries_ignore_only_wall_time() {
    let s = br#"{"runs":[{"lb":"reps","wall_s":1.5,"events":7}]}"#;
    let stable = String::from_utf8(stable_summary(s)).unwrap();
    assert!(!stable.contains("wall_s") && stable.contains("\"events\": 7"));
}
