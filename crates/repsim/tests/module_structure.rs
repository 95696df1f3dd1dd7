//! The simulator's module structure, read from the sources so that a bad import fails here
//! rather than in review: no module names a module of a higher layer (`docs/architecture.md`),
//! and the simulation names no scheme.
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

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
    ("registry", 6),
];

fn row(module: &str) -> Option<u32> {
    ROWS.iter().find(|(m, _)| *m == module).map(|(_, r)| *r)
}

/// Every `.rs` file under `src` of crate `name`, with its top-level module (`main` and `lib`
/// for the crate roots) and the top-level modules it names as `crate::<module>`, outside
/// comments.
fn files(name: &str) -> Vec<(PathBuf, String, Vec<String>)> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(name)
        .join("src");
    let mut paths = Vec::new();
    let mut stack = vec![src.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("readable sources") {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                paths.push(path);
            }
        }
    }
    paths.sort();
    assert!(
        paths.len() > 10,
        "only {} files under {}",
        paths.len(),
        src.display()
    );
    paths
        .into_iter()
        .map(|path| {
            let relative = path.strip_prefix(&src).expect("under src").to_path_buf();
            let first = relative
                .iter()
                .next()
                .expect("a component")
                .to_string_lossy();
            let module = first.trim_end_matches(".rs").to_string();
            let text = std::fs::read_to_string(&path).expect("readable source");
            let mut named = Vec::new();
            for line in text.lines().filter(|l| !l.trim_start().starts_with("//")) {
                for piece in line.split("crate::").skip(1) {
                    let name: String = piece
                        .chars()
                        .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                        .collect();
                    if !name.is_empty() && name != module {
                        named.push(name);
                    }
                }
            }
            (relative, module, named)
        })
        .collect()
}

#[test]
fn no_library_module_imports_from_a_higher_layer() {
    let mut upward: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
    for (file, module, named) in files("repsim") {
        // lib.rs, the crate root, re-exports every layer.
        let Some(own) = row(&module) else { continue };
        for n in named {
            if row(&n).is_some_and(|r| r > own) {
                upward
                    .entry((module.clone(), n))
                    .or_default()
                    .push(file.display().to_string());
            }
        }
    }
    assert!(
        upward.is_empty(),
        "modules naming a higher layer (module, named): {upward:#?}"
    );
}

#[test]
fn every_library_module_has_a_layer() {
    let lib = Path::new(env!("CARGO_MANIFEST_DIR")).join("../repsim/src/lib.rs");
    let lib = std::fs::read_to_string(lib).expect("lib.rs");
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
