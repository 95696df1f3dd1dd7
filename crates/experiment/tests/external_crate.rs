//! `docs/adding-a-scheme.md`'s crate of its own, built from the page: its blocks marked
//! `file=PATH` are written as a crate in a temporary directory (path dependencies pointed at
//! this workspace, the workspace's `Cargo.lock`, offline), which registers a load balancer, a
//! congestion control and a switch scheme and runs the page's scenario through
//! `run_scenario`. The test finds the standard output files holding the new schemes' runs.
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The text of every block whose fence names `file=PATH`, joined per path in page order.
fn page_files(page: &str) -> BTreeMap<String, String> {
    let mut files: BTreeMap<String, String> = BTreeMap::new();
    let mut open: Option<String> = None;
    for line in page.lines() {
        match &open {
            None => {
                let Some(info) = line.trim_start().strip_prefix("```") else {
                    continue;
                };
                if let Some(path) = info.split(',').find_map(|f| f.strip_prefix("file=")) {
                    let text = files.entry(path.to_string()).or_default();
                    if !text.is_empty() {
                        text.push('\n');
                    }
                    open = Some(path.to_string());
                }
            }
            Some(path) => {
                if line.trim_start().starts_with("```") {
                    open = None;
                } else {
                    let text = files.get_mut(path).expect("opened above");
                    text.push_str(line);
                    text.push('\n');
                }
            }
        }
    }
    files
}

#[test]
fn the_pages_crate_registers_three_schemes_and_writes_the_standard_files() {
    let root = root().canonicalize().expect("the workspace root");
    let page = std::fs::read_to_string(root.join("docs/adding-a-scheme.md")).expect("the page");
    let files = page_files(&page);
    for f in ["Cargo.toml", "src/main.rs", "my-scenario.toml"] {
        assert!(files.contains_key(f), "the page has no block for {f}");
    }
    let dir = tempfile::tempdir().expect("a temporary directory");
    let krate = dir.path().join("my-schemes");
    for (path, text) in &files {
        let text = match path.as_str() {
            // The page's crate sits beside a repsim checkout; here the checkout is this one.
            "Cargo.toml" => {
                assert!(text.contains("\"../repsim/crates/"), "{text}");
                text.replace(
                    "\"../repsim/crates/",
                    &format!("\"{}/crates/", root.display()),
                )
            }
            _ => text.clone(),
        };
        let to = krate.join(path);
        std::fs::create_dir_all(to.parent().expect("a parent")).expect("a directory");
        std::fs::write(&to, text).expect("written");
    }
    std::fs::copy(root.join("Cargo.lock"), krate.join("Cargo.lock")).expect("the lock file");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args(["run", "--offline", "--quiet", "--", "my-scenario.toml"])
        .current_dir(&krate)
        .env("CARGO_TARGET_DIR", root.join("target/external-crate"))
        .env_remove("RUSTFLAGS")
        .output()
        .expect("cargo runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the page's crate failed:\n{stdout}\n{stderr}"
    );
    // The console table of `repsim run`, one row per run.
    assert!(stdout.contains("fct_p99"), "{stdout}");
    assert_eq!(stdout.matches("\nspray-in-turn").count(), 2, "{stdout}");
    let results = krate.join("results/my-schemes");
    for f in [
        "flows.csv",
        "summary.json",
        "scenario.toml",
        "run.json",
        "run.complete",
    ] {
        assert!(results.join(f).is_file(), "no {f} in {}", results.display());
    }
    let flows = std::fs::read_to_string(results.join("flows.csv")).expect("flows.csv");
    let mut lines = flows.lines();
    let header: Vec<&str> = lines.next().expect("a header").split(',').collect();
    let lb = header
        .iter()
        .position(|c| *c == "lb")
        .expect("an lb column");
    let fct = header
        .iter()
        .position(|c| *c == "fct_us")
        .expect("an fct_us column");
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 16, "8 flows per run, two runs");
    for r in &rows {
        assert!(r[lb].starts_with("spray-in-turn"), "{r:?}");
        assert!(
            r[fct].parse::<f64>().is_ok_and(|f| f > 0.0),
            "finished: {r:?}"
        );
    }
    // The load balancer's timer fired: its jumps are recorded under the scheme's own name.
    let events = std::fs::read_to_string(results.join("lb_events.csv")).expect("lb_events.csv");
    assert!(
        events.lines().skip(1).any(|l| l.contains(",hopped")),
        "no hopped event in lb_events.csv:\n{events}"
    );
    // The congestion control's timer fired: windows opened past their 16-packet start.
    let cwnd = std::fs::read_to_string(results.join("cwnd.csv")).expect("cwnd.csv");
    let widest = cwnd
        .lines()
        .skip(1)
        .filter_map(|l| l.rsplit(',').next()?.parse::<u64>().ok())
        .max()
        .expect("window samples");
    let mtu = 4150;
    assert!(widest > 16 * mtu, "the widest window is {widest} B");
    let resolved = std::fs::read_to_string(results.join("scenario.toml")).expect("resolved");
    for name in ["spray-in-turn", "stepped-window", "epoch-hash"] {
        assert!(
            resolved.contains(name),
            "{name} not in the resolved scenario"
        );
    }
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(results.join("summary.json")).unwrap())
            .expect("summary.json is JSON");
    let text = summary.to_string();
    assert!(text.contains("spray-in-turn"), "{text}");
    // The switch scheme's timer fired: its salt moved on at least once per run.
    assert!(text.contains("\"epochs\""), "{text}");
}
