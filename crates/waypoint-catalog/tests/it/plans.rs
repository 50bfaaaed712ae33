//! Plan documents: every step kind, version resolution, and the errors a
//! cycle, a version conflict or a bad step gives, with file and line.

use waypoint_catalog::plans::{DocStep, PlanRef, Safety, ScriptInput};
use waypoint_catalog::{Catalog, CatalogError, Diagnostic, Source, load};

const TOOLS: &str = r#"
tools:
  - name: fetch
    description: Fetch a page.
    input_schema: {type: object, properties: {url: {type: string}}, required: [url]}
    run: {builtin: http_fetch}
  - name: summarise
    description: Summarise text.
    run: {command: [echo, "{text}"]}
"#;

fn sources(plans: &[(&str, &str)]) -> Vec<Source> {
    let mut s = vec![Source {
        name: "tools.yaml".into(),
        text: TOOLS.into(),
    }];
    s.extend(plans.iter().map(|(n, t)| Source {
        name: (*n).into(),
        text: (*t).into(),
    }));
    s
}

fn errors(plans: &[(&str, &str)]) -> Vec<Diagnostic> {
    match load(&sources(plans)) {
        Err(CatalogError::Invalid { diagnostics }) => diagnostics
            .into_iter()
            .filter(Diagnostic::is_error)
            .collect(),
        Ok(_) => panic!("expected errors"),
        Err(e) => panic!("unexpected {e}"),
    }
}

const REPORT: &str = r#"id: bullet://team/report@1.2.0
intent: Summarise a page into a report
keywords: [page report]
intent_clarity: {ambiguity_score: 0.1, missing_criteria: []}
context: Weekly report.
constraints: {budget_usd: 0.5, max_runtime_seconds: 300, safety: no_destructive_actions}
success_criteria: [step 2 produced text]
produces: [report]
steps:
  - placeholder: The page to report on
    type: url
    constraints: [must be https]
  - guidance: Keep it short.
  - data: {audience: engineers}
  - tool: fetch
    args: {url: "https://example.com"}
  - script: summarise
    inputs:
      text: {description: The page fetched by the previous step}
      style: {value: terse}
  - plan: plan://team/base@^1.0
"#;

const BASE_1: &str = "id: plan://team/base@1.0.0\nintent: base\nsteps:\n  - tool: fetch\n    args: {url: \"https://a.example\"}\n";
const BASE_14: &str = "id: plan://team/base@1.4.0\nintent: base\nsteps:\n  - tool: fetch\n    args: {url: \"https://b.example\"}\n";

#[test]
fn a_plan_document_loads_every_step_kind_and_resolves_the_highest_fitting_version() {
    let c = load(&sources(&[
        ("plans/report.yaml", REPORT),
        ("plans/base-1.yaml", BASE_1),
        ("plans/base-14.yaml", BASE_14),
    ]))
    .unwrap()
    .catalog;
    assert_eq!(c.plans().len(), 3);
    let report = &c.plans()[0];
    assert_eq!(report.id.to_string(), "plan://team/report@1.2.0");
    assert_eq!(
        report.constraints.safety,
        Some(Safety::NoDestructiveActions)
    );
    assert_eq!(report.constraints.max_runtime_seconds, Some(300));
    assert!(report.intent_clarity.ready());
    let kinds: Vec<&str> = report
        .steps
        .iter()
        .map(|s| match &s.step {
            DocStep::Placeholder { .. } => "placeholder",
            DocStep::Guidance { .. } => "guidance",
            DocStep::Data { .. } => "data",
            DocStep::Tool { .. } => "tool",
            DocStep::Script { .. } => "script",
            DocStep::Plan { .. } => "plan",
        })
        .collect();
    assert_eq!(
        kinds,
        ["placeholder", "guidance", "data", "tool", "script", "plan"]
    );
    let DocStep::Script { inputs, .. } = &report.steps[4].step else {
        panic!()
    };
    assert!(matches!(&inputs["text"], ScriptInput::Description(d) if d.contains("previous")));
    assert!(matches!(&inputs["style"], ScriptInput::Value(v) if v == "terse"));
    assert_eq!(report.steps[4].at.line, 17, "steps keep their line");
    let DocStep::Plan { target } = &report.steps[5].step else {
        panic!()
    };
    assert_eq!(
        c.plan_doc(target).unwrap().id.to_string(),
        "plan://team/base@1.4.0"
    );
    let exact = PlanRef::parse("plan://team/base@1.0.0").unwrap();
    assert_eq!(c.plan_doc(&exact).unwrap().id.version.to_string(), "1.0.0");
}

#[test]
fn a_cycle_is_an_error_at_the_step_that_closes_it() {
    let a = "id: plan://t/a@1.0.0\nintent: a\nsteps:\n  - tool: fetch\n    args: {url: x}\n  - plan: plan://t/b@^1\n";
    let b = "id: plan://t/b@1.0.0\nintent: b\nsteps:\n  - plan: plan://t/a@1.0.0\n";
    let e = errors(&[("plans/a.yaml", a), ("plans/b.yaml", b)]);
    assert_eq!(e.len(), 1, "{e:?}");
    assert!(
        e[0].message
            .contains("plan cycle: plan://t/a@1.0.0 → plan://t/b@1.0.0 → plan://t/a@1.0.0"),
        "{}",
        e[0].message
    );
    assert_eq!((e[0].at.file.as_str(), e[0].at.line), ("plans/a.yaml", 6));
    assert!(
        e[0].render().contains("plans/a.yaml:6"),
        "{}",
        e[0].render()
    );
}

#[test]
fn a_version_conflict_names_what_is_loaded_and_where_it_was_asked() {
    let wants_2 = "id: plan://t/top@1.0.0\nintent: top\nsteps:\n  - plan: plan://t/base@^2.0\n";
    let e = errors(&[
        ("plans/top.yaml", wants_2),
        ("plans/b1.yaml", BASE_1.replace("team", "t").as_str()),
    ]);
    assert_eq!(e.len(), 1, "{e:?}");
    assert!(
        e[0].message
            .contains("no version of `t/base` fits `^2.0`; loaded: 1.0.0"),
        "{}",
        e[0].message
    );
    assert_eq!((e[0].at.file.as_str(), e[0].at.line), ("plans/top.yaml", 4));

    let unversioned = "id: plan://t/top@1.0.0\nintent: top\nsteps:\n  - plan: plan://t/base\n";
    let e = errors(&[
        ("plans/top.yaml", unversioned),
        ("plans/b1.yaml", BASE_1.replace("team", "t").as_str()),
        ("plans/b14.yaml", BASE_14.replace("team", "t").as_str()),
    ]);
    assert!(
        e[0].message.contains("ambiguous: versions 1.0.0, 1.4.0"),
        "{}",
        e[0].message
    );

    let e = errors(&[("plans/x.yaml", BASE_1), ("plans/y.yaml", BASE_1)]);
    assert!(
        e[0].message
            .contains("duplicate plan `plan://team/base@1.0.0`"),
        "{}",
        e[0].message
    );
    assert_eq!(e[0].related.as_ref().unwrap().file, "plans/x.yaml");
}

#[test]
fn bad_steps_and_fields_are_reported_with_their_place() {
    let bad = "id: plan://t/bad@1.0\nintent: x\nsteps: []\n";
    assert!(
        errors(&[("plans/bad.yaml", bad)])[0]
            .message
            .contains("is not a version")
    );
    let bad = "id: plan://t/bad@1.0.0\nintent: x\nconstraints: {safety: careful}\nsteps:\n  - tool: fetch\n    plan: plan://t/x@1.0.0\n  - toll: fetch\n  - tool: fecth\n";
    let e = errors(&[("plans/bad.yaml", bad)]);
    let msgs: Vec<&str> = e.iter().map(|d| d.message.as_str()).collect();
    assert!(
        msgs.iter()
            .any(|m| m.contains("unknown safety level `careful`")),
        "{msgs:?}"
    );
    assert!(
        msgs.iter()
            .any(|m| m.contains("more than one kind: tool, plan")),
        "{msgs:?}"
    );
    assert!(
        msgs.iter().any(|m| m.contains("unknown key `toll`")),
        "{msgs:?}"
    );
    assert!(
        msgs.iter().any(|m| m.contains("unknown tool `fecth`")),
        "{msgs:?}"
    );
}

#[test]
fn plan_documents_are_read_from_a_plans_folder() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("tools.yaml"), TOOLS).unwrap();
    std::fs::create_dir(dir.path().join("plans")).unwrap();
    std::fs::write(dir.path().join("plans/base.yaml"), BASE_1).unwrap();
    let c = Catalog::from_paths(&[dir.path()]).unwrap().catalog;
    assert_eq!(c.plans().len(), 1);
    assert!(c.plans()[0].at.file.ends_with("plans/base.yaml"));
}

/// Tools for the finding-5 documents: one with a schema and a default, one destructive.
const TOOLS5: &str = r#"
tools:
  - name: resize
    description: Resize an image.
    input_schema:
      type: object
      properties:
        path: {type: string}
        width: {type: integer, minimum: 1}
        fit: {type: string, enum: [cover, contain], default: cover}
      required: [path, width]
    run: {command: [echo, "{path}"]}
  - name: wipe
    description: Delete everything.
    effects: destructive
    run: {command: ["true"]}
"#;

/// Issue 20, finding 5: args that break a schema, a missing required arg, an unknown
/// script input, a destructive tool under `no_destructive_actions` (through a nested
/// plan too) and `{{s1}}` literals all passed as "catalog ok"; a cycle pointed at the
/// wrong `plan:` step; a bad id hid every other error. Now each is reported at its own
/// line, all in one pass.
#[test]
fn issue_20_finding_5_plans_check_reports_every_problem_at_its_line_in_one_pass() {
    let broken = "id: plan://t/broken@1.0.0
intent: broken
steps:
  - tool: resize
    args: {path: a.png, width: wide}
  - tool: resize
    args: {width: 10}
  - script: resize
    inputs:
      path: {description: the image}
      widht: {value: 3}
  - tool: resize
    args: {path: \"{{s1}}\", width: 5}
  - plan: plan://t/careful@^1
  - plan: plan://t/other@^1
";
    let careful = "id: plan://t/careful@1.0.0
intent: careful
constraints: {safety: no_destructive_actions}
steps:
  - tool: resize
    args: {path: a.png, width: 2}
  - plan: plan://t/inner@^1
";
    let inner = "id: plan://t/inner@1.0.0\nintent: inner\nsteps:\n  - tool: wipe\n";
    let other = "id: plan://t/other@1.0.0\nintent: other\nsteps:\n  - plan: plan://t/broken@^1\n";
    let bad_id = "id: plan://t/BAD ID\nintent: bad\nsteps:\n  - tool: resize\n    args: {path: x, width: 0}\n";
    let files = [
        ("tools.yaml", TOOLS5),
        ("plans/broken.yaml", broken),
        ("plans/careful.yaml", careful),
        ("plans/inner.yaml", inner),
        ("plans/other.yaml", other),
        ("plans/bad.yaml", bad_id),
    ];
    let sources: Vec<Source> = files
        .iter()
        .map(|(n, t)| Source {
            name: (*n).into(),
            text: (*t).into(),
        })
        .collect();
    let Err(CatalogError::Invalid { diagnostics }) = load(&sources) else {
        panic!("expected errors");
    };
    let found: Vec<(String, usize, String)> = diagnostics
        .iter()
        .map(|d| (d.at.file.clone(), d.at.line, d.message.clone()))
        .collect();
    let has = |file: &str, line: usize, words: &str| {
        assert!(
            found
                .iter()
                .any(|(f, l, m)| f == file && *l == line && m.contains(words)),
            "no `{words}` at {file}:{line} in {found:#?}"
        );
    };
    has("plans/broken.yaml", 4, "break its input_schema");
    has("plans/broken.yaml", 6, "needs `path`");
    has("plans/broken.yaml", 8, "has no input `widht`");
    has("plans/broken.yaml", 8, "needs input `width`");
    has("plans/broken.yaml", 12, "`args.path` is `{{s1}}`");
    has("plans/inner.yaml", 4, "no_destructive_actions");
    has("plans/inner.yaml", 4, "through plan://t/inner@1.0.0");
    // The cycle broken → other → broken is reported at the step that goes to `other`.
    has("plans/broken.yaml", 15, "plan cycle");
    // The bad id is reported, and so is the bad arg below it.
    has("plans/bad.yaml", 1, "");
    has("plans/bad.yaml", 4, "break its input_schema");
    let hint = diagnostics
        .iter()
        .find(|d| d.message.contains("widht"))
        .and_then(|d| d.hint.clone())
        .unwrap_or_default();
    assert!(hint.contains("did you mean `width`?"), "{hint}");
    // `fit` has a default, so it is neither missing nor asked for.
    assert!(
        !found.iter().any(|(_, _, m)| m.contains("`fit`")),
        "{found:#?}"
    );
    let safety = diagnostics
        .iter()
        .find(|d| d.message.contains("no_destructive_actions"))
        .unwrap();
    assert!(
        !safety.is_error(),
        "a refused step is a warning; the run refuses it"
    );
}
