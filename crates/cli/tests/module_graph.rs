//! The command line's modules form no circle: each file's `crate::<module>` references, as a
//! graph over the top-level modules (the crate root, `main.rs`, aside), have no cycle.
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

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

/// A cycle through `node`, if the graph has one reachable from it.
fn cycle_from(
    node: &str,
    graph: &BTreeMap<String, BTreeSet<String>>,
    path: &mut Vec<String>,
    done: &mut BTreeSet<String>,
) -> Option<Vec<String>> {
    if let Some(at) = path.iter().position(|n| n == node) {
        let mut cycle = path[at..].to_vec();
        cycle.push(node.to_string());
        return Some(cycle);
    }
    if done.contains(node) {
        return None;
    }
    path.push(node.to_string());
    for next in graph.get(node).into_iter().flatten() {
        if let Some(c) = cycle_from(next, graph, path, done) {
            return Some(c);
        }
    }
    path.pop();
    done.insert(node.to_string());
    None
}

#[test]
fn the_command_line_modules_form_no_circle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let modules: BTreeSet<String> = files
        .iter()
        .map(|f| {
            let relative = f.strip_prefix(&src).expect("under src");
            let first = relative
                .iter()
                .next()
                .expect("a component")
                .to_string_lossy();
            first.trim_end_matches(".rs").to_string()
        })
        .filter(|m| m != "main")
        .collect();
    assert!(modules.len() > 10, "modules found: {modules:?}");
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in &files {
        let relative = file.strip_prefix(&src).expect("under src");
        let first = relative
            .iter()
            .next()
            .expect("a component")
            .to_string_lossy();
        let module = first.trim_end_matches(".rs").to_string();
        if module == "main" {
            continue;
        }
        let text = std::fs::read_to_string(file).expect("readable source");
        for line in text.lines().filter(|l| !l.trim_start().starts_with("//")) {
            for piece in line.split("crate::").skip(1) {
                let name: String = piece
                    .chars()
                    .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                    .collect();
                if name != module && modules.contains(&name) {
                    graph.entry(module.clone()).or_default().insert(name);
                }
            }
        }
    }
    let mut done = BTreeSet::new();
    for m in &modules {
        if let Some(cycle) = cycle_from(m, &graph, &mut Vec::new(), &mut done) {
            panic!("modules in a circle: {}", cycle.join(" -> "));
        }
    }
}
