use proptest::prelude::*;
use waypoint_catalog::{Source, load, yaml};

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn arbitrary_text_never_panics(text in ".{0,400}") {
        let _ = load(&[Source { name: "x.yaml".into(), text }]);
    }

    #[test]
    fn yaml_shaped_text_never_panics(text in "[a-z:\\-\\[\\]{}&*!| \\n'\"#,0-9]{0,300}") {
        let _ = load(&[Source { name: "x.yaml".into(), text }]);
    }
}

#[test]
fn an_alias_bomb_is_refused_quickly() {
    let mut text = String::from("a: &a [x, x, x, x, x, x, x, x, x]\n");
    for (prev, name) in ('a'..='h').zip('b'..='i') {
        text.push_str(&format!("{name}: &{name} [*{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}]\n"));
    }
    let err = load(&[Source {
        name: "bomb.yaml".into(),
        text,
    }])
    .unwrap_err();
    assert!(err.to_string().contains("1 error"));
}

#[test]
fn oversized_input_is_refused() {
    let limits = yaml::Limits {
        max_bytes: 10,
        ..yaml::Limits::default()
    };
    assert!(yaml::parse("tools: [a, b, c]", limits).is_err());
}

/// A tool that says `effects: read` and then `effects: destructive` must not load as
/// read-only (nor as destructive): a repeated key is an error naming both lines.
#[test]
fn duplicate_yaml_keys_are_an_error_naming_both_lines() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tools.yaml");
    std::fs::write(
        &path,
        "tools:\n  - name: wipe\n    description: wipes the disk\n    effects: read\n    effects: destructive\n",
    )
    .unwrap();
    let err = waypoint_catalog::Catalog::from_paths(&[&path]).unwrap_err();
    let waypoint_catalog::CatalogError::Invalid { diagnostics } = err else {
        panic!("expected diagnostics, got {err}");
    };
    let d = &diagnostics[0];
    let file = path.display().to_string();
    assert_eq!((d.at.file.as_str(), d.at.line), (file.as_str(), 5), "{d}");
    let first = d.related.as_ref().unwrap();
    assert_eq!((first.file.as_str(), first.line), (file.as_str(), 4), "{d}");
    let shown = d.to_string();
    assert!(shown.contains("duplicate key `effects`"), "{shown}");
    assert!(shown.contains(&format!("{file}:4")), "{shown}");
    assert!(shown.contains(&format!("{file}:5")), "{shown}");
}

/// 100 aliases of one anchored 1 MB string are 101 nodes but 100 MB once expanded:
/// refused by the bytes budget, naming the file and the limit.
#[test]
fn alias_expansion_of_a_big_string_is_bounded_in_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("wide.yaml");
    let big = "x".repeat(1 << 20);
    let aliases = ["*big"; 100].join(", ");
    std::fs::write(
        &path,
        format!(
            "tools:\n  - name: a\n    description: &big \"{big}\"\n    examples: [{aliases}]\n"
        ),
    )
    .unwrap();
    let err = waypoint_catalog::Catalog::from_paths(&[&path]).unwrap_err();
    let waypoint_catalog::CatalogError::Invalid { diagnostics } = err else {
        panic!("expected diagnostics, got {err}");
    };
    let shown = diagnostics[0].to_string();
    assert!(shown.starts_with(&path.display().to_string()), "{shown}");
    assert!(shown.contains(&(64 << 20).to_string()), "{shown}");
    // Within the budget the same shape loads.
    let path = dir.path().join("narrow.yaml");
    let aliases = ["*big"; 10].join(", ");
    std::fs::write(
        &path,
        format!(
            "tools:\n  - name: a\n    description: &big \"{big}\"\n    examples: [{aliases}]\n"
        ),
    )
    .unwrap();
    waypoint_catalog::Catalog::from_paths(&[&path]).unwrap();
}

/// A catalog path that never ends (a device, a FIFO) is read up to the limit, not
/// until memory runs out.
#[test]
fn catalog_dev_zero_is_refused_at_the_limit() {
    let err = waypoint_catalog::Catalog::from_paths(&["/dev/zero"]).unwrap_err();
    let shown = err.to_string();
    assert!(shown.contains("/dev/zero"), "{shown}");
    assert!(
        shown.contains(&waypoint_catalog::limited::MAX_INPUT_BYTES.to_string()),
        "{shown}"
    );
}
