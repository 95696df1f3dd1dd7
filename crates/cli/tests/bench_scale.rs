//! `repsim bench --scale` (its CI step: 1,024 hosts, flows shrunk) and `repsim check --memory`:
//! the shape of what they print and write, not how fast they are.
mod common;

use common::repsim_ok;

const COLUMNS: &str = "hosts,tiers,ports,flows,completed,wall_s,events,mevents_per_s,peak_packets,\
peak_rss_mb,bytes_per_host,bytes_per_port,bytes_per_flow,fct_max_us";

/// Runs the series' 1,024-host step with flows of `size` and the `extra` arguments; returns
/// the command's output and the CSV it wrote.
fn small_step(size: &str, extra: &[&str]) -> (std::process::Output, String) {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("scale.csv");
    let set = format!("workload.size={size}");
    let mut args = vec!["bench", "--scale", "--max-hosts", "1024", "--set", &set];
    args.extend_from_slice(extra);
    args.extend_from_slice(&["--csv", csv.to_str().unwrap()]);
    let out = repsim_ok(&args);
    let text = std::fs::read_to_string(&csv).unwrap();
    (out, text)
}

#[test]
fn scale_series_small_step_writes_table_and_csv() {
    let (out, text) = small_step("100KB", &[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let header: Vec<&str> = COLUMNS.split(',').collect();
    let mut lines = stdout.lines();
    let table_header: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
    assert_eq!(table_header, header, "table header");
    let row: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
    assert_eq!(row.len(), header.len(), "one cell per column: {row:?}");
    assert_eq!(row[0], "1024", "only the 1,024-host step runs");

    let rows: Vec<Vec<&str>> = text.lines().map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 2, "header and one step:\n{text}");
    assert_eq!(rows[0], header);
    let cell = |name: &str| -> f64 {
        let i = header.iter().position(|c| *c == name).unwrap();
        rows[1][i]
            .parse()
            .unwrap_or_else(|e| panic!("{name} = {:?}: {e}", rows[1][i]))
    };
    assert_eq!(cell("hosts"), 1024.0);
    assert_eq!(cell("tiers"), 2.0);
    assert_eq!(cell("flows"), 1024.0, "a permutation: one flow per host");
    assert_eq!(cell("completed"), 1024.0);
    assert!(cell("events") > 0.0);
    assert!(cell("mevents_per_s") > 0.0);
    assert!(cell("peak_packets") > 0.0);
    // 1,024 hosts, 32 ToRs x 32 uplinks: 2 x (1,024 + 1,024) directed links.
    assert_eq!(cell("ports"), 4096.0);
    assert!(cell("bytes_per_host") > 0.0 && cell("bytes_per_port") > 0.0);
    assert!(cell("fct_max_us") > 0.0);
}

/// `--set topology.hosts=...` resizes a step: its row names the fabric that ran, and the bytes
/// per host divide by that fabric's hosts, not by the step's name.
#[test]
fn scale_series_reports_the_hosts_that_ran() {
    let (_, text) = small_step("8KB", &["--set", "topology.hosts=256"]);
    let header: Vec<&str> = COLUMNS.split(',').collect();
    let row: Vec<&str> = text.lines().nth(1).unwrap().split(',').collect();
    let cell = |name: &str| -> f64 {
        let i = header.iter().position(|c| *c == name).unwrap();
        row[i].parse().unwrap()
    };
    assert_eq!(cell("hosts"), 256.0, "{text}");
    assert_eq!(cell("flows"), 256.0, "{text}");
    // Peak RSS is printed to 0.1 MB: bytes per host times hosts lies within that of it.
    let rss = cell("peak_rss_mb") * 1e6;
    let per_host = cell("bytes_per_host");
    assert!(
        (per_host * 256.0 - rss).abs() <= 0.05e6 + 256.0,
        "bytes_per_host {per_host} x 256 hosts vs peak RSS {rss}: {text}"
    );
}

#[test]
fn scale_series_repeats_each_step_and_reports_one_row() {
    let (out, text) = small_step("20KB", &["--repeat", "2"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("1024 hosts, run 1 of 2"), "{stderr}");
    assert!(stderr.contains("1024 hosts, run 2 of 2"), "{stderr}");
    assert_eq!(
        text.lines().count(),
        2,
        "header and the fastest run:\n{text}"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        !stdout.contains("relative to"),
        "no share with a single step:\n{stdout}"
    );
}

#[test]
fn scale_series_repeats_in_rounds_over_the_steps() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("scale.csv");
    let out = repsim_ok(&[
        "bench",
        "--scale",
        "--max-hosts",
        "8192",
        "--repeat",
        "2",
        "--set",
        "workload.size=8KB",
        "--csv",
        csv.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let at = |run: &str| {
        stderr
            .find(run)
            .unwrap_or_else(|| panic!("no {run:?} in:\n{stderr}"))
    };
    // 1,024 then 8,192 hosts, then both again: a drifting machine slows both steps alike.
    let order = [
        at("1024 hosts, run 1 of 2"),
        at("8192 hosts, run 1 of 2"),
        at("1024 hosts, run 2 of 2"),
        at("8192 hosts, run 2 of 2"),
    ];
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{stderr}");
    let text = std::fs::read_to_string(&csv).unwrap();
    let hosts: Vec<&str> = text
        .lines()
        .skip(1)
        .map(|l| l.split(',').next().unwrap())
        .collect();
    assert_eq!(
        hosts,
        ["1024", "8192"],
        "one row per step, in step order:\n{text}"
    );
    // The memory columns are those of each step's first run (printed to stderr as it ends).
    let rss = COLUMNS.split(',').position(|c| c == "peak_rss_mb").unwrap();
    // A run's row on stderr: one cell per column.
    let columns = COLUMNS.split(',').count();
    for (step, line) in text.lines().skip(1).enumerate() {
        let first_run = stderr
            .lines()
            .map(|l| l.split_whitespace().collect::<Vec<_>>())
            .find(|cells| cells.len() == columns && cells[0] == hosts[step])
            .unwrap_or_else(|| panic!("no run of step {step} in:\n{stderr}"));
        assert_eq!(line.split(',').nth(rss), Some(first_run[rss]), "{text}");
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("events/s relative to 1024 hosts: 8192 hosts"),
        "{stdout}"
    );
}

#[test]
fn scale_series_rejects_an_empty_selection() {
    let o = common::repsim(&["bench", "--scale", "--max-hosts", "100"]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("no step"), "{err}");
}

#[test]
fn bench_refuses_zero_repetitions() {
    for args in [
        &["bench", "--repeat", "0"][..],
        &["bench", "--scale", "--repeat", "0"][..],
    ] {
        let o = common::repsim(args);
        assert!(!o.status.success(), "{args:?} ran");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("--repeat") && err.contains('0'), "{err}");
    }
}

#[test]
fn check_memory_prints_a_breakdown() {
    let out = repsim_ok(&["check", "scenarios/permutation-128.toml", "--memory"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let row = |name: &str| -> Vec<String> {
        stdout
            .lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("no {name} row in:\n{stdout}"))
            .split_whitespace()
            .map(String::from)
            .collect()
    };
    assert!(stdout.contains("structure"), "{stdout}");
    // 128 hosts, 16 ToRs, 8 spines: 16 + 8 switches x 16 edge switches.
    let fwd = row("forwarding table");
    assert_eq!(fwd[fwd.len() - 2], "384", "{stdout}");
    let flows = row("flows");
    assert_eq!(flows[1], "128", "{stdout}");
    let total: f64 = row("total").last().unwrap().parse().unwrap();
    assert!(total > 0.0);
    assert!(
        stdout.contains("each packet in flight adds 80 B"),
        "{stdout}"
    );
}

/// The CLI restarts itself with glibc's huge-page heap tunable (docs/performance.md) unless told
/// not to; `check --memory` reports which, so this fails if the restart stops happening.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[test]
fn the_heap_goes_on_huge_pages_unless_opted_out() {
    let state = |opt_out: bool| {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_repsim"));
        cmd.current_dir(common::repo())
            .args(["check", "scenarios/permutation-128.toml", "--memory"])
            .env_remove("GLIBC_TUNABLES");
        if opt_out {
            cmd.env("REPSIM_HEAP_HUGE_PAGES", "0");
        } else {
            cmd.env_remove("REPSIM_HEAP_HUGE_PAGES");
        }
        let out = cmd.output().expect("run repsim");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .find_map(|l| l.strip_prefix("heap on huge pages: ").map(String::from))
            .expect("a heap line")
    };
    assert_eq!(state(false), "on (GLIBC_TUNABLES glibc.malloc.hugetlb=1)");
    assert_eq!(state(true), "off (REPSIM_HEAP_HUGE_PAGES=0)");
}
