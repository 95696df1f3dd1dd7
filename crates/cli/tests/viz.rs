//! Collectors, result files and the HTML report, end to end through the `repsim` binary.
//! The numbers asserted here are the acceptance criteria, read from the CSV files.
mod common;

use std::path::Path;

use common::{repsim, repsim_ok, run_micro};

/// Rows of a CSV file as (header, records).
fn csv(path: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let mut r = csv::Reader::from_path(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let header = r.headers().unwrap().iter().map(String::from).collect();
    let rows = r
        .records()
        .map(|x| x.unwrap().iter().map(String::from).collect())
        .collect();
    (header, rows)
}

fn col(header: &[String], name: &str) -> usize {
    header
        .iter()
        .position(|h| h == name)
        .unwrap_or_else(|| panic!("no column {name} in {header:?}"))
}

/// Uplink shares of tor0 per load balancer, from ports.csv: (lb, uplink name, rate, share).
fn tor0_uplinks(dir: &Path) -> Vec<(String, String, f64, f64)> {
    let (h, rows) = csv(&dir.join("ports.csv"));
    let (lb, name, from, dir_, rate, share) = (
        col(&h, "lb"),
        col(&h, "name"),
        col(&h, "from"),
        col(&h, "direction"),
        col(&h, "rate_gbps"),
        col(&h, "uplink_share"),
    );
    rows.iter()
        .filter(|r| r[from] == "tor0" && r[dir_] == "up")
        .map(|r| {
            (
                r[lb].clone(),
                r[name].clone(),
                r[rate].parse().unwrap(),
                r[share].parse().unwrap(),
            )
        })
        .collect()
}

/// Share of queue samples above Kmin on tor0's uplinks after `from_us`, from port_series.csv.
fn above_kmin_share(dir: &Path, lb: &str, from_us: f64) -> f64 {
    let (h, rows) = csv(&dir.join("port_series.csv"));
    let (l, name, t, n, above) = (
        col(&h, "lb"),
        col(&h, "name"),
        col(&h, "t_us"),
        col(&h, "q_samples"),
        col(&h, "q_above_kmin"),
    );
    let (mut total, mut hi) = (0u64, 0u64);
    for r in &rows {
        if r[l] == lb && r[name].starts_with("tor0->agg") && r[t].parse::<f64>().unwrap() >= from_us
        {
            total += r[n].parse::<u64>().unwrap();
            hi += r[above].parse::<u64>().unwrap();
        }
    }
    assert!(total > 1000, "{lb}: only {total} queue samples");
    hi as f64 / total as f64
}

#[test]
fn symmetric_micro_reps_keeps_tor0_queues_low_and_balanced() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    run_micro(dir, &["--lb", "reps,ops"]);
    // Files, run.json and the completion marker.
    for f in [
        "flows.csv",
        "flow_stats.csv",
        "lb_events.csv",
        "ports.csv",
        "port_series.csv",
        "summary.json",
        "scenario.toml",
        "run.json",
        "run.complete",
    ] {
        assert!(dir.join(f).exists(), "missing {f}");
    }
    assert!(
        !std::fs::read_dir(dir).unwrap().any(|e| e
            .unwrap()
            .file_name()
            .to_string_lossy()
            .ends_with(".tmp")),
        "temporary files left behind"
    );
    let run: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("run.json")).unwrap()).unwrap();
    assert_eq!(run["seed"], 5);
    assert_eq!(run["runs"].as_array().unwrap().len(), 2);
    assert!(run["events"].as_u64().unwrap() > 100_000);
    assert!(run["scenario"].as_str().unwrap().contains("[collect]"));
    assert!(!run["host"]["os"].as_str().unwrap().is_empty());
    assert!(!run["repsim_version"].as_str().unwrap().is_empty());

    // Each of the 8 uplinks carries about 1/8 of tor0's uplink traffic under both.
    let ups = tor0_uplinks(dir);
    assert_eq!(ups.len(), 16, "{ups:?}");
    for (lb, name, _, share) in &ups {
        assert!((share - 0.125).abs() < 0.01, "{lb} {name}: share {share}");
    }
    // After the first 50 us, queues above Kmin are at least 3x rarer under REPS.
    let reps = above_kmin_share(dir, "reps", 50.0);
    let ops = above_kmin_share(dir, "ops", 50.0);
    eprintln!("share of queue samples above Kmin after 50 us: reps {reps:.4}, ops {ops:.4}");
    assert!(ops >= 3.0 * reps, "reps {reps} vs ops {ops}");

    // Buckets are 20 us and utilisation never exceeds the 400 G line rate.
    let (h, rows) = csv(&dir.join("port_series.csv"));
    let (t, util, name) = (col(&h, "t_us"), col(&h, "util_gbps"), col(&h, "name"));
    assert_eq!(
        rows[1][t].parse::<f64>().unwrap() - rows[0][t].parse::<f64>().unwrap(),
        20.0
    );
    let uplink_rows: Vec<_> = rows
        .iter()
        .filter(|r| r[name].starts_with("tor0->agg"))
        .collect();
    assert!(!uplink_rows.is_empty(), "no tor0 uplink rows");
    for r in uplink_rows {
        assert!(r[util].parse::<f64>().unwrap() <= 400.0 * 1.03, "{r:?}");
    }

    // Per-flow statistics.
    let (h, rows) = csv(&dir.join("flow_stats.csv"));
    assert_eq!(rows.len(), 16);
    for c in ["fct_us", "retransmissions", "nacks", "max_reorder"] {
        col(&h, c);
    }
    assert!(rows
        .iter()
        .all(|r| r[col(&h, "fct_us")].parse::<f64>().unwrap() > 300.0));

    // The report: one self-contained page with the microscopic plots for both schemes.
    let o = repsim_ok(&["report", dir.to_str().unwrap(), "--quiet"]);
    assert!(o.stdout.is_empty());
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    for needle in [
        "reps: per-uplink utilisation at tor0",
        "ops: per-uplink utilisation at tor0",
        "reps: queue depth at tor0 uplinks",
        "ops: queue depth at tor0 uplinks",
        "FCT CDF",
        "FCT slowdown by flow size (p99)",
        "Uplink share per port at tor0",
        "data:image/png;base64,",
        "Scenario (resolved)",
    ] {
        assert!(html.contains(needle), "report lacks {needle:?}");
    }
    assert!(!html.contains("src=\"plots/"), "images must be embedded");
    for f in [
        "util_tor0_reps",
        "queue_tor0_ops",
        "fct_cdf",
        "fct_bars",
        "slowdown_p99",
        "slowdown_mean",
    ] {
        for ext in ["png", "svg"] {
            assert!(
                dir.join("plots").join(format!("{f}.{ext}")).exists(),
                "{f}.{ext}"
            );
        }
    }
}

#[test]
fn asymmetric_micro_reps_splits_by_capacity_ops_evenly() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    repsim_ok(&[
        "run",
        "scenarios/reps-micro-asymmetric.toml",
        "--lb",
        "reps,ops",
        "--out",
        dir.to_str().unwrap(),
        "--quiet",
    ]);
    let ups = tor0_uplinks(dir);
    assert_eq!(ups.len(), 8, "{ups:?}");
    for (lb, name, rate, share) in &ups {
        eprintln!("{lb} {name} ({rate} G): {share:.4}");
        let want = match (lb.as_str(), *rate as u64) {
            ("reps", 200) => 1.0 / 7.0,
            ("reps", 400) => 2.0 / 7.0,
            ("ops", _) => 0.25,
            other => panic!("unexpected {other:?}"),
        };
        assert!(
            (share - want).abs() < 0.02,
            "{lb} {name}: {share} vs {want}"
        );
    }
}

#[test]
fn collection_off_and_all_and_parquet() {
    let tmp = tempfile::tempdir().unwrap();
    let off = tmp.path().join("off");
    run_micro(&off, &["--lb", "reps", "--collect", "none"]);
    assert!(!off.join("port_series.csv").exists());
    assert!(off.join("run.complete").exists());
    let all = tmp.path().join("all");
    run_micro(&all, &["--lb", "reps", "--collect", "all"]);
    let (h, rows) = csv(&all.join("ports.csv"));
    assert_eq!(rows.len(), 512, "every link");
    assert!(rows.iter().any(|r| r[col(&h, "direction")] == "host"));
    let (_, cw) = csv(&all.join("cwnd.csv"));
    assert!(cw.len() > 8);
    // Same flows.csv with and without collection: collectors do not perturb the run.
    assert_eq!(
        std::fs::read(off.join("flows.csv")).unwrap(),
        std::fs::read(all.join("flows.csv")).unwrap()
    );
    let pq = tmp.path().join("pq");
    if cfg!(feature = "parquet") {
        run_micro(&pq, &["--lb", "reps", "--format", "parquet"]);
        for f in ["flow_stats", "lb_events", "ports", "port_series"] {
            assert!(
                pq.join(format!("{f}.parquet")).exists(),
                "missing {f}.parquet"
            );
            assert!(
                !pq.join(format!("{f}.csv")).exists(),
                "{f}.csv next to parquet"
            );
        }
        assert!(pq.join("flows.csv").exists(), "flows.csv is always CSV");
    } else {
        let o = repsim(&[
            "run",
            "scenarios/reps-micro-symmetric.toml",
            "--format",
            "parquet",
            "--out",
            pq.to_str().unwrap(),
        ]);
        assert!(!o.status.success());
        let e = String::from_utf8_lossy(&o.stderr);
        assert!(e.contains("parquet") && e.contains("feature"), "{e}");
    }
}
