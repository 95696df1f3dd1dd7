//! Flow-size distributions from CDF files (`data/cdf/`), in every format shipped there:
//!
//! - percent: `<size in bytes> <CDF in percent>` per line (HPCC / ConWeave generators);
//! - fraction: `<size> <CDF in 0..1>`, any whitespace (ConWeave and LAPS workloads);
//! - ns-2 `.tcl` style: `<size> 1 <CDF fraction>` (the middle column carries nothing).
//!
//! The scale is read from the last point (above 1: percent). Sizes and CDF values must not
//! decrease; a repeated size is a point mass (`9000 0` then `9000 0.15`). Sampling follows
//! both reference generators: u uniform in [first CDF, last CDF], the first point whose CDF
//! is at least u, and the size interpolated linearly from the previous point. The mean is
//! that of the same piecewise-linear distribution (the generators' load-to-rate conversion),
//! normalised by the CDF range: the LAPS code's mean forgets to divide percent files by 100,
//! which made its offered load 1 % of the nominal one for those files; we do not copy that.
use crate::engine::Rng;

/// A flow-size distribution.
#[derive(Clone, Debug, PartialEq)]
pub struct SizeCdf {
    /// (size in bytes, cumulative probability scaled to 0..=1) in file order.
    points: Vec<(f64, f64)>,
}

/// Why a CDF file was rejected: the line (1-based; 0 for the file as a whole) and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CdfError {
    /// Line of the file (0: the whole file).
    pub line: usize,
    /// What is wrong and what is allowed.
    pub message: String,
}

impl std::fmt::Display for CdfError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.line == 0 {
            write!(f, "{}", self.message)
        } else {
            write!(f, "line {}: {}", self.line, self.message)
        }
    }
}

impl SizeCdf {
    /// Parses a CDF file's text (see the module docs for the formats); blank lines and lines
    /// starting with `#` are skipped.
    pub fn parse(text: &str) -> Result<Self, CdfError> {
        let mut raw: Vec<(f64, f64, usize)> = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let n = i + 1;
            let l = line.trim();
            if l.is_empty() || l.starts_with('#') {
                continue;
            }
            let cols: Vec<&str> = l.split_whitespace().collect();
            let (size, cdf) = match cols.as_slice() {
                [size, cdf] => (*size, *cdf),
                [size, "1", cdf] => (*size, *cdf),
                _ => {
                    return Err(CdfError {
                        line: n,
                        message: format!(
                            "expected '<size> <cdf>' or '<size> 1 <cdf>', found '{l}'"
                        ),
                    })
                }
            };
            let number = |text: &str, what: &str| -> Result<f64, CdfError> {
                match text.parse::<f64>() {
                    Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
                    _ => Err(CdfError {
                        line: n,
                        message: format!("{what} '{text}' is not a non-negative number"),
                    }),
                }
            };
            raw.push((number(size, "size")?, number(cdf, "CDF value")?, n));
        }
        let Some(&(_, last_cdf, _)) = raw.last() else {
            return Err(CdfError {
                line: 0,
                message: "no points (want lines of '<size in bytes> <cdf>')".into(),
            });
        };
        if raw.len() < 2 {
            return Err(CdfError {
                line: raw[0].2,
                message: "a distribution needs at least two points".into(),
            });
        }
        let scale = if last_cdf > 1.0 { 100.0 } else { 1.0 };
        if (last_cdf - scale).abs() > 1e-6 * scale {
            return Err(CdfError {
                line: raw[raw.len() - 1].2,
                message: format!(
                    "the last CDF value must be 1 (fraction) or 100 (percent), not {last_cdf}"
                ),
            });
        }
        for w in raw.windows(2) {
            let ((s0, c0, _), (s1, c1, n)) = (w[0], w[1]);
            if s1 < s0 {
                return Err(CdfError {
                    line: n,
                    message: format!("sizes must not decrease ({s1} after {s0})"),
                });
            }
            if c1 < c0 {
                return Err(CdfError {
                    line: n,
                    message: format!("CDF values must not decrease ({c1} after {c0})"),
                });
            }
        }
        if raw[0].1 >= last_cdf {
            return Err(CdfError {
                line: raw[0].2,
                message: "the CDF never rises: every point has the same value".into(),
            });
        }
        Ok(SizeCdf {
            points: raw.into_iter().map(|(s, c, _)| (s, c / scale)).collect(),
        })
    }

    /// Reads and parses a CDF file; the message names the file and the line.
    pub fn load(path: &std::path::Path) -> Result<Self, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        Self::parse(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// The mean size in bytes of the piecewise-linear distribution.
    pub fn mean(&self) -> f64 {
        let range = self.points[self.points.len() - 1].1 - self.points[0].1;
        self.points
            .windows(2)
            .map(|w| (w[0].0 + w[1].0) / 2.0 * (w[1].1 - w[0].1))
            .sum::<f64>()
            / range
    }

    /// The coefficient of variation (standard deviation over mean) of the sizes: how many
    /// flows a trace needs before its offered load settles.
    pub fn variation(&self) -> f64 {
        let range = self.points[self.points.len() - 1].1 - self.points[0].1;
        let second = self
            .points
            .windows(2)
            .map(|w| {
                (w[0].0 * w[0].0 + w[0].0 * w[1].0 + w[1].0 * w[1].0) / 3.0 * (w[1].1 - w[0].1)
            })
            .sum::<f64>()
            / range;
        let mean = self.mean();
        (second - mean * mean).max(0.0).sqrt() / mean
    }

    /// The largest size.
    pub fn max(&self) -> f64 {
        self.points[self.points.len() - 1].0
    }

    /// The size at cumulative probability `u` (clamped to the CDF's range).
    pub fn quantile(&self, u: f64) -> f64 {
        let first = self.points[0];
        if u <= first.1 {
            return first.0;
        }
        // The first point whose CDF reaches u (a point mass is taken as a whole).
        let i = self.points.partition_point(|p| p.1 < u);
        let Some(&(s1, c1)) = self.points.get(i) else {
            return self.max();
        };
        let (s0, c0) = self.points[i - 1];
        if c1 <= c0 {
            return s1;
        }
        s0 + (s1 - s0) * (u - c0) / (c1 - c0)
    }

    /// A random size in whole bytes (at least 1).
    pub fn sample(&self, rng: &mut Rng) -> u64 {
        let lo = self.points[0].1;
        let hi = self.points[self.points.len() - 1].1;
        let u = lo + (hi - lo) * rng.unit();
        (self.quantile(u).round() as u64).max(1)
    }
}

/// The folder of the shipped CDF files.
#[cfg(test)]
pub(crate) fn shipped_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/cdf")
}

/// Every shipped CDF file (its name and distribution), subfolders included.
#[cfg(test)]
pub(crate) fn shipped() -> Vec<(String, SizeCdf)> {
    let mut out = Vec::new();
    let mut dirs = vec![shipped_dir()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("data/cdf ships with the repository") {
            let path = entry.expect("a readable entry").path();
            let name = path
                .file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned();
            if path.is_dir() {
                dirs.push(path);
            } else if name.ends_with(".txt") || name.ends_with(".tcl") {
                let c = SizeCdf::load(&path).unwrap_or_else(|e| panic!("{e}"));
                out.push((path.display().to_string(), c));
            }
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cdf(text: &str) -> SizeCdf {
        SizeCdf::parse(text).unwrap()
    }

    fn err(text: &str) -> String {
        SizeCdf::parse(text).unwrap_err().to_string()
    }

    #[test]
    fn reads_percent_fraction_and_tcl_alike() {
        let p = cdf("0 0\n1000 50\n3000 100\n");
        let f = cdf("0   0\n1000  0.5\n3000 1\n");
        let t = cdf("0 1 0\n1000 1 0.5\n3000 1 1.0\n");
        assert_eq!(p, f);
        assert_eq!(f, t);
        // Uniform 0-1000 half the time, 1000-3000 the other half.
        assert!((p.mean() - (0.5 * 500.0 + 0.5 * 2000.0)).abs() < 1e-9);
        // Second moment: 0.5 x 1000^2/3 + 0.5 x (1000^2 + 3000 x 1000 + 3000^2)/3.
        let second: f64 = 0.5 * 1e6 / 3.0 + 0.5 * 13e6 / 3.0;
        let cv = (second - 1250.0 * 1250.0).sqrt() / 1250.0;
        assert!((p.variation() - cv).abs() < 1e-9);
        assert_eq!(p.quantile(0.25), 500.0);
        assert_eq!(p.quantile(0.75), 2000.0);
        assert_eq!(p.quantile(1.0), 3000.0);
    }

    #[test]
    fn repeated_sizes_are_point_masses() {
        // 15 % exactly 9000 B, then uniform to 19000 B.
        let c = cdf("9000 0\n9000 0.15\n19000 1\n");
        assert_eq!(c.quantile(0.1), 9000.0);
        assert_eq!(c.quantile(0.15), 9000.0);
        assert!((c.quantile(0.575) - 14000.0).abs() < 1e-6);
        assert!((c.mean() - (0.15 * 9000.0 + 0.85 * 14000.0)).abs() < 1e-6);
        let mut rng = Rng::new(3);
        let at_mass = (0..20_000).filter(|_| c.sample(&mut rng) == 9000).count();
        assert!((2700..3300).contains(&at_mass), "{at_mass}");
    }

    #[test]
    fn bad_files_name_the_line_and_the_rule() {
        assert!(err("").contains("no points"));
        assert!(err("0 0\n").contains("at least two"));
        assert!(err("0 0\n100 0.5\n50 1\n").starts_with("line 3: sizes must not decrease"));
        assert!(err("0 0\n100 0.6\n200 0.5\n300 1\n").starts_with("line 3: CDF values"));
        assert!(err("0 0\n100 0.5\n").contains("must be 1 (fraction) or 100 (percent)"));
        assert!(err("0 0\n100 x\n200 1\n").starts_with("line 2: CDF value 'x'"));
        assert!(err("0 0\n-5 0.5\n200 1\n").contains("size '-5'"));
        assert!(err("0 0\n5 7 0.5\n200 1\n").starts_with("line 2: expected"));
        assert!(err("0 1\n5 1\n").contains("never rises"));
        assert!(err("0 0\nnan 0.5\n1 1\n").contains("not a non-negative number"));
    }

    #[test]
    fn sampled_means_match_every_shipped_file() {
        let dir = shipped_dir();
        let mut checked = 0;
        for (name, c) in shipped() {
            let mut rng = Rng::new(7);
            let n = 400_000;
            let mean = (0..n).map(|_| c.sample(&mut rng) as f64).sum::<f64>() / n as f64;
            let tolerance = if c.max() / c.mean() > 200.0 {
                0.05
            } else {
                0.03
            };
            assert!(
                (mean / c.mean() - 1.0).abs() < tolerance,
                "{name}: sampled mean {mean:.0} vs {:.0}",
                c.mean()
            );
            checked += 1;
        }
        assert!(
            checked >= 15,
            "only {checked} CDF files found in {}",
            dir.display()
        );
        // The piecewise-linear means the generators use to turn a load into a rate.
        for (file, mean) in [
            ("WebSearch_distribution.txt", 1_711_250.0),
            ("DCTCP_CDF.txt", 1_711_250.0),
            ("AliStorage2019.txt", 40_869.8),
            ("FbHdp2015.txt", 121_848.9),
            ("VL2_CDF.txt", 12_658_198.6),
            ("search.txt", 1_710_004.4),
        ] {
            let c = SizeCdf::load(&dir.join(file)).unwrap();
            assert!((c.mean() - mean).abs() < 0.1, "{file}: {}", c.mean());
        }
    }
}
