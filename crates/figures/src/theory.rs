//! Figures drawn from `repsim theory` models (REPS Figs. 14, 17, 18, 20): the model runs with
//! the paper's parameters (fewer trials at `--scale small`) into the figure's directory.
use std::path::{Path, PathBuf};

use crate::models::{
    run_coalescing, run_ev_imbalance, run_ops, run_recycled, CoalescingOptions, EvImbalanceOptions,
    ModelOptions, OpsOptions, RecycledOptions,
};
use anyhow::Result;
use theory::recycled::Feedback;

use super::model::TheoryModel;

/// The recycled model's defaults (lambda 1, tau = 4 ln n, b = 2.4 ln n, ACK-clocked feedback).
fn model() -> ModelOptions {
    ModelOptions {
        lambda: 1.0,
        tau: None,
        b: None,
        feedback: Feedback::Immediate,
    }
}

/// Runs `m` into `out`; returns the stems of its plots (PNG and SVG) and its data files.
pub fn run(m: TheoryModel, out: &Path, small: bool) -> Result<(Vec<String>, Vec<PathBuf>)> {
    let out = out.to_path_buf();
    Ok(match m {
        TheoryModel::Ops => {
            run_ops(&OpsOptions {
                out: out.clone(),
                seed: 1,
                n: vec![4, 8, 16, 32, 64, 128],
                lambda: 0.99,
                rounds: 1000,
                trials: if small { 50 } else { 500 },
            })?;
            (vec!["ops".into()], vec![out.join("ops.csv")])
        }
        TheoryModel::Recycled => {
            run_recycled(&RecycledOptions {
                out: out.clone(),
                seed: 1,
                n: 5,
                rounds: 200,
                model: model(),
            })?;
            (
                vec![
                    "recycled".into(),
                    "recycled_queues_ops".into(),
                    "recycled_queues_recycled".into(),
                ],
                vec![out.join("recycled.csv")],
            )
        }
        TheoryModel::Coalescing => {
            run_coalescing(&CoalescingOptions {
                out: out.clone(),
                seed: 1,
                n: 32,
                rounds: 1000,
                trials: if small { 10 } else { 50 },
                ratios: vec![1, 2, 4, 8],
                model: model(),
            })?;
            (vec!["coalescing".into()], vec![out.join("coalescing.csv")])
        }
        TheoryModel::EvImbalance => {
            run_ev_imbalance(&EvImbalanceOptions {
                out: out.clone(),
                seed: 1,
                flows: vec![1, 32],
                uplinks: 32,
                min_log2: 4,
                max_log2: 16,
                salts: if small { 50 } else { 500 },
            })?;
            (
                vec!["ev_imbalance".into()],
                vec![out.join("ev_imbalance_summary.csv")],
            )
        }
    })
}

/// Rows of a CSV file as maps from column to cell.
fn rows(path: &Path) -> Option<Vec<std::collections::BTreeMap<String, String>>> {
    let mut r = csv::Reader::from_path(path).ok()?;
    let header = r.headers().ok()?.clone();
    let mut out = Vec::new();
    for rec in r.records() {
        let rec = rec.ok()?;
        out.push(
            header
                .iter()
                .zip(rec.iter())
                .map(|(h, v)| (h.to_string(), v.to_string()))
                .collect(),
        );
    }
    Some(out)
}

/// Median imbalance of 32 flows over `evs` EVs, from `ev_imbalance_summary.csv`.
fn median_imbalance(dir: &Path, evs: &str) -> Option<f64> {
    rows(&dir.join("ev_imbalance_summary.csv"))?
        .iter()
        .find(|r| r.get("flows").map(String::as_str) == Some("32") && r["evs"] == evs)?
        .get("median")?
        .parse()
        .ok()
}

/// Fig. 14: median imbalance of 32 flows over 65536 EVs.
pub fn median_imbalance_32_flows_64k(dir: &Path) -> Option<f64> {
    median_imbalance(dir, "65536")
}

/// Fig. 14: median imbalance of 32 flows over 128 EVs.
pub fn median_imbalance_32_flows_128(dir: &Path) -> Option<f64> {
    median_imbalance(dir, "128")
}

/// Fig. 18: the recycled model's largest queue after round 100, over tau.
pub fn recycled_late_max_over_tau(dir: &Path) -> Option<f64> {
    let tau = model().params(5).tau as f64;
    let max = rows(&dir.join("recycled.csv"))?
        .iter()
        .filter(|r| r["model"] == "recycled" && r["round"].parse::<u32>().is_ok_and(|x| x > 100))
        .filter_map(|r| r["load"].parse::<f64>().ok())
        .fold(0.0, f64::max);
    Some(max / tau)
}
