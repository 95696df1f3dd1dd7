//! The seed corpus: the repository's shipped inputs (`scenarios/*.toml`, `data/...`), read
//! from the checkout, so the tests need nothing outside it.
use std::path::{Path, PathBuf};

use crate::Target;

/// One seed input.
#[derive(Clone, Debug)]
pub struct Seed {
    /// The file it was read from.
    pub path: PathBuf,
    /// Its bytes.
    pub bytes: Vec<u8>,
}

/// Seed inputs per target.
pub struct Corpus {
    seeds: Vec<(Target, Vec<Seed>)>,
}

/// The repository root (two levels above this crate).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The folder and file endings a target's seeds come from.
fn sources(target: Target) -> (&'static str, &'static [&'static str]) {
    match target {
        Target::Scenario => ("scenarios", &["toml"]),
        Target::Topo => ("data/htsim/topologies", &["topo"]),
        Target::Cm => ("data/htsim/connection_matrices", &["cm"]),
        Target::Failures => ("data/htsim/failures", &["txt"]),
        Target::Cdf => ("data/cdf", &["txt", "tcl"]),
    }
}

fn files_under(dir: &Path, ends: &[&str], out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let p = entry?.path();
        if p.is_dir() {
            files_under(&p, ends, out)?;
        } else if p
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| ends.contains(&e))
        {
            out.push(p);
        }
    }
    Ok(())
}

impl Corpus {
    /// Reads every seed under `root` (sorted by path, so input numbers are stable).
    pub fn load(root: &Path) -> Result<Self, String> {
        let mut seeds = Vec::new();
        for target in Target::ALL {
            let (dir, ends) = sources(target);
            let mut paths = Vec::new();
            files_under(&root.join(dir), ends, &mut paths)
                .map_err(|e| format!("{}: {e}", root.join(dir).display()))?;
            paths.sort();
            let list = paths
                .into_iter()
                .map(|path| {
                    let bytes =
                        std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
                    Ok(Seed { path, bytes })
                })
                .collect::<Result<Vec<_>, String>>()?;
            if list.is_empty() {
                return Err(format!(
                    "no seed for {} under {}",
                    target.name(),
                    root.join(dir).display()
                ));
            }
            seeds.push((target, list));
        }
        Ok(Corpus { seeds })
    }

    /// The seeds of `target`.
    pub fn seeds(&self, target: Target) -> &[Seed] {
        self.seeds
            .iter()
            .find(|(t, _)| *t == target)
            .map(|(_, s)| s.as_slice())
            .unwrap_or(&[])
    }
}
