//! The `repsim` binary end to end: output files, determinism, errors.
mod common;

use std::path::Path;

use common::{repo, repsim, repsim_ok, run_micro};

/// Runs the symmetric micro scenario into `dir` and returns its flows.csv.
fn run_to(dir: &Path, extra: &[&str]) -> Vec<u8> {
    run_micro(dir, extra);
    std::fs::read(dir.join("flows.csv")).unwrap()
}

#[test]
fn writes_the_documented_files() {
    let dir = tempfile::tempdir().unwrap();
    let csv = run_to(dir.path(), &[]);
    let text = String::from_utf8(csv).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next().unwrap(),
        "lb,id,src,dst,bytes,start,finish,fct_us,retransmissions"
    );
    assert_eq!(lines.count(), 24, "8 flows x 3 load balancers");
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("summary.json")).unwrap()).unwrap();
    let runs = summary["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 3);
    for r in runs {
        for k in [
            "lb",
            "flows_total",
            "flows_completed",
            "drops",
            "trims",
            "ecn_marks",
            "retransmissions",
            "events",
        ] {
            assert!(!r[k].is_null(), "missing {k}");
        }
        assert!(r["wall_s"].is_null(), "wall-clock time belongs in run.json");
        for k in ["min", "mean", "p50", "p99", "max"] {
            assert!(r["fct_us"][k].as_f64().unwrap() > 0.0, "fct_us.{k}");
        }
        assert_eq!(r["flows_completed"], 8);
    }
    let resolved = std::fs::read_to_string(dir.path().join("scenario.toml")).unwrap();
    assert!(resolved.contains("name = \"reps-micro-symmetric\""));
    // run.json lists what was written; no faults, so no fault_elements.txt.
    let run: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("run.json")).unwrap()).unwrap();
    let files: Vec<&str> = run["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap())
        .collect();
    assert_eq!(
        files,
        [
            "flows.csv",
            "scenario.toml",
            "summary.json",
            "slowdown.csv",
            "flow_stats.csv",
            "lb_events.csv",
            "ports.csv",
            "port_series.csv",
        ]
    );
    for f in files {
        assert!(dir.path().join(f).exists(), "run.json lists missing {f}");
    }
    assert!(!dir.path().join("fault_elements.txt").exists());
}

#[test]
fn random_faults_list_their_elements() {
    let tmp = tempfile::tempdir().unwrap();
    let scenario = tmp.path().join("random-faults.toml");
    let base = std::fs::read_to_string(repo().join("scenarios/reps-micro-symmetric.toml")).unwrap();
    std::fs::write(
        &scenario,
        base
            + "\n[[fault]]\nkind = \"random_tor_uplinks\"\ndirection = \"forward\"\npercent = 25\n",
    )
    .unwrap();
    let elements = |name: &str| {
        let out = tmp.path().join(name);
        repsim_ok(&[
            "run",
            scenario.to_str().unwrap(),
            "--lb",
            "reps",
            "--out",
            out.to_str().unwrap(),
            "--quiet",
        ]);
        let run: serde_json::Value =
            serde_json::from_slice(&std::fs::read(out.join("run.json")).unwrap()).unwrap();
        assert!(
            run["files"]
                .as_array()
                .unwrap()
                .contains(&"fault_elements.txt".into()),
            "{}",
            run["files"]
        );
        std::fs::read_to_string(out.join("fault_elements.txt")).unwrap()
    };
    let first = elements("a");
    // 25 % of the 128 ToR uplinks, one per line.
    assert_eq!(first.lines().count(), 32, "{first}");
    assert!(first
        .lines()
        .all(|l| l.starts_with("tor") && l.contains("->agg")));
    assert_eq!(first, elements("b"), "same seed, same elements");
}

#[test]
fn same_seed_same_bytes_different_seed_different_results() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    let c = tempfile::tempdir().unwrap();
    let args = ["--lb", "ops,reps,ecmp"];
    let first = run_to(a.path(), &args);
    let second = run_to(b.path(), &args);
    assert_eq!(
        first, second,
        "same scenario and seed must give byte-identical flows.csv"
    );
    let other = run_to(c.path(), &["--lb", "ops,reps,ecmp", "--seed", "6"]);
    assert_ne!(
        first, other,
        "a different seed must change the random choices"
    );
}

#[test]
fn json_summary_on_stdout() {
    let dir = tempfile::tempdir().unwrap();
    let o = repsim_ok(&[
        "run",
        "scenarios/reps-micro-symmetric.toml",
        "--lb",
        "reps",
        "--json",
        "--out",
        dir.path().to_str().unwrap(),
    ]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("stdout is JSON");
    assert_eq!(v["runs"][0]["lb"], "reps");
}

#[test]
fn bad_scenarios_fail_with_file_and_field() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.toml");
    let base = std::fs::read_to_string(repo().join("scenarios/reps-micro-symmetric.toml")).unwrap();
    // (text in the scenario, its replacement, the field the error must name)
    let cases = [
        (
            "link_speed = \"400Gbps\"",
            "link_speed = \"fast\"",
            "topology.link_speed",
        ),
        ("size = \"100pkt\"", "size = \"100\"", "queue.size"),
        ("hosts_per_tor = 8", "hosts_per_tor = 7", "topology"),
        (
            "lb = [\"reps\", \"ops\", \"ecmp\"]",
            "lb = [\"reps\", \"magic\"]",
            "lb",
        ),
        ("src = \"0-7\"", "src = \"0-700\"", "workload.flows[0]"),
        ("[queue]", "[queue]\ncolour = \"red\"", "colour"),
        ("algo = \"mprdma\"", "algo = \"cubic\"", "cc"),
        (
            "[queue]",
            "[lb_options]\nevs_size = 256\n[queue]",
            "lb_options",
        ),
    ];
    for (from, to, field) in cases {
        assert!(
            base.contains(from),
            "the scenario no longer contains {from:?}"
        );
        std::fs::write(&bad, base.replace(from, to)).unwrap();
        let o = repsim(&[
            "run",
            bad.to_str().unwrap(),
            "--out",
            dir.path().join("o").to_str().unwrap(),
        ]);
        assert!(!o.status.success());
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("bad.toml") && err.contains(field),
            "expected file and '{field}' in: {err}"
        );
        assert!(!err.contains("panicked"), "{err}");
    }
    let o = repsim(&["run", "does/not/exist.toml"]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("does/not/exist.toml"));
}

#[test]
fn an_external_workload_has_nothing_to_run_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("cosim.toml");
    std::fs::write(
        &scenario,
        "[topology]\ntype = \"fat_tree\"\ntiers = 2\nhosts = 16\nhosts_per_tor = 4\nlink_speed = \"400Gbps\"\n\
         [workload]\ntype = \"external\"\n",
    )
    .unwrap();
    let out = dir.path().join("o");
    let o = repsim(&[
        "run",
        scenario.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("external") && err.contains("nothing to run"),
        "{err}"
    );
    assert!(!out.exists());
    // `check` accepts it: the scenario is valid, only a driving program gives it flows.
    let o = repsim(&["check", scenario.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("0 flows"));
}

#[test]
fn check_and_lb_override() {
    let o = repsim(&["check", "scenarios/permutation-1024.toml"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("1024 flows") && text.contains("RTO"),
        "{text}"
    );
    let dir = tempfile::tempdir().unwrap();
    let csv = run_to(dir.path(), &["--lb", "ecmp"]);
    let text = String::from_utf8(csv).unwrap();
    let rows: Vec<&str> = text.lines().skip(1).collect();
    assert_eq!(rows.len(), 8, "8 flows, ecmp only");
    assert!(rows.iter().all(|l| l.starts_with("ecmp,")), "{text}");
}

/// The `n` rows under the line of `text` starting with `header`, split into columns.
fn table_rows<'a>(text: &'a str, header: &str, n: usize) -> Vec<Vec<&'a str>> {
    let rows: Vec<Vec<&str>> = text
        .lines()
        .skip_while(|l| !l.starts_with(header))
        .skip(1)
        .take(n)
        .map(|row| row.split_whitespace().collect())
        .collect();
    assert_eq!(rows.len(), n, "{n} rows under {header:?}: {text}");
    rows
}

/// `check --partitions` shows the split a parallel run would use: the 1,024-host fat tree's 32
/// ToRs with their hosts in four equal parts, its 1 us links the lookahead; 0 is refused.
#[test]
fn check_prints_the_partitions() {
    let o = repsim(&[
        "check",
        "scenarios/permutation-1024.toml",
        "--partitions",
        "4",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("4 partitions (of 4 asked for)")
            && text.contains("lookahead 1.000 us")
            && text.contains("1.000 x the mean ports"),
        "{text}"
    );
    for cols in table_rows(&text, "partition hosts", 4) {
        assert_eq!(cols[1..], ["256", "16", "1024"], "{cols:?}");
    }
    // With --memory, each partition's share: every one builds the whole set-up, and sends and
    // receives its own hosts' flows (256 of the permutation's 1,024 each).
    let o = repsim_ok(&[
        "check",
        "scenarios/permutation-1024.toml",
        "--partitions",
        "4",
        "--memory",
    ]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("memory on 4 partitions"), "{text}");
    for cols in table_rows(&text, "partition ports flows_sent", 4) {
        assert_eq!(cols[1..4], ["1024", "256", "256"], "{cols:?}");
    }
    let o = repsim(&[
        "check",
        "scenarios/permutation-1024.toml",
        "--partitions",
        "0",
    ]);
    assert!(!o.status.success());
}

#[test]
fn closed_stdout_ends_quietly() {
    use std::io::Read;
    use std::process::{Command, Stdio};
    // The reader goes away before repsim prints (as with `repsim check x.toml | head -0`).
    let mut child = Command::new(env!("CARGO_BIN_EXE_repsim"))
        .current_dir(repo())
        .args(["check", "scenarios/permutation-1024.toml"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn repsim");
    drop(child.stdout.take());
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    child.wait().unwrap();
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn pfc_runs_write_pfc_csv_and_summary_totals() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    repsim_ok(&[
        "run",
        "scenarios/reps-micro-symmetric.toml",
        "--lb",
        "ecmp",
        "--set",
        "pfc.enabled=true",
        "--set",
        "pfc.buffer=\"2MiB\"",
        "--out",
        out,
        "--quiet",
    ]);
    let csv = std::fs::read_to_string(dir.path().join("pfc.csv")).unwrap();
    let mut lines = csv.lines();
    assert_eq!(
        lines.next().unwrap(),
        "lb,link,from,to,pauses_sent,resumes_sent,pauses_received,paused_us,max_headroom_bytes,headroom_bytes"
    );
    let rows: Vec<&str> = lines.collect();
    assert!(!rows.is_empty(), "a 2 MiB buffer makes the incast pause");
    assert!(rows.iter().all(|r| r.starts_with("ecmp,")));
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("summary.json")).unwrap()).unwrap();
    let run = &summary["runs"][0];
    assert!(run["pfc_pauses"].as_u64().unwrap() > 0);
    assert!(run["pfc_paused_us"].as_f64().unwrap() > 0.0);
    assert_eq!(run["drops"], 0, "lossless");
    let resolved = std::fs::read_to_string(dir.path().join("scenario.toml")).unwrap();
    assert!(resolved.contains("[pfc]") && resolved.contains("threshold = \"dynamic\""));
    // Without PFC: no pfc.csv and no PFC fields.
    let dir = tempfile::tempdir().unwrap();
    run_to(dir.path(), &["--lb", "ecmp"]);
    assert!(!dir.path().join("pfc.csv").exists());
    let summary = std::fs::read_to_string(dir.path().join("summary.json")).unwrap();
    assert!(!summary.contains("pfc_"));
}

#[test]
fn set_indexes_an_array_and_its_errors_name_the_override() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    repsim_ok(&[
        "run",
        "scenarios/reps-micro-asymmetric.toml",
        "--lb",
        "ecmp",
        "--set",
        "workload.flows[0].size=4MiB",
        "--out",
        out,
        "--quiet",
    ]);
    let flows = std::fs::read_to_string(dir.path().join("flows.csv")).unwrap();
    let rows: Vec<&str> = flows.lines().skip(1).collect();
    assert_eq!(rows.len(), 4, "{flows}");
    assert!(
        rows.iter().all(|r| r.split(',').nth(4) == Some("4194304")),
        "{flows}"
    );
    // A bad value set by an override: the error names the field and the override, no line.
    let o = repsim(&[
        "check",
        "scenarios/reps-micro-asymmetric.toml",
        "--set",
        "topology.link_speed=fast",
    ]);
    assert!(!o.status.success());
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("topology.link_speed"), "{e}");
    assert!(e.contains("--set topology.link_speed=\"fast\""), "{e}");
    assert!(!e.contains("(line"), "{e}");
    // An index past the array's end.
    let o = repsim(&[
        "check",
        "scenarios/reps-micro-asymmetric.toml",
        "--set",
        "workload.flows[3].size=4MiB",
    ]);
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("has 1 element, so there is no [3]"), "{e}");
}

/// One naming rule for time columns across every CSV a run can write: a flow's or a collective
/// step's instants are `start` and `finish` wherever they appear, and no file names a column
/// `X` that another names `X_us` (the same quantity under two spellings).
#[test]
fn time_columns_follow_one_convention_across_files() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    repsim_ok(&[
        "run",
        "scenarios/allreduce-ring-128.toml",
        "--out",
        out,
        "--quiet",
        "--lb",
        "reps",
        "--set",
        "workload.size=256KiB",
        // Every optional table too.
        "--set",
        "pfc.enabled=true",
        "--set",
        "metrics.elephants={ every = \"10us\", min_size = \"100KB\" }",
        "--set",
        "collect.switches=\"all\"",
        "--set",
        "collect.cwnd=true",
    ]);
    for file in [
        "pfc.csv",
        "elephants.csv",
        "ports.csv",
        "port_series.csv",
        "cwnd.csv",
        "lb_events.csv",
        "slowdown.csv",
    ] {
        assert!(dir.path().join(file).exists(), "{file} not written");
    }
    let header = |file: &str| -> Vec<String> {
        let text = std::fs::read_to_string(dir.path().join(file)).unwrap();
        let first = text.lines().next().unwrap_or_default();
        first.split(',').map(str::to_string).collect()
    };
    let mut names = std::collections::BTreeMap::new();
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        let file = entry.unwrap().file_name().to_string_lossy().into_owned();
        if file.ends_with(".csv") {
            for column in header(&file) {
                names
                    .entry(column)
                    .or_insert_with(Vec::new)
                    .push(file.clone());
            }
        }
    }
    for file in ["flows.csv", "flow_stats.csv", "collectives.csv"] {
        let columns = header(file);
        for instant in ["start", "finish"] {
            assert!(
                columns.iter().any(|c| c == instant),
                "{file} lacks `{instant}`: {columns:?}"
            );
        }
    }
    for (column, files) in &names {
        if let Some(stem) = column.strip_suffix("_us") {
            assert!(
                !names.contains_key(stem),
                "`{column}` ({files:?}) and `{stem}` ({:?}) name one quantity two ways",
                names[stem]
            );
        }
    }
    // The flows' rows agree between the two per-flow files.
    let rows = |file: &str| -> Vec<Vec<String>> {
        let text = std::fs::read_to_string(dir.path().join(file)).unwrap();
        let cols = header(file);
        let pick: Vec<usize> = ["id", "start", "finish", "fct_us"]
            .iter()
            .map(|c| cols.iter().position(|x| x == c).unwrap())
            .collect();
        text.lines()
            .skip(1)
            .map(|l| {
                let f: Vec<&str> = l.split(',').collect();
                pick.iter().map(|&i| f[i].to_string()).collect()
            })
            .collect()
    };
    assert_eq!(rows("flows.csv"), rows("flow_stats.csv"));
}
