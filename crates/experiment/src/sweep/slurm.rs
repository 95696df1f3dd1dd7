//! `repsim sweep FILE --emit slurm`: a manifest of the points and a Slurm job-array script
//! whose task i runs point i (`repsim sweep FILE --point $SLURM_ARRAY_TASK_ID`).
use std::path::Path;

use anyhow::{Context, Result};

use super::merge::{point_dir, write_manifest};
use super::spec::Sweep;
use crate::files::write_atomic;

/// Quotes `s` for bash (single quotes; an embedded quote closes, escapes and reopens).
fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// `manifest.csv`: point index, its directory and its axis values.
fn manifest_csv(sweep: &Sweep, out: &Path) -> String {
    let mut csv = String::from("point,dir");
    for c in &sweep.columns {
        csv += &format!(",{c}");
    }
    csv += "\n";
    for p in &sweep.points {
        csv += &format!("{},{}", p.index, point_dir(out, p.index).display());
        for a in &p.values {
            csv += &format!(",{}", a.label.replace(',', ";"));
        }
        csv += "\n";
    }
    csv
}

/// The job-array script for `sweep` (file `sweep_file`, outputs in `out`, both absolute).
pub fn script(sweep: &Sweep, sweep_file: &Path, out: &Path, repsim: &Path) -> String {
    let last = sweep.points.len().saturating_sub(1);
    let name = sweep
        .name
        .replace(|c: char| !c.is_ascii_alphanumeric() && c != '-', "_");
    format!(
        "#!/usr/bin/env bash\n\
         # Slurm job array for the repsim sweep {name}: task i runs point i of the sweep.\n\
         # Submit with `sbatch {script}`; afterwards `repsim sweep merge {out_q}` writes sweep.csv.\n\
         # Points already finished (run.complete present) are skipped, so resubmitting is safe.\n\
         #SBATCH --job-name=repsim-{name}\n\
         #SBATCH --array=0-{last}\n\
         #SBATCH --ntasks=1\n\
         #SBATCH --cpus-per-task=1\n\
         #SBATCH --output={out}/slurm-%A_%a.out\n\
         set -euo pipefail\n\
         : \"${{SLURM_ARRAY_TASK_ID:?set by Slurm for array jobs; set it by hand to run one task}}\"\n\
         REPSIM=\"${{REPSIM:-{repsim}}}\"\n\
         exec \"$REPSIM\" sweep {file} --out {out_q} --point \"$SLURM_ARRAY_TASK_ID\" --quiet\n",
        script = out.join("sweep.slurm").display(),
        out = out.display(),
        out_q = shell_quote(&out.display().to_string()),
        repsim = repsim.display(),
        file = shell_quote(&sweep_file.display().to_string()),
    )
}

/// Writes `sweep.json`, `manifest.csv` and `sweep.slurm` into `out`; returns the script's path.
pub fn emit(sweep: &Sweep, out: &Path) -> Result<std::path::PathBuf> {
    write_manifest(sweep, out)?;
    let out_abs = out
        .canonicalize()
        .with_context(|| format!("resolving {}", out.display()))?;
    let file_abs = sweep
        .file
        .canonicalize()
        .with_context(|| format!("resolving {}", sweep.file.display()))?;
    let repsim = std::env::current_exe().context("locating the repsim binary")?;
    write_atomic(
        &out.join("manifest.csv"),
        manifest_csv(sweep, &out_abs).as_bytes(),
    )?;
    let path = out.join("sweep.slurm");
    write_atomic(
        &path,
        script(sweep, &file_abs, &out_abs, &repsim).as_bytes(),
    )?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
            .with_context(|| format!("making {} executable", path.display()))?;
    }
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::shell_quote;

    #[test]
    fn quotes_survive_bash() {
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
    }
}
