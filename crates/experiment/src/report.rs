//! `repsim report DIR`: one self-contained HTML page (plots as base64 data URIs, summary tables,
//! the resolved scenario) for a run directory written by `repsim run`.
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::files::write_atomic;
use repsim_plot::runs::{self as plots, RunData};

/// Everything `repsim report` is asked for, as plain options.
#[derive(Clone, Debug, Default)]
pub struct ReportRequest {
    /// Run directory (output of `repsim run`).
    pub dir: PathBuf,
    /// HTML file to write (default: DIR/report.html).
    pub out: Option<PathBuf>,
    /// Switch whose uplinks the time-series plots show (default: tor0 if collected, else the
    /// first collected switch with uplinks, e.g. leaf0 on a leaf-spine).
    pub switch: Option<String>,
    /// Print nothing but errors.
    pub quiet: bool,
}

/// Standard base64 (RFC 4648, with padding).
pub fn base64(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut s = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for c in bytes.chunks(3) {
        let n = (c[0] as u32) << 16
            | (*c.get(1).unwrap_or(&0) as u32) << 8
            | *c.get(2).unwrap_or(&0) as u32;
        for i in 0..4 {
            if i <= c.len() {
                s.push(A[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                s.push('=');
            }
        }
    }
    s
}

/// Escapes text for HTML.
pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Records image sizes and script errors into a hidden element once the page has loaded, so
/// that a headless browser's `--dump-dom` can check the page rendered.
pub const SELF_CHECK: &str = r#"<script>
window.__errors = [];
window.addEventListener('error', function (e) { var t = e.target; window.__errors.push(t && t.tagName === 'IMG' ? 'image failed to load: ' + t.alt : String(e.message || e)); }, true);
(function () { var ce = console.error; console.error = function () { window.__errors.push(Array.prototype.join.call(arguments, ' ')); ce.apply(console, arguments); }; })();
window.addEventListener('load', function () {
  var imgs = Array.prototype.map.call(document.images, function (i) { return [i.naturalWidth, i.naturalHeight]; });
  var d = document.createElement('pre'); d.id = 'render-check'; d.hidden = true;
  d.textContent = JSON.stringify({ images: imgs, errors: window.__errors });
  document.body.appendChild(d);
});
</script>"#;

/// The pages' style sheet (report and figure pages).
pub const STYLE: &str = "body{font-family:sans-serif;max-width:1100px;margin:2em auto;color:#222}\
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #bbb;padding:3px 8px;text-align:right}\
th{background:#eee}td:first-child{text-align:left}img{max-width:100%;border:1px solid #ddd}\
figure{margin:1.5em 0}pre{background:#f6f6f6;padding:1em;overflow-x:auto}";

fn summary_table(dir: &Path) -> Result<String> {
    let path = dir.join("summary.json");
    let Ok(bytes) = std::fs::read(&path) else {
        return Ok(String::new());
    };
    let v: serde_json::Value =
        serde_json::from_slice(&bytes).with_context(|| format!("parsing {}", path.display()))?;
    // Wall times live in run.json (summary.json holds only what the inputs determine).
    let info: serde_json::Value = std::fs::read(dir.join("run.json"))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default();
    let wall = |lb: &serde_json::Value| {
        info["runs"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|e| e["lb"] == *lb)
            .and_then(|e| e["wall_s"].as_f64())
            .unwrap_or(0.0)
    };
    let mut s = String::from(
        "<table><tr><th>lb</th><th>flows</th><th>FCT min</th><th>mean</th><th>p99</th><th>max (us)</th>\
         <th>drops</th><th>trims</th><th>ECN marks</th><th>retransmissions</th><th>events</th><th>wall (s)</th></tr>",
    );
    for r in v["runs"].as_array().into_iter().flatten() {
        let f = |k: &str| r["fct_us"][k].as_f64().unwrap_or(0.0);
        let _ = write!(
            s,
            "<tr><td>{}</td><td>{}/{}</td><td>{:.1}</td><td>{:.1}</td><td>{:.1}</td><td>{:.1}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.2}</td></tr>",
            esc(r["lb"].as_str().unwrap_or("?")),
            r["flows_completed"],
            r["flows_total"],
            f("min"),
            f("mean"),
            f("p99"),
            f("max"),
            r["drops"],
            r["trims"],
            r["ecn_marks"],
            r["retransmissions"],
            r["events"],
            wall(&r["lb"])
        );
    }
    Ok(s + "</table>")
}

fn uplink_table(data: &RunData, sw: &str) -> String {
    let mut s = String::from(
        "<table><tr><th>lb</th><th>uplinks</th><th>queue samples &gt; Kmin (all)</th>\
         <th>after 50 us</th><th>min share</th><th>max share</th><th>ECN marks</th><th>max queue (KB)</th></tr>"
    );
    for lb in &data.lbs {
        let ups = data.uplinks(lb, sw);
        if ups.is_empty() {
            continue;
        }
        let pct = |v: Option<f64>| {
            v.map(|x| format!("{:.1} %", 100.0 * x))
                .unwrap_or_else(|| "-".into())
        };
        let shares: Vec<f64> = ups.iter().map(|p| p.uplink_share.unwrap_or(0.0)).collect();
        let _ = write!(
            s,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.3}</td><td>{:.3}</td><td>{}</td><td>{:.1}</td></tr>",
            esc(lb),
            ups.len(),
            pct(data.above_kmin_share(lb, sw, 0.0)),
            pct(data.above_kmin_share(lb, sw, 50.0)),
            shares.iter().copied().fold(f64::INFINITY, f64::min),
            shares.iter().copied().fold(0.0, f64::max),
            ups.iter().map(|p| p.ecn_marks).sum::<u64>(),
            ups.iter().map(|p| p.max_queue_bytes).max().unwrap_or(0) as f64 / 1000.0
        );
    }
    s + "</table>"
}

/// `repsim report`.
pub fn report(args: &ReportRequest) -> Result<()> {
    let dir = &args.dir;
    let data = RunData::load(dir)?;
    let plot_dir = dir.join("plots");
    let plots = plots::write_all(&data, &plot_dir, args.switch.as_deref())?;
    let scenario = std::fs::read_to_string(dir.join("scenario.toml")).unwrap_or_default();
    let run_json = std::fs::read_to_string(dir.join("run.json")).unwrap_or_default();
    let name = scenario
        .lines()
        .find_map(|l| l.strip_prefix("name = "))
        .map(|n| n.trim_matches('"').to_string())
        .unwrap_or_else(|| dir.display().to_string());
    let mut h = String::new();
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>repsim report: {n}</title>\
         <style>{STYLE}</style>{SELF_CHECK}</head><body>\n<h1>repsim report: {n}</h1>\n",
        n = esc(&name)
    );
    if !dir.join(crate::series::MARKER).exists() {
        h += "<p><strong>Warning:</strong> this directory has no completion marker; the run may be unfinished.</p>\n";
    }
    h += "<h2>Summary</h2>\n";
    h += &summary_table(dir)?;
    if let Some(sw) = data.focus_switch(args.switch.as_deref()) {
        let _ = write!(
            h,
            "\n<h2>Uplinks of {}</h2>\n{}",
            esc(&sw),
            uplink_table(&data, &sw)
        );
        h += "<p>Queue samples: one per data packet arriving at the port (occupancy before admission, \
              including the packet on the wire); Kmin is the port's ECN threshold.</p>\n";
    } else {
        h += "<p>No per-port time series in this run (add a <code>[collect]</code> section or run with \
              <code>--collect all</code>).</p>\n";
    }
    h += "<h2>Plots</h2>\n";
    for p in &plots {
        let png = std::fs::read(&p.png).with_context(|| format!("reading {}", p.png.display()))?;
        let svg_name = p
            .svg
            .file_name()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let _ = writeln!(
            h,
            "<figure><img alt=\"{t}\" src=\"data:image/png;base64,{b}\"><figcaption>{t} \
             (SVG: plots/{s})</figcaption></figure>",
            t = esc(&p.title),
            b = base64(&png),
            s = esc(&svg_name)
        );
    }
    let _ = write!(
        h,
        "<h2>Scenario (resolved)</h2>\n<pre>{}</pre>\n",
        esc(&scenario)
    );
    if !run_json.is_empty() {
        let _ = write!(h, "<h2>run.json</h2>\n<pre>{}</pre>\n", esc(&run_json));
    }
    h += "</body></html>\n";
    let out = args.out.clone().unwrap_or_else(|| dir.join("report.html"));
    write_atomic(&out, h.as_bytes())?;
    if !args.quiet {
        println!("{} ({} plots)", out.display(), plots.len());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_rfc4648() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"foobar"), "Zm9vYmFy");
    }
}
