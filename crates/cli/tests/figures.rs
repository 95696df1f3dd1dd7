//! `repsim figure`: every figure with an entry (REPS, LAPS, Reunion) runs at `--scale small` (the CI variant) and
//! writes its plot (PNG, SVG), data CSV, page and our numbers beside the paper's; `figure list`
//! lists every matrix row, the unsimulatable ones as such.
mod common;

use std::path::PathBuf;

use common::{repsim, repsim_ok};

/// The figures acceptance asks for, all runnable with one command each.
const REQUIRED: &[&str] = &[
    "reps-fig2",
    "reps-fig3",
    "reps-fig4",
    "reps-fig5",
    "reps-fig6",
    "reps-fig7",
    "reps-fig8",
    "reps-fig9",
    "reps-fig12",
    "reps-fig14",
    "reps-fig15",
    "reps-fig16",
    "reps-fig17",
    "reps-fig18",
    "reps-fig20",
    "reps-fig21",
    "reps-fig22",
    "laps-fig5",
    "laps-fig6",
    "laps-fig7",
    "laps-fig8",
    "laps-table1",
    "reunion-fig1",
    "reunion-fig3",
    "reunion-fig4",
    "reunion-fig5",
    "reunion-fig9",
    "reunion-fig10",
    "reunion-fig12",
    "reunion-fig13",
    "reunion-fig14",
];

#[test]
fn list_shows_every_row_and_its_state() {
    let o = repsim_ok(&["figure", "list"]);
    let text = String::from_utf8_lossy(&o.stdout);
    for id in REQUIRED {
        let line = text
            .lines()
            .find(|l| l.split_whitespace().next() == Some(id))
            .unwrap_or_else(|| panic!("{id} not listed:\n{text}"));
        assert!(line.contains(" yes "), "{id} not available: {line}");
    }
    for id in ["reps-fig10", "reps-fig11", "laps-table2"] {
        let line = text.lines().find(|l| l.starts_with(id)).unwrap();
        assert!(line.contains("not simulatable"), "{line}");
    }
    assert!(text.contains("laps-fig5"), "{text}");
    let o = repsim(&["figure", "reps-fig10"]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("FPGA"));
    let o = repsim(&["figure", "no-such-figure"]);
    assert!(!o.status.success());
}

#[test]
fn every_required_figure_runs_at_small_scale() {
    let base = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("figures");
    let _ = std::fs::remove_dir_all(&base);
    let table = base.join("FIGURES.md");
    std::fs::create_dir_all(&base).unwrap();
    repsim_ok(&[
        "figure",
        "all",
        "--scale",
        "small",
        "--quiet",
        "--out",
        base.to_str().unwrap(),
        "--table",
        table.to_str().unwrap(),
    ]);
    for id in REQUIRED {
        let dir = base.join(id).join("small");
        let page = std::fs::read_to_string(dir.join("index.html"))
            .unwrap_or_else(|e| panic!("{id}: no page: {e}"));
        assert!(page.contains("scale <b>small</b>"), "{id}");
        let pngs: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.path().extension().is_some_and(|x| x == "png"))
            .collect();
        assert!(!pngs.is_empty(), "{id}: no PNG");
        // Every image the page shows exists (time-series plots live in a subdirectory).
        for src in page.split("src=\"").skip(1) {
            let file = &src[..src.find('"').unwrap()];
            assert!(
                dir.join(file).is_file(),
                "{id}: the page shows a missing {file}"
            );
        }
        for png in &pngs {
            let bytes = std::fs::read(png.path()).unwrap();
            assert!(bytes.starts_with(b"\x89PNG"), "{id}: {:?}", png.path());
            assert!(png.path().with_extension("svg").exists(), "{id}: no SVG");
            let name = png.file_name().to_string_lossy().into_owned();
            assert!(
                page.contains(&format!("src=\"{name}\"")),
                "{id}: {name} not on the page"
            );
        }
        let result: serde_json::Value =
            serde_json::from_slice(&std::fs::read(dir.join("result.json")).unwrap()).unwrap();
        for c in result["claims"].as_array().unwrap() {
            let ours = c["ours"]
                .as_f64()
                .unwrap_or_else(|| panic!("{id}: no number for {c}"));
            // Changes in percent may be negative (the scheme was slower), values read from the
            // runs zero (a count); a ratio of quantities cannot be either.
            let possible = match c["sign"].as_str().unwrap() {
                "positive" => ours > 0.0,
                "non_negative" => ours >= 0.0,
                "any" => true,
                other => panic!("{id}: sign {other}"),
            };
            assert!(ours.is_finite() && possible, "{id}: {c}");
            // Small-scale numbers are not the paper's experiment, and say so.
            assert_eq!(c["note"], "small scale: not comparable", "{id}: {c}");
            let paper = c["paper"].as_f64().unwrap();
            if paper == 0.0 {
                assert!(c["ratio"].is_null(), "{id}: {c}");
            } else {
                let ratio = c["ratio"].as_f64().unwrap();
                assert!((ratio - ours / paper).abs() < 1e-9);
            }
        }
    }
    // Redrawn without --quiet, a small-scale figure says on the console and in its plot
    // titles that its numbers are not comparable with the paper's.
    let fig4 = base.join("reps-fig4/small");
    let redrawn = repsim_ok(&[
        "figure",
        "reps-fig4",
        "--scale",
        "small",
        "--redraw",
        "--out",
        fig4.to_str().unwrap(),
    ]);
    let console = String::from_utf8_lossy(&redrawn.stderr);
    let claim_lines: Vec<&str> = console.lines().filter(|l| l.contains(", ratio ")).collect();
    assert!(!claim_lines.is_empty(), "{console}");
    for line in claim_lines {
        assert!(line.ends_with("(small scale: not comparable)"), "{line}");
    }
    let svg = std::fs::read_to_string(fig4.join("reps-fig4.svg")).unwrap();
    assert!(
        svg.contains("small scale: not comparable"),
        "no note in the title"
    );
    // Simulated figures keep their data as CSV with one row per point and load balancer.
    let csv = std::fs::read_to_string(base.join("reps-fig15/small/reps-fig15-left.csv")).unwrap();
    assert!(csv.starts_with("point,transport.evs_size,lb,"), "{csv}");
    assert_eq!(csv.lines().count(), 1 + 3 * 2, "{csv}");
    // A panel of several schemes runs one sweep per scheme side by side; its CSV is what one
    // sweep of all its schemes (the panel's own `sweep.toml`) writes.
    let left = base.join("reps-fig15/small/left");
    assert!(left.join("ops/sweep.csv").is_file() && left.join("reps/sweep.csv").is_file());
    let whole = base.join("reps-fig15-whole");
    repsim_ok(&[
        "sweep",
        left.join("sweep.toml").to_str().unwrap(),
        "--quiet",
        "--out",
        whole.to_str().unwrap(),
    ]);
    assert_eq!(
        std::fs::read_to_string(whole.join("sweep.csv")).unwrap(),
        csv,
        "per-scheme sweeps and one sweep of every scheme differ"
    );
    // Collective panels carry each run's completion time, mixed traffic its background max FCT.
    for (file, column) in [
        ("reps-fig3/small/reps-fig3-ring.csv", "collective_us"),
        (
            "reps-fig6/small/reps-fig6-background.csv",
            "fct_max_background_us",
        ),
        // Reunion's collisions, from each point's elephants.csv (none of the six at 2 ms is
        // collision-free).
        ("reunion-fig3/small/reunion-fig3.csv", "elephant_collisions"),
        // Fig. 4's receivers see LetFlow's reordering at every flowlet timeout.
        (
            "reunion-fig4/small/reunion-fig4-reorder.csv",
            "out_of_order_fraction",
        ),
    ] {
        let csv = std::fs::read_to_string(base.join(file)).unwrap();
        let mut lines = csv.lines();
        let header: Vec<&str> = lines.next().unwrap().split(',').collect();
        let k = header.iter().position(|h| *h == column).unwrap();
        for line in lines {
            let v: f64 = line.split(',').nth(k).unwrap().parse().unwrap_or(0.0);
            assert!(v > 0.0, "{file}: no {column} in {line}");
        }
    }
    // Reunion's figures read their runs' own files: LetFlow's flowlet events (at a 1 us
    // timeout it begins new flowlets all the time), and Fig. 9's and 10's loads each run every
    // scheme once.
    let result = |id: &str| -> serde_json::Value {
        let path = base.join(id).join("small/result.json");
        serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
    };
    let fig4 = result("reunion-fig4");
    assert!(
        fig4["claims"][0]["ours"].as_f64().unwrap() > 100.0,
        "{fig4}"
    );
    for id in ["reunion-fig9", "reunion-fig10"] {
        let csv = std::fs::read_to_string(base.join(format!("{id}/small/{id}.csv"))).unwrap();
        assert!(csv.starts_with("point,workload.ranks,lb,"), "{csv}");
        assert_eq!(csv.lines().count(), 1 + 6 * 5, "{csv}");
    }
    // The average and p99 panels of a LAPS trace figure plot the same runs: they run once
    // (into the first panel's directory), and both panels carry every point's data.
    let fig7 = base.join("laps-fig7/small");
    assert!(fig7.join("avg/sweep.csv").is_file());
    assert!(
        !fig7.join("p99").exists(),
        "the p99 panel ran its sweep again"
    );
    let avg = std::fs::read_to_string(fig7.join("laps-fig7-avg.csv")).unwrap();
    let p99 = std::fs::read_to_string(fig7.join("laps-fig7-p99.csv")).unwrap();
    assert_eq!(avg, p99);
    assert_eq!(avg.lines().count(), 1 + 11 * 7, "{avg}");
    // Beside the code's loads, the nominal 80 %: one point per scheme, run once for its two
    // panels.
    assert!(fig7.join("avg-nominal/sweep.csv").is_file());
    assert!(!fig7.join("p99-nominal").exists());
    let nominal = std::fs::read_to_string(fig7.join("laps-fig7-avg-nominal.csv")).unwrap();
    assert_eq!(nominal.lines().count(), 1 + 7, "{nominal}");
    let md = std::fs::read_to_string(&table).unwrap();
    for id in REQUIRED {
        assert!(
            md.contains(&format!("| {id} |")),
            "{id} missing from the table"
        );
    }
    assert!(md.contains("reps-fig10") && md.contains("not simulatable"));
}
