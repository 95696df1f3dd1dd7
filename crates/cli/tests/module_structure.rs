//! The modules of the command line and of the libraries it drives (`repsim-experiment`,
//! `repsim-figures`), read from the sources so that a bad import fails here rather than in
//! review: within each crate the modules form no circle.
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

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
        paths.len() > 5,
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
fn the_modules_of_each_crate_form_no_circle() {
    for name in ["cli", "experiment", "figures"] {
        no_circle_in(name);
    }
}

fn no_circle_in(name: &str) {
    let files = files(name);
    // The crate roots, main.rs and lib.rs, declare every module and are left out.
    let modules: BTreeSet<String> = files
        .iter()
        .map(|(_, m, _)| m.clone())
        .filter(|m| m != "main" && m != "lib")
        .collect();
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (_, module, named) in files
        .into_iter()
        .filter(|(_, m, _)| m != "main" && m != "lib")
    {
        let edges = graph.entry(module).or_default();
        edges.extend(named.into_iter().filter(|n| modules.contains(n)));
    }
    let mut done = BTreeSet::new();
    for m in &modules {
        if let Some(cycle) = cycle_from(m, &graph, &mut Vec::new(), &mut done) {
            panic!("{name}: modules in a circle: {}", cycle.join(" -> "));
        }
    }
}
