//! Result files: `flows.csv`, `summary.json`, `scenario.toml`, written atomically (temporary
//! file, then rename) so that a half-written result is never mistaken for a finished one.
use std::fs;
use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result};
use repsim::metrics::{FlowRow, RunSummary};

/// Writes `bytes` to `path` via a temporary file in the same directory.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let tmp = path.with_extension(format!(
        "{}.tmp",
        path.extension()
            .map(|e| e.to_string_lossy().into_owned())
            .unwrap_or_default()
    ));
    {
        let mut f =
            fs::File::create(&tmp).with_context(|| format!("creating {}", tmp.display()))?;
        f.write_all(bytes)
            .with_context(|| format!("writing {}", tmp.display()))?;
        f.sync_all().ok();
    }
    fs::rename(&tmp, path)
        .with_context(|| format!("renaming {} to {}", tmp.display(), path.display()))
}

/// `flows.csv`: one row per flow and load balancer; a trailing `class` column only when mixed
/// traffic put some flows in the ECMP background class.
pub fn flows_csv(rows: &[FlowRow]) -> Result<Vec<u8>> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let mixed = rows.iter().any(|r| r.class != "main");
    let mut header = vec![
        "lb",
        "id",
        "src",
        "dst",
        "bytes",
        "start",
        "finish",
        "fct_us",
        "retransmissions",
    ];
    if mixed {
        header.push("class");
    }
    w.write_record(&header)?;
    let opt = |v: Option<f64>| v.map(|x| format!("{x:.6}")).unwrap_or_default();
    for r in rows {
        let mut rec = vec![
            r.lb.clone(),
            r.id.to_string(),
            r.src.to_string(),
            r.dst.to_string(),
            r.bytes.to_string(),
            format!("{:.6}", r.start_us),
            opt(r.finish_us),
            opt(r.fct_us),
            r.retransmissions.to_string(),
        ];
        if mixed {
            rec.push(r.class.to_string());
        }
        w.write_record(&rec)?;
    }
    w.into_inner().context("finishing flows.csv")
}

/// `summary.json`: `{"runs": [...]}`.
pub fn summary_json(runs: &[RunSummary]) -> Result<Vec<u8>> {
    #[derive(serde::Serialize)]
    struct Summary<'a> {
        runs: &'a [RunSummary],
    }
    let mut v = serde_json::to_vec_pretty(&Summary { runs })?;
    v.push(b'\n');
    Ok(v)
}
