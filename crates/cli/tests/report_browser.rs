//! Opens `repsim report`'s page in headless Chromium and checks that it renders: every image has
//! a non-zero natural size and no script error or `console.error` happened. Takes a screenshot
//! into `target/tmp/report_browser/`.
//!
//! The page records `{images: [[w, h], ...], errors: [...]}` in a hidden `#render-check` element
//! on `load`; `chromium --headless --dump-dom` prints the DOM after load, which we parse.
//! Without Chromium the tests fail (with or without `CI` set) unless `REPSIM_SKIP_BROWSER_TESTS=1`
//! opts out, and then they skip saying so (`.ci/run` installs the Debian packages `chromium` and
//! `chromium-driver`).
mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{repsim_ok, run_micro};

fn find_chromium() -> Option<PathBuf> {
    let names = [
        "chromium",
        "chromium-browser",
        "google-chrome",
        "google-chrome-stable",
    ];
    let path = std::env::var_os("PATH")?;
    for dir in std::env::split_paths(&path) {
        for n in names {
            let p = dir.join(n);
            if p.is_file() {
                return Some(p);
            }
        }
    }
    None
}

/// Runs chromium headless with a hard time limit; returns (stdout, stderr).
fn chromium(bin: &Path, args: &[String], limit: Duration) -> (String, String) {
    let profile = tempfile::tempdir().unwrap();
    // Output goes to files, not pipes: chromium is chatty and a full pipe would block it.
    let out_path = profile.path().join("stdout.txt");
    let err_path = profile.path().join("stderr.txt");
    let mut child = Command::new(bin)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(args)
        .stdout(Stdio::from(std::fs::File::create(&out_path).unwrap()))
        .stderr(Stdio::from(std::fs::File::create(&err_path).unwrap()))
        .spawn()
        .expect("start chromium");
    let start = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium did not finish within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let read =
        |p: &Path| String::from_utf8_lossy(&std::fs::read(p).unwrap_or_default()).into_owned();
    (read(&out_path), read(&err_path))
}

/// Loads `page` in headless Chromium and returns the `#render-check` record and stderr.
fn render_check(bin: &Path, page: &Path) -> (serde_json::Value, String) {
    let url = format!("file://{}", page.canonicalize().unwrap().display());
    let (dom, stderr) = chromium(
        bin,
        &[
            "--virtual-time-budget=10000".into(),
            "--dump-dom".into(),
            url,
        ],
        Duration::from_secs(90),
    );
    let start = dom.find("id=\"render-check\"").unwrap_or_else(|| {
        panic!("no #render-check in the dumped DOM (page did not load?)\nstderr: {stderr}")
    });
    let json_start = start + dom[start..].find('>').unwrap() + 1;
    let json_end = json_start + dom[json_start..].find("</pre>").unwrap();
    let text = dom[json_start..json_end]
        .replace("&quot;", "\"")
        .replace("&amp;", "&");
    let check = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    (check, stderr)
}

/// The variable that lets a machine without Chromium skip the browser tests on purpose.
const SKIP_VAR: &str = "REPSIM_SKIP_BROWSER_TESTS";

/// Chromium's binary. A missing browser fails the test (in CI or not) unless
/// `REPSIM_SKIP_BROWSER_TESTS` is set to a non-empty value other than `0`: then the test `name`
/// is skipped, saying so and why on stderr, and this returns `None`.
fn chromium_or_skip(name: &str) -> Option<PathBuf> {
    let bin = find_chromium();
    if bin.is_none() {
        let opted_out = std::env::var(SKIP_VAR).is_ok_and(|v| !v.is_empty() && v != "0");
        assert!(
            opted_out,
            "{name}: chromium is not installed (no chromium, chromium-browser or google-chrome on \
             PATH); install it (apt-get install -y chromium chromium-driver) or set \
             {SKIP_VAR}=1 to skip the browser tests on purpose"
        );
        eprintln!(
            "SKIPPED {name}: chromium not found on PATH and {SKIP_VAR} is set; the report page \
             was NOT checked in a browser"
        );
    }
    bin
}

/// Asserts a page's render check: at least `min_images` images, each loaded with a size, no
/// page error, and no console error in the browser's stderr (`what` names the images).
fn assert_page_clean(check: &serde_json::Value, stderr: &str, min_images: usize, what: &str) {
    let images = check["images"].as_array().unwrap();
    assert!(
        images.len() >= min_images,
        "expected {what}, got {images:?}"
    );
    for im in images {
        let (w, h) = (im[0].as_u64().unwrap(), im[1].as_u64().unwrap());
        assert!(w > 0 && h > 0, "an image did not load: {images:?}");
    }
    assert_eq!(
        check["errors"].as_array().unwrap().len(),
        0,
        "page errors: {}",
        check["errors"]
    );
    // Console errors reported by the browser itself (e.g. resources that failed to load).
    for line in stderr.lines() {
        assert!(
            !(line.contains("Uncaught") || (line.contains("CONSOLE") && line.contains("ERROR"))),
            "console error: {line}"
        );
    }
}

#[test]
fn figure_page_images_load_in_headless_chromium() {
    let Some(bin) = chromium_or_skip("figure_page_images_load_in_headless_chromium") else {
        return;
    };
    let out_dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("figure_browser");
    let _ = std::fs::remove_dir_all(&out_dir);
    repsim_ok(&[
        "figure",
        "reps-fig4",
        "--scale",
        "small",
        "--quiet",
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    let (check, stderr) = render_check(&bin, &out_dir.join("index.html"));
    // The figure itself plus the per-uplink time series of tor0.
    assert_page_clean(&check, &stderr, 3, "the figure and its time series");
}

#[test]
fn report_renders_in_headless_chromium() {
    let Some(bin) = chromium_or_skip("report_renders_in_headless_chromium") else {
        return;
    };
    let out_dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("report_browser");
    let _ = std::fs::remove_dir_all(&out_dir);
    std::fs::create_dir_all(&out_dir).unwrap();
    run_micro(&out_dir, &["--lb", "reps,ops"]);
    repsim_ok(&["report", out_dir.to_str().unwrap(), "--quiet"]);
    let page = out_dir.join("report.html");
    let url = format!("file://{}", page.canonicalize().unwrap().display());

    let (check, stderr) = render_check(&bin, &page);
    assert_page_clean(&check, &stderr, 6, "the FCT, utilisation and queue plots");

    let shot = out_dir.join("report.png");
    chromium(
        &bin,
        &[
            format!("--screenshot={}", shot.display()),
            "--window-size=1200,2400".into(),
            "--virtual-time-budget=10000".into(),
            url,
        ],
        Duration::from_secs(90),
    );
    let len = std::fs::metadata(&shot).map(|m| m.len()).unwrap_or(0);
    assert!(len > 10_000, "screenshot {} is {len} bytes", shot.display());
    eprintln!("screenshot: {}", shot.display());
}
