//! Runs every `repsim theory` subcommand as parsed from its arguments, with small parameters, and
//! checks its files; the flags' defaults are the library's.

use std::path::{Path, PathBuf};

use clap::Parser;
use repsim_cli::theory::{TheoryArgs, TheoryModel};
use repsim_figures::models;
use theory::recycled::Feedback;

#[derive(Parser)]
struct Wrapper {
    #[command(flatten)]
    theory: TheoryArgs,
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("theory-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn run(args: &[&str]) {
    let mut argv = vec!["theory"];
    argv.extend_from_slice(args);
    let w = Wrapper::try_parse_from(argv).expect("arguments parse");
    w.theory.execute().expect("command runs");
}

fn check_csv(path: &Path, header: &str, min_rows: usize) {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some(header), "{}", path.display());
    let cols = header.split(',').count();
    let rows: Vec<&str> = lines.collect();
    assert!(
        rows.len() >= min_rows,
        "{}: {} rows",
        path.display(),
        rows.len()
    );
    for r in rows {
        assert_eq!(
            r.split(',').count(),
            cols,
            "{}: bad row {r}",
            path.display()
        );
    }
}

fn check_plot(dir: &Path, stem: &str) {
    let png = std::fs::read(dir.join(format!("{stem}.png"))).expect("png exists");
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "PNG signature");
    assert!(png.len() > 5_000, "PNG suspiciously small");
    let svg = std::fs::read_to_string(dir.join(format!("{stem}.svg"))).expect("svg exists");
    assert!(svg.contains("<svg"), "SVG root element");
    assert!(svg.trim_end().ends_with("</svg>"), "SVG closed");
    assert!(svg.contains("<text"), "SVG has text");
}

#[test]
fn ops_command() {
    let d = temp_dir("ops");
    let out = d.to_str().unwrap();
    run(&[
        "ops", "--out", out, "--n", "8,16", "--rounds", "50", "--trials", "3",
    ]);
    check_csv(
        &d.join("ops.csv"),
        "n,round,mean_max_load,max_max_load",
        100,
    );
    check_plot(&d, "ops");
}

#[test]
fn recycled_command() {
    let d = temp_dir("recycled");
    let out = d.to_str().unwrap();
    run(&["recycled", "--out", out, "--rounds", "60", "--seed", "3"]);
    check_csv(&d.join("recycled.csv"), "model,round,bin,load", 2 * 60 * 5);
    for stem in [
        "recycled",
        "recycled_queues_ops",
        "recycled_queues_recycled",
    ] {
        check_plot(&d, stem);
    }
}

#[test]
fn convergence_command() {
    let d = temp_dir("convergence");
    let out = d.to_str().unwrap();
    run(&[
        "convergence",
        "--out",
        out,
        "--n",
        "16",
        "--runs",
        "3",
        "--rounds",
        "500",
    ]);
    let header = "n,run,tau,colours_per_bin,converged_at,final_state_converged,recycled_max_load,ops_max_first_tenth,ops_max_last_tenth";
    check_csv(&d.join("convergence.csv"), header, 3);
    check_plot(&d, "convergence");
}

#[test]
fn coalescing_command() {
    let d = temp_dir("coalescing");
    let out = d.to_str().unwrap();
    run(&[
        "coalescing",
        "--out",
        out,
        "--n",
        "16",
        "--rounds",
        "100",
        "--trials",
        "2",
    ]);
    check_csv(
        &d.join("coalescing.csv"),
        "variant,round,mean_max_load,max_max_load",
        500,
    );
    check_plot(&d, "coalescing");
}

#[test]
fn ev_imbalance_command() {
    let d = temp_dir("ev");
    let out = d.to_str().unwrap();
    run(&[
        "ev-imbalance",
        "--out",
        out,
        "--salts",
        "5",
        "--max-log2",
        "8",
    ]);
    check_csv(
        &d.join("ev_imbalance.csv"),
        "flows,evs,salt,imbalance",
        2 * 5 * 5,
    );
    check_csv(
        &d.join("ev_imbalance_summary.csv"),
        "flows,evs,salts,min,p5,p25,median,p75,p95,max,mean",
        10,
    );
    check_plot(&d, "ev_imbalance");
}

/// The shape the `repsim` binary uses: `repsim theory <model> ...` as a subcommand variant.
#[derive(Parser)]
struct Repsim {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Subcommand)]
enum Command {
    /// Balls-into-bins models.
    Theory(TheoryArgs),
}

#[test]
fn embeds_as_repsim_subcommand() {
    use clap::CommandFactory;
    Repsim::command().debug_assert();
    let r = Repsim::try_parse_from(["repsim", "theory", "ops", "--out", "x", "--n", "4,8"])
        .expect("parses");
    let Command::Theory(t) = r.command;
    match t.model {
        TheoryModel::Ops(o) => {
            assert_eq!(o.n, vec![4, 8]);
            assert_eq!((o.lambda, o.rounds, o.trials), (0.99, 1000, 500));
            assert_eq!(o.out, PathBuf::from("x"));
        }
        other => panic!("parsed as {other:?}"),
    }
    // The recycled-model options are shared by `recycled`, `convergence` and `coalescing`.
    for model in ["recycled", "convergence", "coalescing"] {
        let r = Repsim::try_parse_from([
            "repsim",
            "theory",
            model,
            "--lambda",
            "0.5",
            "--tau",
            "6.5",
            "--feedback",
            "round-robin",
        ])
        .expect("parses");
        let Command::Theory(t) = r.command;
        let m = match t.model {
            TheoryModel::Recycled(a) => a.model,
            TheoryModel::Convergence(a) => a.model,
            TheoryModel::Coalescing(a) => a.model,
            other => panic!("parsed as {other:?}"),
        };
        let m = models::ModelOptions::from(m);
        let p = m.params(8);
        assert_eq!(
            (p.lambda, p.tau, p.feedback),
            (0.5, 6, Feedback::RoundRobin)
        );
        assert_eq!((m.b, p.ack_every), (None, 1));
    }
}

/// `repsim theory <model>` with no flag runs the library's default options (the paper's).
#[test]
fn the_flags_defaults_are_the_librarys() {
    let parse = |model: &str| {
        let Command::Theory(t) = Repsim::try_parse_from(["repsim", "theory", model])
            .expect("parses")
            .command;
        t.model
    };
    let TheoryModel::Ops(o) = parse("ops") else {
        panic!("ops")
    };
    let (o, d) = (models::OpsOptions::from(o), models::OpsOptions::default());
    assert_eq!(
        (o.out, o.seed, o.n, o.rounds, o.trials),
        (d.out, d.seed, d.n, d.rounds, d.trials)
    );
    assert_eq!(o.lambda, d.lambda);
    let TheoryModel::Recycled(r) = parse("recycled") else {
        panic!("recycled")
    };
    let (r, d) = (
        models::RecycledOptions::from(r),
        models::RecycledOptions::default(),
    );
    assert_eq!(
        (r.out, r.seed, r.n, r.rounds, r.model),
        (d.out, d.seed, d.n, d.rounds, d.model)
    );
    let TheoryModel::Convergence(c) = parse("convergence") else {
        panic!("convergence")
    };
    let (c, d) = (
        models::ConvergenceOptions::from(c),
        models::ConvergenceOptions::default(),
    );
    assert_eq!(
        (c.out, c.n, c.runs, c.rounds, c.model),
        (d.out, d.n, d.runs, d.rounds, d.model)
    );
    let TheoryModel::Coalescing(k) = parse("coalescing") else {
        panic!("coalescing")
    };
    let (k, d) = (
        models::CoalescingOptions::from(k),
        models::CoalescingOptions::default(),
    );
    assert_eq!(
        (k.out, k.n, k.rounds, k.trials, k.ratios, k.model),
        (d.out, d.n, d.rounds, d.trials, d.ratios, d.model)
    );
    let TheoryModel::EvImbalance(e) = parse("ev-imbalance") else {
        panic!("ev-imbalance")
    };
    let (e, d) = (
        models::EvImbalanceOptions::from(e),
        models::EvImbalanceOptions::default(),
    );
    assert_eq!(
        (e.out, e.flows, e.uplinks, e.min_log2, e.max_log2, e.salts),
        (d.out, d.flows, d.uplinks, d.min_log2, d.max_log2, d.salts)
    );
    let TheoryModel::All(a) = parse("all") else {
        panic!("all")
    };
    let (a, d) = (models::AllOptions::from(a), models::AllOptions::default());
    assert_eq!((a.out, a.seed), (d.out, d.seed));
}
