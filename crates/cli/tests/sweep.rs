//! `repsim sweep`: a sweep killed with SIGKILL midway resumes without re-running finished points
//! and ends with the same `sweep.csv` as an uninterrupted sweep; a Slurm job array run task by
//! task (with `SLURM_ARRAY_TASK_ID` set) plus `merge` gives that `sweep.csv` too, and the same
//! per-point files as a local sweep that runs each point's load balancers side by side.
mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

use common::{repo, repsim_ok};

/// A sweep of the symmetric micro-benchmark: `seeds` seeds x EV-set sizes 32 and 256.
fn write_sweep(dir: &Path, seeds: &[u32]) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let scenario = repo().join("scenarios/reps-micro-symmetric.toml");
    let seeds: Vec<String> = seeds.iter().map(|s| s.to_string()).collect();
    let text = format!(
        "scenario = {:?}\nlb = [\"ops\", \"reps\"]\n\
         [[axis]]\nkey = \"transport.evs_size\"\nvalues = [32, 256]\n\
         [[axis]]\nkey = \"seed\"\nvalues = [{}]\n",
        scenario.canonicalize().unwrap().display().to_string(),
        seeds.join(", ")
    );
    let file = dir.join("sweep.toml");
    std::fs::write(&file, text).unwrap();
    file
}

fn fresh(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("sweep")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn markers(out: &Path, points: usize) -> Vec<Option<(SystemTime, Vec<u8>)>> {
    (0..points)
        .map(|i| {
            let dir = out.join("points").join(format!("{i:04}"));
            let m = std::fs::metadata(dir.join("run.complete")).ok()?;
            Some((
                m.modified().unwrap(),
                std::fs::read(dir.join("run.json")).unwrap(),
            ))
        })
        .collect()
}

#[test]
fn a_killed_sweep_resumes_without_rerunning_finished_points() {
    let base = fresh("kill");
    let file = write_sweep(&base, &[1, 2, 3]);
    let points = 6;
    let out = base.join("out");
    // One point at a time, so that the kill lands between points.
    let mut child = Command::new(env!("CARGO_BIN_EXE_repsim"))
        .args([
            "sweep",
            file.to_str().unwrap(),
            "--jobs",
            "1",
            "--quiet",
            "--out",
        ])
        .arg(&out)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    loop {
        let done = markers(&out, points).iter().flatten().count();
        if done >= 1 {
            assert!(
                done < points,
                "the sweep finished before it could be killed"
            );
            break;
        }
        assert!(child.try_wait().unwrap().is_none(), "sweep exited early");
        assert!(
            start.elapsed() < Duration::from_secs(300),
            "no point finished"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap(); // SIGKILL
    let status = child.wait().unwrap();
    assert!(!status.success(), "the sweep was not killed: {status:?}");
    assert!(!out.join("sweep.csv").exists());
    let before = markers(&out, points);
    let finished = before.iter().flatten().count();
    assert!(
        finished >= 1 && finished < points,
        "{finished} points finished"
    );

    repsim_ok(&[
        "sweep",
        file.to_str().unwrap(),
        "--jobs",
        "2",
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ]);
    let after = markers(&out, points);
    for (i, (b, a)) in before.iter().zip(&after).enumerate() {
        let a = a
            .as_ref()
            .unwrap_or_else(|| panic!("point {i} did not finish"));
        if let Some(b) = b {
            // Same marker time and the same run.json (its wall times differ between runs).
            assert_eq!(b, a, "finished point {i} was run again");
        }
    }

    let whole = base.join("whole");
    repsim_ok(&[
        "sweep",
        file.to_str().unwrap(),
        "--quiet",
        "--out",
        whole.to_str().unwrap(),
    ]);
    let resumed = std::fs::read_to_string(out.join("sweep.csv")).unwrap();
    let uninterrupted = std::fs::read_to_string(whole.join("sweep.csv")).unwrap();
    assert_eq!(resumed.lines().count(), 1 + points * 2, "{resumed}");
    assert_eq!(resumed, uninterrupted);
}

#[test]
fn slurm_array_tasks_then_merge_equal_a_local_sweep() {
    let base = fresh("slurm");
    let file = write_sweep(&base, &[4, 5]);
    let cluster = base.join("cluster");
    repsim_ok(&[
        "sweep",
        file.to_str().unwrap(),
        "--emit",
        "slurm",
        "--quiet",
        "--out",
        cluster.to_str().unwrap(),
    ]);
    let script = cluster.join("sweep.slurm");
    let text = std::fs::read_to_string(&script).unwrap();
    assert!(text.contains("#SBATCH --array=0-3"), "{text}");
    let syntax = Command::new("bash")
        .arg("-n")
        .arg(&script)
        .output()
        .unwrap();
    assert!(
        syntax.status.success(),
        "bash -n: {}",
        String::from_utf8_lossy(&syntax.stderr)
    );
    let manifest = std::fs::read_to_string(cluster.join("manifest.csv")).unwrap();
    assert_eq!(manifest.lines().count(), 5, "{manifest}");

    // merge refuses while points are missing.
    let early = common::repsim(&["sweep", "merge", cluster.to_str().unwrap()]);
    assert!(!early.status.success());
    assert!(String::from_utf8_lossy(&early.stderr).contains("not finished"));

    // Without the array variable the script refuses to run.
    let bare = Command::new("bash")
        .arg(&script)
        .env_remove("SLURM_ARRAY_TASK_ID")
        .output()
        .unwrap();
    assert!(!bare.status.success());
    for task in (0..4).rev() {
        let o = Command::new("bash")
            .arg(&script)
            .env("SLURM_ARRAY_TASK_ID", task.to_string())
            .env("REPSIM", env!("CARGO_BIN_EXE_repsim"))
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "task {task}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    repsim_ok(&["sweep", "merge", cluster.to_str().unwrap()]);

    // 8 threads for 4 points: each point runs its 2 load balancers side by side.
    let local = base.join("local");
    repsim_ok(&[
        "sweep",
        file.to_str().unwrap(),
        "--quiet",
        "--jobs",
        "8",
        "--out",
        local.to_str().unwrap(),
    ]);
    let merged = std::fs::read_to_string(cluster.join("sweep.csv")).unwrap();
    let swept = std::fs::read_to_string(local.join("sweep.csv")).unwrap();
    assert_eq!(merged.lines().count(), 9, "{merged}");
    assert!(
        merged.starts_with("point,transport.evs_size,lb,seed,"),
        "{merged}"
    );
    assert_eq!(merged, swept);
    // The tasks ran each point's load balancers one at a time (a task's default), the local
    // sweep side by side: every point's outputs are the same bytes.
    for point in 0..4 {
        let dir = format!("points/{point:04}");
        for f in ["flows.csv", "summary.json", "slowdown.csv", "scenario.toml"] {
            let one = std::fs::read(cluster.join(&dir).join(f)).unwrap();
            let other = std::fs::read(local.join(&dir).join(f)).unwrap();
            assert!(one == other, "point {point}: {f} differs");
        }
    }
}

#[test]
fn a_bad_point_index_is_refused() {
    let base = fresh("bad");
    let file = write_sweep(&base, &[1]);
    let o = common::repsim(&[
        "sweep",
        file.to_str().unwrap(),
        "--point",
        "7",
        "--out",
        base.join("o").to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("has 2 points"));
}

/// Every sweep shipped in `sweeps/` loads, and each of its points resolves to a scenario that
/// loads with the point's overrides and has the sweep's load balancers (checked by `--emit
/// slurm`, which runs nothing).
#[test]
fn every_shipped_sweep_can_run_every_point() {
    let base = fresh("shipped");
    let mut checked = 0;
    for entry in std::fs::read_dir(repo().join("sweeps")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "toml") {
            continue;
        }
        let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
        let out = base.join(&stem);
        let o = common::repsim(&[
            "sweep",
            path.to_str().unwrap(),
            "--emit",
            "slurm",
            "--quiet",
            "--out",
            out.to_str().unwrap(),
        ]);
        assert!(
            o.status.success(),
            "{stem}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(out.join("sweep.slurm").is_file(), "{stem}: no job script");
        checked += 1;
    }
    assert!(checked >= 6, "only {checked} sweep files found");
}

/// A point that cannot run (here: its scenario file does not exist) stops the sweep before any
/// point runs, and the message names it.
#[test]
fn a_point_that_cannot_run_stops_the_sweep_before_it_starts() {
    let base = fresh("unrunnable");
    let scenario = repo().join("scenarios/reps-micro-symmetric.toml");
    let text = format!(
        "lb = [\"reps\"]\nscenario = {:?}\n[[axis]]\nkey = \"scenario\"\nvalues = [{:?}, \"no-such.toml\"]\n",
        scenario.display().to_string(),
        scenario.display().to_string(),
    );
    let file = base.join("sweep.toml");
    std::fs::write(&file, text).unwrap();
    let out = base.join("out");
    let o = common::repsim(&[
        "sweep",
        file.to_str().unwrap(),
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("1 of 2 points cannot run"), "{err}");
    assert!(
        err.contains("point 1") && err.contains("no-such.toml"),
        "{err}"
    );
    assert!(!out.join("points").exists(), "a point ran: {err}");
    // A Slurm task checks only its own point: point 0 runs.
    let o = common::repsim(&[
        "sweep",
        file.to_str().unwrap(),
        "--quiet",
        "--point",
        "0",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(out.join("points/0000/run.complete").is_file());
    // An empty list of load balancers is refused up front.
    let empty = base.join("empty.toml");
    std::fs::write(
        &empty,
        format!("lb = []\nscenario = {:?}\n", scenario.display().to_string()),
    )
    .unwrap();
    let o = common::repsim(&["sweep", empty.to_str().unwrap(), "--quiet"]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("name at least one load balancer"), "{err}");
}
