//! What a newcomer's mistakes in a scenario get back: the field of a flow entry with its
//! position (`workload.flows[3].size (line N)`, an override's index kept), "must not be
//! negative" for a negative quantity, every independent mistake of a file in one error, and
//! the nearest registered name for a misspelt scheme.
mod common;

use repsim::scenario::{LoadedScenario, Override, ScenarioError};

fn parse(text: &str) -> Result<LoadedScenario, ScenarioError> {
    LoadedScenario::parse(text, &common::scenario_path("inline.toml"))
}

/// An explicit workload whose fourth entry (line 12) has `size` set to `size`.
fn flows(size: &str) -> String {
    let tree = common::TREE_32;
    format!(
        "lb = \"ecmp\"\n{tree}\n[workload]\ntype = \"explicit\"\nflows = [\n\
         {{ src = 0, dst = 8, size = \"1MiB\" }},\n\
         {{ src = 1, dst = 9, size = \"1MiB\" }},\n\
         {{ src = 2, dst = 10, size = \"1MiB\" }},\n\
         {{ src = 3, dst = 11, size = {size} }},\n]\n"
    )
}

/// The line `needle` is on in `text` (from 1).
fn line_of(text: &str, needle: &str) -> usize {
    text[..text.find(needle).expect("in the text")]
        .matches('\n')
        .count()
        + 1
}

#[test]
fn a_flow_entry_s_error_names_its_position_and_line() {
    let text = flows("\"-4MiB\"");
    let e = parse(&text).unwrap_err();
    let line = line_of(&text, "-4MiB");
    assert_eq!(e.field, format!("workload.flows[3].size (line {line})"));
    assert!(e.message.contains("must not be negative"), "{e}");
    assert!(!e.message.contains("e.g."), "no unit hint for a sign: {e}");
}

#[test]
fn a_negative_number_is_refused_as_negative_not_as_unitless() {
    let e = parse(&flows("-4")).unwrap_err();
    assert!(e.message.contains("must not be negative"), "{e}");
    assert!(!e.message.contains("\"-4B\""), "{e}");
    for (key, value) in [("end", "\"-1ms\""), ("end", "-5")] {
        let text = format!("{key} = {value}\n{}", flows("\"1MiB\""));
        let e = parse(&text).unwrap_err();
        assert!(
            e.message.contains("must not be negative"),
            "{key} = {value}: {e}"
        );
    }
}

#[test]
fn an_override_s_error_keeps_its_index() {
    let set = [Override::parse("workload.flows[3].size=-4MiB").unwrap()];
    let text = flows("\"1MiB\"");
    let e =
        LoadedScenario::parse_with(&text, &common::scenario_path("inline.toml"), &set).unwrap_err();
    assert_eq!(e.field, "workload.flows[3].size");
    assert!(
        e.message
            .contains("(set by --set workload.flows[3].size=\"-4MiB\")"),
        "{e}"
    );
}

#[test]
fn every_independent_field_error_is_reported_at_once() {
    let tree = common::TREE_32;
    let text = format!(
        "seed = -1\nend = \"soon\"\nlb = \"ecmp\"\n{tree}\n[queue]\nsize = \"lots\"\n\
         [workload]\ntype = \"explicit\"\nflows = [\n\
         {{ src = 0, dst = 8, size = \"-4MiB\" }},\n\
         {{ src = 1, dst = 9, size = \"1MiB\", colour = \"red\" }},\n]\n"
    );
    let e = parse(&text).unwrap_err();
    let fields: Vec<&str> = e.all().map(|e| e.field.as_str()).collect();
    let expect = [
        format!("seed (line {})", line_of(&text, "seed")),
        format!("end (line {})", line_of(&text, "end")),
        format!("queue.size (line {})", line_of(&text, "\"lots\"")),
        format!("workload.flows[0].size (line {})", line_of(&text, "-4MiB")),
        format!(
            "workload.flows[1].colour (line {})",
            line_of(&text, "colour")
        ),
    ];
    for field in &expect {
        assert!(
            fields.contains(&field.as_str()),
            "{field} missing from {fields:?}"
        );
    }
    assert_eq!(fields.len(), expect.len(), "{e}");
    // Displayed one per line, each with file and field.
    assert_eq!(e.to_string().lines().count(), expect.len());
}

#[test]
fn a_misspelt_scheme_is_reported_with_the_field_errors() {
    let text = flows("\"-4MiB\"").replace("lb = \"ecmp\"", "lb = \"rep\"\nend = \"soon\"");
    let e = parse(&text).unwrap_err();
    let fields: Vec<&str> = e.all().map(|e| e.field.as_str()).collect();
    assert_eq!(
        fields,
        [
            format!("end (line {})", line_of(&text, "end")),
            format!("workload.flows[3].size (line {})", line_of(&text, "-4MiB")),
            format!("lb (line {})", line_of(&text, "lb")),
        ],
        "{e}"
    );
    assert!(e.also[1].message.contains("did you mean `reps`?"), "{e}");
}

#[test]
fn flow_entry_problems_found_while_building_are_reported_together() {
    let tree = common::TREE_32;
    let text = format!(
        "lb = \"ecmp\"\n{tree}\n[workload]\ntype = \"explicit\"\nflows = [\n\
         {{ src = 0, dst = 0, size = \"1MiB\" }},\n\
         {{ src = 1, dst = 9, size = \"1MiB\" }},\n\
         {{ src = \"0-2\", dst = \"4-5\", size = \"1MiB\" }},\n]\n"
    );
    let e = parse(&text)
        .unwrap()
        .build("ecmp", None)
        .err()
        .expect("refused");
    let fields: Vec<&str> = e.all().map(|e| e.field.as_str()).collect();
    assert_eq!(
        fields,
        ["workload.flows[0].dst", "workload.flows[2].dst"],
        "{e}"
    );
}

#[test]
fn a_misspelt_scheme_gets_the_nearest_name() {
    let text = flows("\"1MiB\"").replace("lb = \"ecmp\"", "lb = \"rep\"");
    let e = parse(&text).and_then(|s| s.runs().map(|_| ())).unwrap_err();
    assert!(e.message.contains("did you mean `reps`?"), "{e}");
    let text = flows("\"1MiB\"").replace("lb = \"ecmp\"", "lb = \"ecmp\"\ncc = \"mprdmaa\"");
    let e = parse(&text)
        .unwrap()
        .build("ecmp", None)
        .err()
        .expect("refused");
    assert!(e.message.contains("did you mean `mprdma`?"), "{e}");
    let text = format!("{}\n[routing]\nswitch = \"dril\"\n", flows("\"1MiB\""));
    let e = parse(&text)
        .unwrap()
        .build("ecmp", None)
        .err()
        .expect("refused");
    assert!(e.message.contains("did you mean `drill`?"), "{e}");
    // Nothing close: no suggestion.
    let text = flows("\"1MiB\"").replace("lb = \"ecmp\"", "lb = \"zzzzzz\"");
    let e = parse(&text).and_then(|s| s.runs().map(|_| ())).unwrap_err();
    assert!(!e.message.contains("did you mean"), "{e}");
}
