use waypoint_catalog::{Catalog, CatalogError, Entry, RunSpec, Severity, Source, load};

use crate::fixture;

fn source(name: &str, text: &str) -> Source {
    Source {
        name: name.into(),
        text: text.into(),
    }
}

fn errors(text: &str) -> Vec<waypoint_catalog::Diagnostic> {
    match load(&[source("c.yaml", text)]) {
        Err(CatalogError::Invalid { diagnostics }) => diagnostics,
        Ok(_) => panic!("expected errors"),
        Err(e) => panic!("unexpected {e}"),
    }
}

#[test]
fn a_directory_of_files_merges_into_one_catalog() {
    let loaded = Catalog::from_paths(&[fixture("good")]).unwrap();
    let c = loaded.catalog;
    assert_eq!(c.tools().len(), 2);
    assert!(matches!(c.entry("p.fetch-twice"), Some(Entry::Pipeline(_))));
    assert_eq!(
        c.tool("summarise").unwrap().run,
        Some(RunSpec::Mcp {
            server: "docs".into(),
            tool: "summarize".into()
        })
    );
    assert_eq!(c.lexicon().intents["summarize"], ["boil down"]);
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
}

#[test]
fn repeated_paths_merge_and_report_duplicates_across_files() {
    let err = Catalog::from_paths(&[fixture("good/a.yaml"), fixture("good")]).unwrap_err();
    let CatalogError::Invalid { diagnostics } = err else {
        panic!()
    };
    let dup = diagnostics
        .iter()
        .find(|d| d.message.contains("duplicate tool `fetch`"))
        .unwrap();
    assert!(dup.related.as_ref().unwrap().file.ends_with("a.yaml"));
}

#[test]
fn the_builtin_catalog_loads_without_errors_or_warnings() {
    let loaded = waypoint_catalog::builtin().unwrap();
    assert!(loaded.catalog.tools().len() >= 30);
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
}

#[test]
fn five_different_mistakes_are_all_reported_with_lines() {
    let err = Catalog::from_paths(&[fixture("bad/five.yaml")]).unwrap_err();
    let CatalogError::Invalid { diagnostics } = err else {
        panic!()
    };
    let found: Vec<(usize, &str)> = diagnostics
        .iter()
        .map(|d| (d.at.line, d.message.as_str()))
        .collect();
    let expect = [
        (4, "unknown key `produce`"),
        (5, "duplicate tool `fetch`"),
        (9, "not a valid JSON Schema"),
        (11, "pipeline cycle: loop.a → loop.b → loop.a"),
        (16, "unknown tool `fecth`"),
    ];
    for (line, text) in expect {
        assert!(
            found.iter().any(|(l, m)| *l == line && m.contains(text)),
            "missing {line}: {text} in {found:#?}"
        );
    }
    assert!(diagnostics.iter().all(|d| d.at.file.ends_with("five.yaml")));
}

#[test]
fn rendered_diagnostics_show_place_snippet_and_hint() {
    let err = Catalog::from_paths(&[fixture("bad/five.yaml")]).unwrap_err();
    let CatalogError::Invalid { diagnostics } = err else {
        panic!()
    };
    let text: Vec<String> = diagnostics
        .iter()
        .map(|d| d.render().replace(env!("CARGO_MANIFEST_DIR"), "<crate>"))
        .collect();
    insta::assert_snapshot!(text.join("\n\n"));
}

#[test]
fn unknown_keys_suggest_the_nearest_allowed_key() {
    let d = errors("tools:\n  - name: a\n    descripton: x\n");
    let typo = d.iter().find(|d| d.is_error()).unwrap();
    assert_eq!(typo.hint.as_deref(), Some("did you mean `description`?"));
    assert_eq!((typo.at.line, typo.at.col), (3, 5));
}

#[test]
fn each_reference_kind_is_checked() {
    let d = errors(
        "tools:\n  - name: a\n    description: x\n    run: {mcp: {server: nope}}\nspecialists:\n  - id: s\n    tools: [b]\npipelines:\n  - id: p\n    steps: [a]\n    supersedes: [c]\n",
    );
    let messages: Vec<&str> = d.iter().map(|d| d.message.as_str()).collect();
    assert!(
        messages
            .iter()
            .any(|m| m.contains("unknown MCP server `nope`"))
    );
    assert!(
        messages
            .iter()
            .any(|m| m.contains("specialist tool names unknown tool `b`"))
    );
    assert!(
        messages
            .iter()
            .any(|m| m.contains("`supersedes` entry names unknown tool `c`"))
    );
}

#[test]
fn bad_names_effects_runs_and_shapes_are_errors() {
    let d = errors(
        "tools:\n  - name: Bad Name\n    description: x\n    effects: explode\n    run: {builtin: telepathy}\n  - description: no name\n  - name: b\n    description: y\n    input_schema: {type: string}\n    cost_usd: -1\nservers: {}\n",
    );
    let messages: Vec<&str> = d.iter().map(|d| d.message.as_str()).collect();
    for want in [
        "characters outside",
        "unknown effects `explode`",
        "unknown built-in `telepathy`",
        "a tool has no `name`",
        "must describe an object",
        "`cost_usd`",
        "`servers` must be a list",
    ] {
        assert!(
            messages.iter().any(|m| m.contains(want)),
            "missing {want}: {messages:#?}"
        );
    }
}

#[test]
fn warnings_do_not_fail_a_load() {
    let loaded = load(&[source(
        "w.yaml",
        "tools:\n  - name: bare\nevidence:\n  - {intent: x, needs: [nothing_makes_this]}\n",
    )])
    .unwrap();
    assert_eq!(loaded.warnings.len(), 2);
    assert!(
        loaded
            .warnings
            .iter()
            .all(|w| w.severity == Severity::Warning)
    );
}

#[test]
fn a_missing_path_and_an_empty_directory_are_clear_errors() {
    let err = Catalog::from_paths(&[fixture("no-such-dir")]).unwrap_err();
    assert!(err.to_string().contains("cannot read catalog"));
    let empty = tempfile::tempdir().unwrap();
    let err = Catalog::from_paths(&[empty.path()]).unwrap_err();
    assert!(err.to_string().contains("holds no `*.yaml`"));
}
