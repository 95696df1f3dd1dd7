//! `FIGURES.md`: the table of every figure's claims (paper, ours, ratio, scale, wall time,
//! commit), the total wall time, the matrix rows without a figure and the plots.
use std::fmt::Write as _;
use std::path::Path;

use anyhow::{Context, Result};

use super::draw::{self, FigureResult};
use super::model::Figure;
use super::{rows, FIGURES};

/// The opening of `FIGURES.md`, down to its table's header.
pub(super) const TABLE_HEAD: &str = "# Figures: our results against the papers'\n\n\
     Written by `repsim figure all --scale paper --table FIGURES.md --plots docs/figures` (one\n\
     figure's rows: `repsim figure ID --scale paper --table FIGURES.md --plots docs/figures`):\n\
     one row per claim with the paper's number, ours and their ratio, the scale it ran at, the\n\
     wall time of the command that ran its simulations on the machine that ran it, and the\n\
     commit of the binary. The plots follow the table. Small-scale runs (what CI checks) are\n\
     not comparable to the paper and are not listed here. Rows far from the paper's number are\n\
     set beside the reference simulators' runs of the same setup in `docs/fidelity.md`.\n\n\
     | id | figure | scale | quantity | paper | ours | ours / paper | wall | commit |\n\
     |---|---|---|---|---|---|---|---|---|\n";

/// Where the rows without a figure start.
pub(super) const TABLE_TAIL: &str = "\nRows of the reproduction matrix without a figure yet:";

/// A wall time for the table: seconds, minutes or hours.
pub(super) fn wall(s: f64) -> String {
    match s {
        s if s < 120.0 => format!("{s:.0} s"),
        s if s < 7200.0 => format!("{:.0} min", s / 60.0),
        s => format!("{:.1} h", s / 3600.0),
    }
}

/// The table rows of figure `f` (its result `r`, if it ran).
pub(super) fn figure_rows(f: &Figure, r: Option<&FigureResult>) -> String {
    let mut s = String::new();
    match r {
        None => {
            let _ = writeln!(
                s,
                "| {} | {} | - | not run at this scale | | | | | |",
                f.id, f.paper
            );
        }
        Some(r) if r.claims.is_empty() => {
            let _ = writeln!(
                s,
                "| {} | {} | {} | no number stated (shape of the curves) | | | | {} | {} |",
                f.id,
                f.paper,
                r.scale,
                wall(r.wall_s),
                r.commit
            );
        }
        Some(r) => {
            for c in &r.claims {
                let _ = writeln!(
                    s,
                    "| {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                    f.id,
                    f.paper,
                    r.scale,
                    c.what,
                    c.paper_cell(),
                    c.ours.map_or("-".into(), draw::num),
                    c.ratio_cell(),
                    wall(r.wall_s),
                    r.commit
                );
            }
        }
    }
    s
}

/// The rows of the reproduction matrix without a figure, as the table's last section.
pub(super) fn table_tail() -> String {
    let mut s = format!("{TABLE_TAIL}\n\n| id | figure | status |\n|---|---|---|\n");
    for r in rows::ROWS {
        let _ = writeln!(s, "| {} | {} | {} |", r.id, r.paper, r.status);
    }
    s
}

/// The Markdown table of every figure's result against the paper's (`FIGURES.md`).
pub(super) fn table(results: &[(&Figure, Option<FigureResult>)]) -> String {
    let mut s = String::from(TABLE_HEAD);
    for (f, r) in results {
        s += &figure_rows(f, r.as_ref());
    }
    s + &table_tail()
}

/// `existing` (a `FIGURES.md`) with figure `f`'s rows replaced by those of `r`, in figure
/// order; rows of other figures are kept as they are (an older table's rows get empty wall and
/// commit cells), and a figure without any gets a "not run" row.
pub(super) fn update_table(existing: &str, f: &Figure, r: &FigureResult) -> String {
    let id_of = |line: &str| -> Option<String> {
        let rest = line.strip_prefix("| ")?;
        Some(rest.split(" |").next()?.to_string())
    };
    let body = existing.split(TABLE_TAIL).next().unwrap_or("");
    let mut kept: Vec<(String, String)> = Vec::new();
    for line in body.lines() {
        let Some(id) = id_of(line) else { continue };
        if id == "id" || id.starts_with("---") || id == f.id {
            continue;
        }
        let cells = line.matches(" |").count();
        let line = if cells < 9 {
            format!("{line}{}", " |".repeat(9 - cells))
        } else {
            line.to_string()
        };
        kept.push((id, line));
    }
    let mut s = String::from(TABLE_HEAD);
    for g in FIGURES {
        if g.id == f.id {
            s += &figure_rows(f, Some(r));
            continue;
        }
        let rows: Vec<&String> = kept
            .iter()
            .filter(|(id, _)| id == g.id)
            .map(|(_, l)| l)
            .collect();
        if rows.is_empty() {
            s += &figure_rows(g, None);
        }
        for line in rows {
            s += line;
            s.push('\n');
        }
    }
    // Rows of figures this binary does not know are kept, last.
    for (id, line) in &kept {
        if !FIGURES.iter().any(|g| g.id == id) {
            s += line;
            s.push('\n');
        }
    }
    s + &table_tail()
}

/// Where the plots section starts.
const PLOTS_HEAD: &str = "\n## Plots\n";

/// Where the total wall time line starts.
const TOTAL_HEAD: &str = "\nTotal wall time of the figures above: ";

/// Seconds in a wall cell written by [`wall`] (`12 s`, `34 min`, `1.5 h`).
pub(super) fn parse_wall(cell: &str) -> Option<f64> {
    let (n, unit) = cell.trim().split_once(' ')?;
    let n: f64 = n.parse().ok()?;
    match unit {
        "s" => Some(n),
        "min" => Some(n * 60.0),
        "h" => Some(n * 3600.0),
        _ => None,
    }
}

/// The sum of the figures' wall times in a table's rows (each figure counted once).
pub(super) fn total_wall(table: &str) -> f64 {
    let mut seen: Vec<&str> = Vec::new();
    let mut total = 0.0;
    for line in table.lines().filter(|l| l.starts_with("| ")) {
        let cells: Vec<&str> = line.split(" | ").collect();
        let id = cells[0].trim_start_matches("| ");
        if cells.len() < 9 || seen.contains(&id) {
            continue;
        }
        if let Some(w) = parse_wall(cells[7]) {
            seen.push(id);
            total += w;
        }
    }
    total
}

/// The plots of figure `id` in `dir` (file names, sorted).
pub(super) fn plots_of(dir: &Path, id: &str) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| {
            n.strip_suffix(".svg")
                .is_some_and(|stem| stem == id || stem.starts_with(&format!("{id}-")))
        })
        .collect();
    names.sort();
    names
}

/// Copies figure `id`'s plots (`plots`, in `from`) into `to`, named `<id>-...` where they
/// are not already.
pub(super) fn copy_plots(id: &str, plots: &[String], from: &Path, to: &Path) -> Result<()> {
    std::fs::create_dir_all(to).with_context(|| format!("creating {}", to.display()))?;
    for p in plots {
        let name = if p.starts_with(id) {
            p.clone()
        } else {
            format!("{id}-{p}")
        };
        std::fs::copy(from.join(p), to.join(&name))
            .with_context(|| format!("copying {} to {}", from.join(p).display(), to.display()))?;
    }
    Ok(())
}

/// `table` (rows and the list of rows without a figure) finished with the total wall time
/// and the plots found in `plots` (a directory, linked relative to the table's `base`).
pub(super) fn finish_table(table: &str, plots: &Path, base: &Path) -> String {
    let body = table.split(TOTAL_HEAD).next().unwrap_or("");
    let body = body.split(TABLE_TAIL).next().unwrap_or("");
    let rest = table
        .split_once(TABLE_TAIL)
        .map_or(String::new(), |(_, r)| format!("{TABLE_TAIL}{r}"));
    let tail = rest.split(PLOTS_HEAD).next().unwrap_or("").to_string();
    let tail = if tail.is_empty() { table_tail() } else { tail };
    let mut s = body.trim_end().to_string();
    s.push('\n');
    let not_run: Vec<&str> = body
        .lines()
        .filter(|l| l.contains("| not run at this scale |"))
        .filter_map(|l| l.strip_prefix("| ")?.split(" |").next())
        .collect();
    let missing = if not_run.is_empty() {
        String::new()
    } else {
        format!("; not run at this scale: {}", not_run.join(", "))
    };
    let _ = writeln!(
        s,
        "{TOTAL_HEAD}{} (the sum of the wall column, each figure once{missing}).",
        wall(total_wall(body))
    );
    s += &tail;
    let link = plots.strip_prefix(base).unwrap_or(plots);
    let mut section = String::new();
    for f in FIGURES {
        let names = plots_of(plots, f.id);
        if names.is_empty() {
            continue;
        }
        let _ = writeln!(section, "\n### {} ({}): {}\n", f.id, f.paper, f.title);
        for n in names {
            let _ = writeln!(section, "![{n}]({}/{n})", link.display());
        }
    }
    if !section.is_empty() {
        s += PLOTS_HEAD;
        s += &section;
    }
    s
}

/// Writes the table `t`: every figure of `results` (`whole`: the table is only theirs, else
/// their rows replace their own in the existing table), then the total and the plots in
/// `plots` (default: `docs/figures` beside the table).
pub(super) fn write_table(
    t: &Path,
    results: &[(&Figure, Option<FigureResult>)],
    whole: bool,
    plots: Option<&Path>,
) -> Result<()> {
    let mut text = if whole {
        table(results)
    } else {
        match std::fs::read_to_string(t) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(e).with_context(|| format!("reading {}", t.display())),
        }
    };
    if !whole {
        for (f, r) in results {
            if let Some(r) = r {
                text = update_table(&text, f, r);
            }
        }
    }
    let base = t.parent().unwrap_or(Path::new(""));
    let default_plots = base.join("docs").join("figures");
    let text = finish_table(&text, plots.unwrap_or(&default_plots), base);
    repsim_experiment::files::write_atomic(t, text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Figure;

    fn result(id: &str, ours: f64) -> FigureResult {
        FigureResult {
            id: id.into(),
            scale: "paper".into(),
            finished_unix_s: 0,
            wall_s: 4000.0,
            commit: "abc1234".into(),
            plots: vec![],
            data: vec![],
            claims: vec![draw::Checked {
                what: "a number".into(),
                paper: 2.0,
                ours: Some(ours),
                ratio: Some(ours / 2.0),
                bound: None,
                sign: Default::default(),
                note: None,
            }],
        }
    }

    fn figure(id: &str) -> &'static Figure {
        FIGURES.iter().find(|f| f.id == id).unwrap()
    }

    #[test]
    fn one_figures_rows_replace_its_own_and_keep_the_others() {
        let (a, b) = (figure("reps-fig4"), figure("laps-table1"));
        let first = update_table("", b, &result(b.id, 3.0));
        assert!(first.starts_with(TABLE_HEAD) && first.contains(TABLE_TAIL));
        assert!(first.contains("| laps-table1 | LAPS Table 1 | paper | a number | 2.000 | 3.000 | 1.50 | 67 min | abc1234 |"), "{first}");
        // Another figure goes before it (figure order), and re-running the first replaces
        // its row.
        let both = update_table(&first, a, &result(a.id, 1.0));
        let again = update_table(&both, b, &result(b.id, 5.0));
        let rows: Vec<&str> = again
            .lines()
            .filter(|l| l.starts_with("| reps-fig4 |") || l.starts_with("| laps-table1 |"))
            .collect();
        assert_eq!(rows.len(), 2, "{again}");
        assert!(
            rows[0].starts_with("| reps-fig4 |") && rows[1].contains("| 5.000 |"),
            "{again}"
        );
        assert_eq!(again.matches("Rows of the reproduction matrix").count(), 1);
        // A table of the older form (no wall and commit columns) keeps its rows, padded.
        let old = "| id | figure | scale | quantity | paper | ours | ours / paper |\n|---|---|---|---|---|---|---|\n| reps-fig2 | REPS Fig. 2 | small | x | 1.0 | 1.0 | 1.00 |\n";
        let up = update_table(old, b, &result(b.id, 3.0));
        assert!(
            up.contains("| reps-fig2 | REPS Fig. 2 | small | x | 1.0 | 1.0 | 1.00 | | |\n"),
            "{up}"
        );
    }

    #[test]
    fn the_table_ends_with_its_total_and_the_plots_found() {
        let dir = std::env::temp_dir().join(format!("repsim-table-{}", std::process::id()));
        let plots = dir.join("docs").join("figures");
        std::fs::create_dir_all(&plots).unwrap();
        for name in [
            "reps-fig4.svg",
            "reps-fig12-a.svg",
            "reps-fig1.svg",
            "x.png",
        ] {
            std::fs::write(plots.join(name), "<svg/>").unwrap();
        }
        let (a, b) = (figure("reps-fig4"), figure("laps-table1"));
        let t = update_table(
            &update_table("", a, &result(a.id, 1.0)),
            b,
            &result(b.id, 3.0),
        );
        let done = finish_table(&t, &plots, &dir);
        // Each figure's wall counted once: 4000 s + 4000 s.
        assert!(
            done.contains("Total wall time of the figures above: 2.2 h"),
            "{done}"
        );
        assert!(
            done.contains("![reps-fig4.svg](docs/figures/reps-fig4.svg)"),
            "{done}"
        );
        // reps-fig1 is no figure of the registry and reps-fig12's plot is not reps-fig1's.
        assert!(
            done.contains("reps-fig12-a.svg") && !done.contains("(docs/figures/reps-fig1.svg)")
        );
        assert!(!done.contains("x.png"));
        // Finishing again changes nothing, and a row update keeps one total and one section.
        assert_eq!(finish_table(&done, &plots, &dir), done);
        let again = finish_table(&update_table(&done, a, &result(a.id, 2.0)), &plots, &dir);
        assert_eq!(again.matches("Total wall time").count(), 1, "{again}");
        assert_eq!(again.matches("## Plots").count(), 1, "{again}");
        assert_eq!(again.matches("Rows of the reproduction matrix").count(), 1);
        assert_eq!(parse_wall("1.5 h"), Some(5400.0));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_bound_shows_as_one_and_says_whether_ours_keeps_it() {
        let c = |ours: f64, bound| draw::Checked {
            what: "x".into(),
            paper: 1.0,
            ours: Some(ours),
            ratio: Some(ours),
            bound,
            sign: Default::default(),
            note: None,
        };
        let at_most = c(0.39, Some(draw::Bound::AtMost));
        assert_eq!(
            (at_most.paper_cell(), at_most.ratio_cell()),
            ("<= 1.000".into(), "0.39 (holds)".into())
        );
        let at_least = c(0.91, Some(draw::Bound::AtLeast));
        assert_eq!(
            (at_least.paper_cell(), at_least.ratio_cell()),
            (">= 1.000".into(), "0.91 (fails)".into())
        );
        assert_eq!(c(0.91, None).ratio_cell(), "0.91");
    }
}
