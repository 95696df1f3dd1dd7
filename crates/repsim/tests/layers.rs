//! The library's layering (`docs/architecture.md`): no module names a module of a higher row,
//! so the folder tree stays the model. Read from the sources, so a new upward import fails
//! here rather than in review.
use std::collections::BTreeMap;
use std::path::Path;

/// Rows of `docs/architecture.md`, bottom (0) to top.
const ROWS: &[(&str, u32)] = &[
    ("engine", 0),
    ("units", 0),
    ("error", 0),
    ("net", 1),
    ("cc", 2),
    ("lb", 2),
    ("routing", 2),
    ("transport", 3),
    ("workload", 4),
    ("fault", 4),
    ("metrics", 4),
    ("sim", 5),
    ("scenario", 6),
];

fn row(module: &str) -> Option<u32> {
    ROWS.iter().find(|(m, _)| *m == module).map(|(_, r)| *r)
}

/// Every `.rs` file under `dir`.
fn sources(dir: &Path, found: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("readable sources") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            sources(&path, found);
        } else if path.extension().is_some_and(|e| e == "rs") {
            found.push(path);
        }
    }
}

/// The top-level modules a source file names as `crate::<module>`, outside comments.
fn named_modules(text: &str) -> Vec<String> {
    let mut names = Vec::new();
    for line in text.lines().filter(|l| !l.trim_start().starts_with("//")) {
        for piece in line.split("crate::").skip(1) {
            let name: String = piece
                .chars()
                .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                .collect();
            if !name.is_empty() {
                names.push(name);
            }
        }
    }
    names
}

#[test]
fn no_module_imports_from_a_higher_row() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let mut upward: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
    let mut checked = 0;
    for file in &files {
        let relative = file.strip_prefix(&src).expect("under src");
        let first = relative
            .iter()
            .next()
            .expect("a component")
            .to_string_lossy();
        let module = first.trim_end_matches(".rs").to_string();
        let Some(own) = row(&module) else {
            continue; // lib.rs: the crate root re-exports every layer
        };
        checked += 1;
        let text = std::fs::read_to_string(file).expect("readable source");
        for named in named_modules(&text) {
            if row(&named).is_some_and(|r| r > own) {
                upward
                    .entry((module.clone(), named))
                    .or_default()
                    .push(relative.display().to_string());
            }
        }
    }
    assert!(
        checked > 100,
        "only {checked} source files found under {}",
        src.display()
    );
    assert!(
        upward.is_empty(),
        "modules naming a higher layer (module, named): {upward:#?}"
    );
}

#[test]
fn every_top_level_module_has_a_row() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let lib = std::fs::read_to_string(src.join("lib.rs")).expect("lib.rs");
    for line in lib.lines() {
        if let Some(name) = line.strip_prefix("pub mod ") {
            let name = name.trim_end_matches(';');
            assert!(
                row(name).is_some(),
                "module {name} has no row in ROWS (docs/architecture.md)"
            );
        }
    }
}
