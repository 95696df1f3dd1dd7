//! Where in a scenario file a problem lies: the dotted path of the field, array positions
//! included (`workload.flows[3].size`, `workload[1].type`), read from the file's own syntax
//! tree, and the line it is on.
use std::ops::Range;

use toml_edit::{ImDocument, Item, Table, Value};

/// The field at byte offset `at` of `text` and its line, `workload.flows[3].size (line 33)`
/// (for text that is not TOML, the table and key on that line).
pub(crate) fn locate(text: &str, at: usize) -> String {
    let line = text[..at.min(text.len())].matches('\n').count() + 1;
    match field_at(text, at) {
        Some(field) => format!("{field} (line {line})"),
        None => guess(text, at),
    }
}

/// The table and key on the line of byte `at`, read line by line: for text that is not valid
/// TOML (a syntax error), which has no syntax tree.
fn guess(text: &str, at: usize) -> String {
    let before = &text[..at.min(text.len())];
    let line_no = before.matches('\n').count() + 1;
    let mut table = String::new();
    for line in before.lines() {
        let l = line.trim();
        if l.starts_with('[') {
            table = l.trim_matches(|c| c == '[' || c == ']').trim().to_string();
        }
    }
    let line = text.lines().nth(line_no - 1).unwrap_or("");
    if line.trim_start().starts_with('[') {
        // The error concerns a whole table (as for tagged sections): name the table.
        table = line
            .trim()
            .trim_matches(|c| c == '[' || c == ']')
            .trim()
            .to_string();
    }
    let key = line.split('=').next().unwrap_or("").trim();
    let key = if line.contains('=') && !key.is_empty() {
        key
    } else {
        ""
    };
    let path = match (table.is_empty(), key.is_empty()) {
        (true, true) => "-".to_string(),
        (true, false) => key.to_string(),
        (false, true) => table,
        (false, false) => format!("{table}.{key}"),
    };
    format!("{path} (line {line_no})")
}

/// The dotted path of the innermost field whose key or value spans byte `at` of `text`.
pub(crate) fn field_at(text: &str, at: usize) -> Option<String> {
    let doc = ImDocument::parse(text).ok()?;
    in_table(doc.as_table(), "", at)
}

/// The line (from 1) field `field` (a dotted path as [`field_at`] writes it) starts on in
/// `text`, if the text has it.
pub(crate) fn line_of(text: &str, field: &str) -> Option<usize> {
    let doc = ImDocument::parse(text).ok()?;
    let span = span_of(doc.as_table(), field)?;
    Some(text[..span.start.min(text.len())].matches('\n').count() + 1)
}

fn contains(span: Option<Range<usize>>, at: usize) -> bool {
    span.is_some_and(|s| s.start <= at && at < s.end.max(s.start + 1))
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

fn in_table(table: &Table, path: &str, at: usize) -> Option<String> {
    for (key, item) in table.iter() {
        let here = join(path, key);
        if contains(table.key(key).and_then(|k| k.span()), at) {
            return Some(here);
        }
        match item {
            Item::Value(v) if contains(v.span(), at) => return Some(in_value(v, here, at)),
            Item::Table(t) => {
                if let Some(found) = in_table(t, &here, at) {
                    return Some(found);
                }
                if contains(t.span(), at) {
                    return Some(here);
                }
            }
            Item::ArrayOfTables(tables) => {
                for (i, t) in tables.iter().enumerate() {
                    let element = format!("{here}[{i}]");
                    if let Some(found) = in_table(t, &element, at) {
                        return Some(found);
                    }
                    if contains(t.span(), at) {
                        return Some(element);
                    }
                }
            }
            _ => {}
        }
    }
    None
}

fn in_value(value: &Value, here: String, at: usize) -> String {
    match value {
        Value::Array(items) => items
            .iter()
            .enumerate()
            .find(|(_, v)| contains(v.span(), at))
            .map(|(i, v)| in_value(v, format!("{here}[{i}]"), at))
            .unwrap_or(here),
        Value::InlineTable(table) => {
            for (key, v) in table.iter() {
                let inner = join(&here, key);
                if contains(table.key(key).and_then(|k| k.span()), at) {
                    return inner;
                }
                if contains(v.span(), at) {
                    return in_value(v, inner, at);
                }
            }
            here
        }
        _ => here,
    }
}

/// A path's parts: a key and the array indices after it (`flows[3]` is `("flows", [3])`).
pub(crate) fn parts(field: &str) -> Vec<(&str, Vec<usize>)> {
    field
        .split('.')
        .map(|part| {
            let mut pieces = part.split('[');
            let key = pieces.next().unwrap_or(part);
            let indices = pieces
                .filter_map(|p| p.trim_end_matches(']').parse().ok())
                .collect();
            (key, indices)
        })
        .collect()
}

fn span_of(table: &Table, field: &str) -> Option<Range<usize>> {
    enum At<'a> {
        Item(&'a Item),
        Value(&'a Value),
        Table(&'a Table),
    }
    let mut here = At::Table(table);
    let mut span = None;
    for (key, indices) in parts(field) {
        let next = match here {
            At::Table(t) => {
                span = t.key(key).and_then(|k| k.span()).or(span);
                t.get(key).map(At::Item)
            }
            At::Item(Item::Table(t)) => {
                span = t.key(key).and_then(|k| k.span()).or(span);
                t.get(key).map(At::Item)
            }
            At::Item(Item::Value(Value::InlineTable(t))) | At::Value(Value::InlineTable(t)) => {
                span = t.key(key).and_then(|k| k.span()).or(span);
                t.get(key).map(At::Value)
            }
            _ => None,
        }?;
        here = next;
        for i in indices {
            here = match here {
                At::Item(Item::ArrayOfTables(a)) => {
                    let t = a.get(i)?;
                    span = t.span().or(span);
                    At::Table(t)
                }
                At::Item(Item::Value(Value::Array(a))) | At::Value(Value::Array(a)) => {
                    let v = a.get(i)?;
                    span = v.span().or(span);
                    At::Value(v)
                }
                _ => return span,
            };
        }
    }
    span
}

/// A field as an error names it, without its `(line N)`.
pub(crate) fn without_line(field: &str) -> &str {
    match field.rfind(" (line ") {
        Some(at) if field.ends_with(')') => &field[..at],
        _ => field,
    }
}

/// Whether one of two fields (paths without lines) is the other or lies inside it.
pub(crate) fn overlaps(a: &str, b: &str) -> bool {
    let inside = |inner: &str, outer: &str| {
        inner == outer
            || inner
                .strip_prefix(outer)
                .is_some_and(|rest| rest.starts_with('.') || rest.starts_with('['))
    };
    inside(a, b) || inside(b, a)
}

/// Field `field` of a table from which the fields `removed` were taken out, in that order, as
/// the original names it: array elements after a removed element move back down
/// (`flows[1]` after `flows[0]` went is the original `flows[2]`).
pub(crate) fn as_in_file(field: &str, removed: &[String]) -> String {
    let mut field = field.to_string();
    for gone in removed.iter().rev() {
        let Some(open) = gone.rfind('[') else {
            continue;
        };
        let (array, index) = (&gone[..open], &gone[open + 1..]);
        let Ok(k) = index.trim_end_matches(']').parse::<usize>() else {
            continue;
        };
        let Some(rest) = field.strip_prefix(array).and_then(|r| r.strip_prefix('[')) else {
            continue;
        };
        let Some((j, after)) = rest.split_once(']') else {
            continue;
        };
        let Ok(j) = j.parse::<usize>() else {
            continue;
        };
        if j >= k && gone.ends_with(']') {
            field = format!("{array}[{}]{after}", j + 1);
        }
    }
    field
}

/// Removes field `field` (a path as [`field_at`] writes it) from `table`; whether it was there.
pub(crate) fn remove_field(table: &mut toml::Table, field: &str) -> bool {
    let parts = parts(field);
    let Some(((last, last_indices), parents)) = parts.split_last() else {
        return false;
    };
    let mut here = table;
    for (key, indices) in parents {
        let Some(mut slot) = here.get_mut(*key) else {
            return false;
        };
        for &i in indices {
            let Some(next) = slot.as_array_mut().and_then(|a| a.get_mut(i)) else {
                return false;
            };
            slot = next;
        }
        let Some(t) = slot.as_table_mut() else {
            return false;
        };
        here = t;
    }
    let Some((&i, outer)) = last_indices.split_last() else {
        return here.remove(*last).is_some();
    };
    let Some(mut slot) = here.get_mut(*last) else {
        return false;
    };
    for &j in outer {
        let Some(next) = slot.as_array_mut().and_then(|a| a.get_mut(j)) else {
            return false;
        };
        slot = next;
    }
    match slot.as_array_mut() {
        Some(items) if i < items.len() => {
            items.remove(i);
            true
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = r#"seed = 1

[workload]
type = "explicit"
flows = [
  { src = 0, dst = 1, size = "1MiB" },
  { src = 2, dst = 3, size = "-4MiB" },
]

[[class]]
name = "bg"
"#;

    #[test]
    fn names_array_elements_and_inline_table_keys() {
        let at = TEXT.find("-4MiB").unwrap();
        assert_eq!(locate(TEXT, at), "workload.flows[1].size (line 7)");
        assert_eq!(
            field_at(TEXT, TEXT.find("type").unwrap()).as_deref(),
            Some("workload.type")
        );
        assert_eq!(
            field_at(TEXT, TEXT.find("\"bg\"").unwrap()).as_deref(),
            Some("class[0].name")
        );
        assert_eq!(field_at(TEXT, 0).as_deref(), Some("seed"));
    }

    #[test]
    fn finds_a_field_s_line_by_its_path() {
        assert_eq!(line_of(TEXT, "workload.flows[1].size"), Some(7));
        assert_eq!(line_of(TEXT, "class[0].name"), Some(11));
        assert_eq!(line_of(TEXT, "workload.nope"), None);
    }

    #[test]
    fn removes_keys_and_array_elements() {
        let mut t: toml::Table = TEXT.parse().unwrap();
        assert!(remove_field(&mut t, "workload.flows[1].size"));
        assert!(t["workload"]["flows"][1].get("size").is_none());
        assert!(remove_field(&mut t, "workload.flows[0]"));
        assert_eq!(t["workload"]["flows"].as_array().unwrap().len(), 1);
        assert!(remove_field(&mut t, "class[0]"));
        assert!(!remove_field(&mut t, "class[0]"));
        assert!(remove_field(&mut t, "seed") && !remove_field(&mut t, "seed"));
        assert!(overlaps("workload.flows[1]", "workload.flows[1].size"));
        let gone = ["workload.flows[0]".to_string(), "class[1]".to_string()];
        assert_eq!(
            as_in_file("workload.flows[0].size", &gone),
            "workload.flows[1].size"
        );
        assert_eq!(as_in_file("class[0].name", &gone), "class[0].name");
        assert_eq!(as_in_file("class[1].name", &gone), "class[2].name");
        assert_eq!(as_in_file("seed", &gone), "seed");
        assert!(!overlaps("workload.flows[1]", "workload.flows[10]"));
    }
}
