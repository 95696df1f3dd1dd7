//! Which binaries ran a figure's simulations and when: read from its points' `run.json`,
//! so that a redraw or a resumed run names the code behind each row.
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Which binaries ran a figure's simulations, read from its points' `run.json`.
#[derive(Debug, Default, PartialEq)]
pub(super) struct Provenance {
    /// Runs (points) found.
    pub(super) total: usize,
    /// Of them, those started by this command.
    pub(super) ran_now: usize,
    /// Their binaries' commits, sorted.
    pub(super) commits: BTreeSet<String>,
    /// Runs whose `run.json` names no commit (written before it did).
    pub(super) unnamed: usize,
}

/// Every `run.json` under `dir` (one per point run), with its bytes.
pub(super) fn run_records(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let path = e.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.file_name().is_some_and(|n| n == "run.json") {
                if let Ok(bytes) = std::fs::read(&path) {
                    found.push((path, bytes));
                }
            }
        }
    }
    found.sort();
    found
}

impl Provenance {
    /// Reads every `run.json` under `dir`; those not in `earlier` (or changed) count as this
    /// command's.
    pub(super) fn scan(dir: &Path, earlier: &[(PathBuf, Vec<u8>)]) -> Provenance {
        let mut p = Provenance::default();
        for (path, bytes) in run_records(dir) {
            let Ok(info) = serde_json::from_slice::<serde_json::Value>(&bytes) else {
                continue;
            };
            p.total += 1;
            if !earlier.iter().any(|(q, b)| *q == path && *b == bytes) {
                p.ran_now += 1;
            }
            match info["repsim_commit"].as_str() {
                Some(c) => {
                    p.commits.insert(c.to_string());
                }
                None => p.unnamed += 1,
            }
        }
        p
    }

    /// The commits as one cell: `a+b` for several; runs that name none are taken to be the
    /// earlier result's (`earlier`), else this binary's when it ran them now.
    pub(super) fn commit(&self, earlier: Option<&str>) -> String {
        let mut all = self.commits.clone();
        if self.unnamed > 0 {
            all.insert(match earlier {
                Some(c) if !c.is_empty() => c.to_string(),
                _ => "unknown".to_string(),
            });
        }
        if all.is_empty() {
            // A figure without simulations (a theory model) is computed by this binary.
            all.insert(repsim_experiment::COMMIT.to_string());
        }
        all.into_iter().collect::<Vec<_>>().join("+")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn provenance_names_the_commits_of_the_runs() {
        let p = Provenance {
            total: 3,
            ran_now: 0,
            commits: ["b2".to_string(), "a1".to_string()].into_iter().collect(),
            unnamed: 1,
        };
        assert_eq!(p.commit(Some("c3")), "a1+b2+c3");
        assert_eq!(
            Provenance::default().commit(None),
            repsim_experiment::COMMIT
        );
    }
}
