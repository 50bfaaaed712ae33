//! Deterministic synthetic catalogs for benchmarks and scale checks: `n` tools built
//! from a fixed vocabulary, so that routing has realistic overlap between entries.

use std::fmt::Write as _;

const VERBS: [&str; 24] = [
    "fetch",
    "render",
    "summarize",
    "translate",
    "store",
    "search",
    "publish",
    "review",
    "build",
    "deploy",
    "schedule",
    "archive",
    "convert",
    "validate",
    "export",
    "import",
    "compare",
    "index",
    "notify",
    "classify",
    "extract",
    "merge",
    "sync",
    "scan",
];
const NOUNS: [&str; 32] = [
    "invoice", "report", "ticket", "image", "video", "slide", "email", "contract", "dataset",
    "page", "document", "calendar", "order", "customer", "log", "metric", "alert", "branch",
    "commit", "note", "playlist", "receipt", "survey", "podcast", "recipe", "booking", "shipment",
    "lesson", "article", "chart", "backup", "photo",
];
const QUALIFIERS: [&str; 12] = [
    "weekly",
    "remote",
    "encrypted",
    "shared",
    "draft",
    "public",
    "archived",
    "local",
    "daily",
    "quarterly",
    "team",
    "personal",
];

/// A catalog YAML text with `n` tools (names `t{i}_{verb}_{noun}`).
pub fn catalog_yaml(n: usize) -> String {
    let mut out = String::from("tools:\n");
    for i in 0..n {
        let verb = VERBS[i % VERBS.len()];
        let noun = NOUNS[(i / VERBS.len()) % NOUNS.len()];
        let q = QUALIFIERS[(i / (VERBS.len() * NOUNS.len())) % QUALIFIERS.len()];
        let _ = write!(
            out,
            "  - name: t{i}_{verb}_{noun}\n    description: {verb} a {q} {noun} and report the result.\n    keywords: [{verb} {noun}, {q} {noun}]\n    input_schema: {{type: object, properties: {{target: {{type: string}}}}}}\n    accepts: [{noun}]\n    produces: [{noun}_{verb}]\n"
        );
    }
    out
}

/// `n` requests in the evaluation-case format, cycling through the vocabulary, with the
/// tool each should route to where one exists.
pub fn cases_jsonl(n: usize, tools: usize) -> String {
    let mut out = String::new();
    for i in 0..n {
        let t = i % tools.max(1);
        let verb = VERBS[t % VERBS.len()];
        let noun = NOUNS[(t / VERBS.len()) % NOUNS.len()];
        let _ = writeln!(
            out,
            "{{\"id\": \"c{i}\", \"request\": \"please {verb} the {noun} from last week and then email it to ops@example.com\", \"expect\": {{\"unknown\": false}}}}"
        );
    }
    out
}
