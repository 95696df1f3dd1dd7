//! The sweep file (`repsim sweep SWEEP.toml`): a base scenario, overrides common to every
//! point, and either axes (expanded as a cartesian product) or an explicit list of points.
//! The format is documented in `docs/sweeps.md`.
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use anyhow::{bail, Context, Result};
use repsim::scenario::Override;
use serde::{Deserialize, Serialize};

/// Axis keys that are not scenario fields: `scenario` picks another base scenario file
/// (relative to the sweep file), `seed` is passed as `repsim run --seed`.
pub const SCENARIO_KEY: &str = "scenario";
/// See [`SCENARIO_KEY`].
pub const SEED_KEY: &str = "seed";

/// A sweep file as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SweepFile {
    /// Base scenario, relative to the sweep file.
    pub scenario: PathBuf,
    /// Name (default: the sweep file's stem); the default output is `results/sweeps/<name>`.
    pub name: Option<String>,
    /// Output directory, relative to the current directory (default `results/sweeps/<name>`).
    pub out: Option<PathBuf>,
    /// Load balancers to run at every point (default: the scenario's `lb`).
    pub lb: Option<Vec<String>>,
    /// What to collect (`scenario`, `all` or `none`; default `none`).
    pub collect: Option<String>,
    /// Overrides applied at every point: `{ "queue.size" = "100pkt" }`.
    #[serde(default)]
    pub set: toml::Table,
    /// Axes, expanded as a cartesian product (the first axis varies slowest).
    #[serde(default)]
    pub axis: Vec<Axis>,
    /// An explicit list of points instead of axes: each a table of KEY = VALUE.
    #[serde(default)]
    pub points: Vec<toml::Table>,
}

/// One axis of a sweep.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Axis {
    /// Dotted path of a scenario field (as for `--set`), or `scenario` / `seed`.
    pub key: String,
    /// Its values, written as in TOML.
    pub values: Vec<toml::Value>,
    /// Names of the values in `sweep.csv` (default: the values themselves).
    pub labels: Option<Vec<String>>,
}

/// One assignment of a point: key, value and the label shown in `sweep.csv`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Assignment {
    /// Dotted key.
    pub key: String,
    /// Value, as TOML text.
    pub value: String,
    /// Its name in `sweep.csv`.
    pub label: String,
}

/// One point of the sweep.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Point {
    /// Index (0-based; the Slurm array index).
    pub index: usize,
    /// The point's assignments, one per column.
    pub values: Vec<Assignment>,
}

/// A loaded sweep: its file, the resolved base scenario, the common overrides and the points.
#[derive(Debug, Serialize, Deserialize)]
pub struct Sweep {
    /// Name.
    pub name: String,
    /// The sweep file (as given).
    pub file: PathBuf,
    /// Base scenario (resolved against the sweep file).
    pub scenario: PathBuf,
    /// Load balancers (none: the scenario's).
    pub lb: Option<Vec<String>>,
    /// `scenario`, `all` or `none`.
    pub collect: String,
    /// Overrides of every point, as `KEY=VALUE` text.
    pub set: Vec<String>,
    /// Column names of the axes, in order.
    pub columns: Vec<String>,
    /// The points.
    pub points: Vec<Point>,
    /// Default output directory.
    pub out: PathBuf,
    /// Set from outside (the Python package on Ctrl-C) to stop the sweep: no point starts
    /// after it is set and running points stop as `--max-wall` stops them.
    #[serde(skip)]
    pub cancel: Option<Arc<AtomicBool>>,
    /// Set from outside (`--threads`): the threads each simulation runs on (0 or 1: one).
    /// A point's simulations then run one after another, each on all of them.
    #[serde(skip)]
    pub threads: u32,
}

/// A value as `--set` would take it (TOML text; strings quoted).
fn value_text(v: &toml::Value) -> String {
    v.to_string()
}

/// A value's label: strings without quotes, anything else as TOML.
fn value_label(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The plain text of a value written as TOML text (a string without its quotes).
fn plain(text: &str) -> Result<String> {
    let table: toml::Table = toml::from_str(&format!("v = {text}"))
        .with_context(|| format!("value {text} is not TOML"))?;
    Ok(table.get("v").map(value_label).unwrap_or_default())
}

impl Sweep {
    /// Reads and expands a sweep file.
    pub fn load(path: &Path) -> Result<Sweep> {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        let file: SweepFile =
            toml::from_str(&text).with_context(|| format!("parsing {}", path.display()))?;
        Self::from_file(path, file)
    }

    /// Expands a parsed sweep file found at `path`.
    pub fn from_file(path: &Path, file: SweepFile) -> Result<Sweep> {
        let ctx = || format!("{}", path.display());
        let base_dir = path.parent().unwrap_or(Path::new("."));
        if !file.axis.is_empty() && !file.points.is_empty() {
            bail!("{}: give either [[axis]] or points, not both", ctx());
        }
        if file.lb.as_ref().is_some_and(|l| l.is_empty()) {
            bail!("{}: lb = []: name at least one load balancer", ctx());
        }
        let collect = file.collect.clone().unwrap_or_else(|| "none".into());
        if !["scenario", "all", "none"].contains(&collect.as_str()) {
            bail!(
                "{}: collect = {collect:?}: use \"scenario\", \"all\" or \"none\"",
                ctx()
            );
        }
        let mut set = Vec::new();
        for (k, v) in &file.set {
            let text = format!("{k}={}", value_text(v));
            Override::parse(&text).map_err(|e| anyhow::anyhow!("{}: set: {e}", ctx()))?;
            set.push(text);
        }
        let (columns, rows) = if file.points.is_empty() {
            expand_axes(&file.axis).with_context(ctx)?
        } else {
            list_points(&file.points)
        };
        let points: Vec<Point> = rows
            .into_iter()
            .enumerate()
            .map(|(index, values)| Point { index, values })
            .collect();
        for p in &points {
            for a in &p.values {
                if a.key != SCENARIO_KEY && a.key != SEED_KEY {
                    Override::parse(&format!("{}={}", a.key, a.value))
                        .map_err(|e| anyhow::anyhow!("{}: point {}: {e}", ctx(), p.index))?;
                }
            }
        }
        let name = file.name.clone().unwrap_or_else(|| {
            path.file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| "sweep".into())
        });
        let out = file
            .out
            .clone()
            .unwrap_or_else(|| Path::new("results").join("sweeps").join(&name));
        Ok(Sweep {
            name,
            file: path.to_path_buf(),
            scenario: base_dir.join(&file.scenario),
            lb: file.lb,
            collect,
            set,
            columns,
            points,
            out,
            cancel: None,
            threads: 1,
        })
    }

    /// The scenario file, seed and overrides of point `p`.
    pub fn resolve(&self, p: &Point) -> Result<(PathBuf, Option<u64>, Vec<Override>)> {
        let mut scenario = self.scenario.clone();
        let mut seed = None;
        let mut set = Vec::new();
        for text in &self.set {
            set.push(Override::parse(text).map_err(anyhow::Error::msg)?);
        }
        let base_dir = self.file.parent().unwrap_or(Path::new("."));
        for a in &p.values {
            match a.key.as_str() {
                // The value, not its label: `labels` may name a scenario file "rpc".
                SCENARIO_KEY => scenario = base_dir.join(plain(&a.value)?),
                SEED_KEY => {
                    seed = Some(plain(&a.value)?.parse().with_context(|| {
                        format!("point {}: seed {:?} is not a number", p.index, a.value)
                    })?)
                }
                _ => set.push(
                    Override::parse(&format!("{}={}", a.key, a.value))
                        .map_err(anyhow::Error::msg)?,
                ),
            }
        }
        Ok((scenario, seed, set))
    }
}

/// The cartesian product of `axes` (first axis slowest): column names and rows.
fn expand_axes(axes: &[Axis]) -> Result<(Vec<String>, Vec<Vec<Assignment>>)> {
    let mut rows: Vec<Vec<Assignment>> = vec![Vec::new()];
    let mut columns = Vec::new();
    for axis in axes {
        if axis.values.is_empty() {
            bail!("axis {}: no values", axis.key);
        }
        if columns.contains(&axis.key) {
            bail!("axis {} appears twice", axis.key);
        }
        if let Some(l) = &axis.labels {
            if l.len() != axis.values.len() {
                bail!(
                    "axis {}: {} labels for {} values",
                    axis.key,
                    l.len(),
                    axis.values.len()
                );
            }
        }
        columns.push(axis.key.clone());
        let mut next = Vec::with_capacity(rows.len() * axis.values.len());
        for row in &rows {
            for (i, v) in axis.values.iter().enumerate() {
                let label = axis
                    .labels
                    .as_ref()
                    .map_or_else(|| value_label(v), |l| l[i].clone());
                let mut r = row.clone();
                r.push(Assignment {
                    key: axis.key.clone(),
                    value: value_text(v),
                    label,
                });
                next.push(r);
            }
        }
        rows = next;
    }
    Ok((columns, rows))
}

/// An explicit list of points; the columns are every key used, sorted.
fn list_points(points: &[toml::Table]) -> (Vec<String>, Vec<Vec<Assignment>>) {
    let mut columns: Vec<String> = points.iter().flat_map(|p| p.keys().cloned()).collect();
    columns.sort();
    columns.dedup();
    let rows = points
        .iter()
        .map(|p| {
            columns
                .iter()
                .filter_map(|k| {
                    p.get(k).map(|v| Assignment {
                        key: k.clone(),
                        value: value_text(v),
                        label: value_label(v),
                    })
                })
                .collect()
        })
        .collect();
    (columns, rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sweep(text: &str) -> Result<Sweep> {
        let file: SweepFile = toml::from_str(text)?;
        Sweep::from_file(Path::new("dir/s.toml"), file)
    }

    #[test]
    fn axes_expand_as_a_product_first_axis_slowest() {
        let s = sweep(
            "scenario = \"x.toml\"\n[[axis]]\nkey = \"transport.evs_size\"\nvalues = [32, 256]\n\
             [[axis]]\nkey = \"cc\"\nvalues = [\"mprdma\", \"nscc\", \"eqds\"]\n",
        )
        .unwrap();
        assert_eq!(s.points.len(), 6);
        assert_eq!(s.columns, ["transport.evs_size", "cc"]);
        let labels: Vec<String> = s
            .points
            .iter()
            .map(|p| format!("{}/{}", p.values[0].label, p.values[1].label))
            .collect();
        assert_eq!(
            labels,
            [
                "32/mprdma",
                "32/nscc",
                "32/eqds",
                "256/mprdma",
                "256/nscc",
                "256/eqds"
            ]
        );
        assert_eq!(s.scenario, Path::new("dir/x.toml"));
        assert_eq!(s.out, Path::new("results/sweeps/s"));
    }

    #[test]
    fn labelled_scenario_and_seed_axes_resolve_to_their_values() {
        let s = sweep(
            "scenario = \"x.toml\"\n[[axis]]\nkey = \"scenario\"\nvalues = [\"../a.toml\"]\n\
             labels = [\"a\"]\n[[axis]]\nkey = \"seed\"\nvalues = [7]\nlabels = [\"seven\"]\n",
        )
        .unwrap();
        assert_eq!(s.points[0].values[0].label, "a");
        let (scn, seed, _) = s.resolve(&s.points[0]).unwrap();
        assert_eq!((scn, seed), (PathBuf::from("dir/../a.toml"), Some(7)));
    }

    #[test]
    fn explicit_points_and_special_keys_resolve() {
        let s = sweep(
            "scenario = \"x.toml\"\nset = { \"queue.size\" = \"50pkt\" }\npoints = [\n\
             { seed = 3, scenario = \"y.toml\" },\n{ \"transport.ack_every\" = \"4pkt\" },\n]\n",
        )
        .unwrap();
        assert_eq!(s.columns, ["scenario", "seed", "transport.ack_every"]);
        let (scn, seed, set) = s.resolve(&s.points[0]).unwrap();
        assert_eq!((scn, seed), (PathBuf::from("dir/y.toml"), Some(3)));
        assert_eq!(set.len(), 1);
        let (scn, seed, set) = s.resolve(&s.points[1]).unwrap();
        assert_eq!((scn, seed), (PathBuf::from("dir/x.toml"), None));
        assert_eq!(set[1].key, "transport.ack_every");
    }

    #[test]
    fn mistakes_are_refused() {
        assert!(sweep("scenario = \"x\"\n[[axis]]\nkey = \"a\"\nvalues = []\n").is_err());
        assert!(sweep("scenario = \"x\"\nbogus = 1\n").is_err());
        assert!(sweep(
            "scenario = \"x\"\npoints = [{ a = 1 }]\n[[axis]]\nkey = \"a\"\nvalues = [1]\n"
        )
        .is_err());
        assert!(
            sweep("scenario = \"x\"\n[[axis]]\nkey = \"a\"\nvalues = [1]\nlabels = []\n").is_err()
        );
    }
}
