//! `repsim figure all`: a run killed part-way and started again finishes without re-running
//! the points that had finished, and writes the table with its total and the plots.
mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{repo, repsim_ok};

/// Every `run.json` under `dir` (one per finished or started point), with its bytes.
fn runs(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.file_name().is_some_and(|n| n == "run.json") {
                out.push((p.clone(), std::fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

/// Points with their `run.complete` marker under `dir`.
fn finished(dir: &Path) -> Vec<PathBuf> {
    runs(dir)
        .into_iter()
        .map(|(p, _)| p.parent().unwrap().to_path_buf())
        .filter(|d| d.join("run.complete").exists())
        .collect()
}

#[test]
fn an_interrupted_run_resumes_without_rerunning_finished_points() {
    let base = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("figure-all-resume");
    let _ = std::fs::remove_dir_all(&base);
    std::fs::create_dir_all(&base).unwrap();
    let table = base.join("FIGURES.md");
    let plots = base.join("docs").join("figures");
    let args = [
        "figure",
        "all",
        "--only",
        "reps-fig9",
        "--scale",
        "small",
        "-j",
        "1",
        "--quiet",
        "--out",
        base.to_str().unwrap(),
        "--table",
        table.to_str().unwrap(),
        "--plots",
        plots.to_str().unwrap(),
    ];
    // Twelve runs one at a time: killed as soon as the first has finished.
    let mut child = Command::new(env!("CARGO_BIN_EXE_repsim"))
        .current_dir(repo())
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(300);
    while finished(&base).is_empty() {
        assert!(Instant::now() < deadline, "no point finished in 300 s");
        assert!(
            child.try_wait().unwrap().is_none(),
            "the run ended before it could be interrupted"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let done = finished(&base);
    let before: Vec<_> = runs(&base)
        .into_iter()
        .filter(|(p, _)| done.contains(&p.parent().unwrap().to_path_buf()))
        .collect();
    assert!(!before.is_empty() && done.len() < 12, "{done:?}");
    assert!(!base.join("reps-fig9/small/result.json").exists());
    // --redraw runs nothing and says why.
    let mut redraw: Vec<&str> = args.to_vec();
    redraw.push("--redraw");
    let o = common::repsim(&redraw);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("have not run"));
    assert_eq!(finished(&base), done);

    repsim_ok(&args);
    // Every point finished, and those that had finished before were not run again.
    assert_eq!(finished(&base).len(), 12);
    let after = runs(&base);
    for (path, bytes) in &before {
        let now = after.iter().find(|(p, _)| p == path).unwrap();
        assert_eq!(&now.1, bytes, "{} was run again", path.display());
    }
    let text = std::fs::read_to_string(&table).unwrap();
    assert!(
        text.contains("| reps-fig9 | REPS Fig. 9 | small |"),
        "{text}"
    );
    assert!(text.contains("Total wall time of the figures above: "));
    assert!(
        text.contains("![reps-fig9.svg](docs/figures/reps-fig9.svg)"),
        "{text}"
    );
    assert!(plots.join("reps-fig9.svg").is_file());

    // A redraw reuses every point: nothing runs, and the figure keeps its commit and time.
    let first = std::fs::read_to_string(base.join("reps-fig9/small/result.json")).unwrap();
    repsim_ok(&redraw);
    assert_eq!(runs(&base), after);
    let again = std::fs::read_to_string(base.join("reps-fig9/small/result.json")).unwrap();
    let field = |t: &str, k: &str| {
        let v: serde_json::Value = serde_json::from_str(t).unwrap();
        v[k].clone()
    };
    assert_eq!(field(&first, "commit"), field(&again, "commit"));
    assert_eq!(field(&first, "wall_s"), field(&again, "wall_s"));
}

#[test]
fn only_names_figures_that_exist() {
    let o = common::repsim(&["figure", "all", "--only", "reps-fig99", "--scale", "small"]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("no figure reps-fig99"));
}
