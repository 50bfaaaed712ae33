//! Arguments, links and order on a catalog typed the way MCP servers type their tools
//! (`tests/fixtures/typed.yaml`), plus properties that hold for any request.

use std::sync::OnceLock;

use proptest::prelude::*;
use serde_json::{Value, json};
use waypoint_core::Engine;
use waypoint_protocol::Plan;

/// An engine over one catalog file, built once per `cell`.
fn engine(cell: &'static OnceLock<Engine>, name: &str, text: &str) -> &'static Engine {
    cell.get_or_init(|| crate::engine_over(name, text))
}

fn typed() -> &'static Engine {
    static ENGINE: OnceLock<Engine> = OnceLock::new();
    engine(
        &ENGINE,
        "typed.yaml",
        include_str!("../fixtures/typed.yaml"),
    )
}

fn plan(request: &str) -> Plan {
    typed().plan(request, None).unwrap()
}

/// `(tool, args)` per step.
fn steps(p: &Plan) -> Vec<(String, Value)> {
    p.steps()
        .iter()
        .map(|s| (s.tool.clone(), Value::Object(s.args.clone())))
        .collect()
}

/// `fn $name(request) -> (tool, args) per step`, planned over one catalog whose engine
/// is built once.
macro_rules! steps_over {
    ($(#[$doc:meta])* $name:ident, $file:literal, $text:expr) => {
        $(#[$doc])*
        fn $name(request: &str) -> Vec<(String, Value)> {
            static ENGINE: OnceLock<Engine> = OnceLock::new();
            steps(&engine(&ENGINE, $file, $text).plan(request, None).unwrap())
        }
    };
}

#[test]
fn numbers_fill_number_arguments_in_order() {
    assert_eq!(
        steps(&plan("add 2 and 3")),
        [("add".into(), json!({"a": 2, "b": 3}))]
    );
}

#[test]
fn a_cue_gives_content_and_a_file_name_gives_the_path() {
    let p = plan("create a file notes.txt containing hello, then move notes.txt to old.txt");
    let s = steps(&p);
    assert_eq!(
        s[0],
        (
            "write_file".into(),
            json!({"path": "notes.txt", "content": "hello"})
        )
    );
    assert_eq!(
        s[1],
        (
            "move_file".into(),
            json!({"source": "notes.txt", "destination": "old.txt"})
        )
    );
    // "then": the move follows the write though no data flows between them.
    assert_eq!(p.steps()[1].after, ["s1"]);
    assert!(p.steps()[1].group > p.steps()[0].group);
}

#[test]
fn an_email_argument_takes_the_address_and_the_body_the_words_left() {
    let s = steps(&plan("email the quarterly numbers to ana@example.com"));
    assert_eq!(
        s[0],
        (
            "send_mail".into(),
            json!({"recipient": "ana@example.com", "body": "the quarterly numbers"})
        )
    );
}

#[test]
fn a_pronoun_is_a_link_or_a_placeholder_never_a_value() {
    let p =
        plan("fetch https://example.com, summarize it and email the summary to ana@example.com");
    let s = steps(&p);
    let tools: Vec<&str> = s.iter().map(|(t, _)| t.as_str()).collect();
    assert_eq!(tools, ["fetch_page", "summarize_text", "send_mail"]);
    assert_eq!(s[0].1, json!({"pageUrl": "https://example.com"}));
    assert_eq!(s[1].1, json!({"text": {"$ref": "s1/output"}}));
    assert_eq!(
        s[2].1,
        json!({"recipient": "ana@example.com", "body": {"$ref": "s2/output"}})
    );
    // Nothing to point at: a question, not the word.
    let alone = plan("summarize it");
    let text = &alone.steps()[0].args["text"];
    assert!(text.get("$placeholder").is_some(), "{text}");
}

fn untyped() -> &'static Engine {
    static ENGINE: OnceLock<Engine> = OnceLock::new();
    engine(
        &ENGINE,
        "untyped.yaml",
        include_str!("../fixtures/untyped.yaml"),
    )
}

#[test]
fn without_declared_types_the_words_link_the_steps() {
    let p = untyped()
        .plan(
            "fetch https://example.com, summarize it and email the summary to ana@example.com",
            None,
        )
        .unwrap();
    let s = steps(&p);
    let tools: Vec<&str> = s.iter().map(|(t, _)| t.as_str()).collect();
    assert_eq!(tools, ["fetch_page", "summarize_text", "send_email"]);
    // "it" points at the page, "the summary" at what summarize_text made.
    assert_eq!(s[1].1, json!({"text": {"$ref": "s1/output"}}));
    assert_eq!(
        s[2].1,
        json!({"to": "ana@example.com", "body": {"$ref": "s2/output"}})
    );
    // Without a word pointing back, nothing flows.
    let apart = untyped()
        .plan(
            "fetch https://example.com and email ana@example.com hello",
            None,
        )
        .unwrap();
    assert!(
        apart.steps().iter().all(|s| s.input_refs.is_empty()),
        "{apart:?}"
    );
}

#[test]
fn a_link_by_words_alone_does_not_hide_a_request_said_twice() {
    let p = untyped()
        .plan(
            "I need to make a voice call to my friend. Please call this number 555-123-4567 for me.",
            None,
        )
        .unwrap();
    assert_eq!(
        steps(&p),
        [(
            "make_voice_call".into(),
            json!({"phone_number": "555-123-4567"})
        )]
    );
}

#[test]
fn several_languages_give_one_step_each() {
    let p = plan("translate \"good morning\" into French and German");
    let s = steps(&p);
    assert_eq!(
        s,
        [
            (
                "translate".into(),
                json!({"text": "good morning", "targetLanguage": "French"})
            ),
            (
                "translate".into(),
                json!({"text": "good morning", "targetLanguage": "German"})
            ),
        ]
    );
}

/// A file server's readers as MCP servers list them: one file at a time, several at
/// once, and a writer that takes a list of edits.
const READERS: &str = "
tools:
  - name: fs.read_text_file
    description: Read the complete contents of a file as text.
    effects: read
    input_schema:
      type: object
      properties:
        path: {type: string}
        head: {type: number, description: only the first N lines}
      required: [path]
  - name: fs.read_multiple_files
    description: Read the contents of multiple files simultaneously.
    effects: read
    input_schema:
      type: object
      properties:
        paths: {type: array, items: {type: string}}
      required: [paths]
  - name: fs.write_file
    description: Create a new file or overwrite one with new content.
    effects: destructive
    input_schema:
      type: object
      properties:
        path: {type: string}
        content: {type: string}
      required: [path, content]
";

steps_over!(readers, "readers.yaml", READERS);

steps_over!(
    /// The same readers with a second tool that reads several files at once.
    two_batch_readers,
    "two-batch-readers.yaml",
    &format!(
        "{READERS}  - name: fs.read_files_as_zip
    description: Read several files and return them as one zip archive.
    effects: read
    input_schema:
      type: object
      properties:
        files: {{type: array, items: {{type: string}}}}
      required: [files]
"
    )
);

#[test]
fn several_values_go_to_the_one_tool_that_takes_them_all() {
    assert_eq!(
        readers("read a.txt and b.txt"),
        [(
            "fs.read_multiple_files".into(),
            json!({"paths": ["a.txt", "b.txt"]})
        )]
    );
    let engine = crate::engine_over("readers.yaml", READERS);
    let why = |request: &str| {
        engine.plan(request, None).unwrap().steps()[0]
            .rationale
            .clone()
    };
    let three = why("read a.txt, b.txt and c.md");
    assert!(
        three.ends_with("; `fs.read_multiple_files` takes all 3 `paths` in one call"),
        "{three}"
    );
    let two = why("read a.txt and b.txt");
    assert!(two.ends_with("takes both `paths` in one call"), "{two}");
}

#[test]
fn a_list_tool_of_the_same_server_that_does_something_else_is_no_twin() {
    let catalog = format!(
        "{READERS}  - name: fs.get_file_info
    description: Retrieve detailed metadata about a file.
    effects: read
    input_schema:
      type: object
      properties:
        path: {{type: string}}
      required: [path]
"
    );
    let p = crate::engine_over("info.yaml", &catalog)
        .plan("get file info for a.txt and b.txt", None)
        .unwrap();
    let tools: Vec<&str> = p.steps().iter().map(|s| s.tool.as_str()).collect();
    assert_eq!(tools, ["fs.get_file_info", "fs.get_file_info"]);
}

#[test]
fn several_values_fan_out_where_no_one_tool_takes_them_all() {
    let each = |s: &[(String, Value)]| s.iter().map(|(t, _)| t.clone()).collect::<Vec<_>>();
    // Another argument was given: the list tool cannot take it.
    assert_eq!(
        each(&readers("read the first 5 lines of a.txt and b.txt")),
        ["fs.read_text_file", "fs.read_text_file"]
    );
    // Two tools read several files at once: which one is meant is not the planner's guess.
    assert_eq!(
        each(&two_batch_readers("read a.txt and b.txt")),
        ["fs.read_text_file", "fs.read_text_file"]
    );
}

#[test]
fn an_array_argument_takes_every_value() {
    let s = steps(&plan("read notes.txt and todo.txt"));
    assert_eq!(
        s[0],
        (
            "read_files".into(),
            json!({"paths": ["notes.txt", "todo.txt"]})
        )
    );
}

#[test]
fn typed_arguments_take_only_what_fits_their_schema() {
    let s = steps(&plan("export the sales table as CSV"));
    assert_eq!(s[0], ("export_table".into(), json!({"format": "csv"})));
    let s = steps(&plan("close the ticket about login"));
    assert!(s[0].1["key"].get("$placeholder").is_some(), "{:?}", s[0]);
    let s = steps(&plan("close ticket PAY-42"));
    assert_eq!(s[0].1, json!({"key": "PAY-42"}));
}

#[test]
fn plain_and_leaves_clauses_unordered() {
    let p = plan("fetch https://a.example.com and add 2 and 3");
    assert!(p.steps().iter().all(|s| s.group == 1 && s.after.is_empty()));
}

/// Whether a concrete value fits the property's schema (type, enum, pattern, format).
fn fits(v: &Value, schema: &Value) -> bool {
    match schema.get("type").and_then(Value::as_str) {
        Some("array") => v.as_array().is_some_and(|a| {
            a.iter()
                .all(|x| fits(x, schema.get("items").unwrap_or(&Value::Null)))
        }),
        Some("number") if !v.is_number() => false,
        Some("integer") if !(v.is_i64() || v.is_u64()) => false,
        Some("string") if !v.is_string() => false,
        _ => {
            let in_enum = schema
                .get("enum")
                .and_then(Value::as_array)
                .is_none_or(|e| e.contains(v));
            let s = v.as_str().unwrap_or_default();
            let pattern = schema
                .get("pattern")
                .and_then(Value::as_str)
                .is_none_or(|p| regex::Regex::new(p).unwrap().is_match(s));
            let format = match schema.get("format").and_then(Value::as_str) {
                Some("email") => s.contains('@') && !s.contains(' '),
                Some("uri") => s.contains("://") && !s.contains(' '),
                _ => true,
            };
            in_enum && pattern && format
        }
    }
}

fn symbolic(v: &Value) -> bool {
    v.get("$placeholder").is_some() || v.get("$ref").is_some()
}

const WORDS: &[&str] = &[
    "add",
    "email",
    "send",
    "export",
    "close",
    "fetch",
    "summarize",
    "translate",
    "write",
    "create",
    "move",
    "read",
    "it",
    "them",
    "the",
    "a",
    "file",
    "table",
    "ticket",
    "as",
    "csv",
    "json",
    "into",
    "french",
    "german",
    "and",
    "then",
    "to",
    "containing",
    "named",
    "2",
    "3",
    "12",
    "notes.txt",
    "b/c.md",
    "PAY-42",
    "ana@example.com",
    "https://example.com/x",
    "\"quoted words\"",
    "summary",
    "after",
    "that",
    ",",
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// A typed argument never holds text that fails its schema, and every reference —
    /// `input_refs`, `after`, `$ref` — points at an earlier step.
    #[test]
    fn typed_arguments_fit_and_references_point_back(
        picks in proptest::collection::vec(0..WORDS.len(), 1..14)
    ) {
        let request: Vec<&str> = picks.iter().map(|&i| WORDS[i]).collect();
        let request = request.join(" ");
        let Ok(p) = typed().plan(&request, None) else { return Ok(()) };
        let mut seen: Vec<&str> = Vec::new();
        for step in p.steps() {
            for r in step.input_refs.iter().chain(&step.after) {
                prop_assert!(seen.contains(&r.as_str()), "{request}: {} refers to {r}", step.id);
            }
            if let Some(tool) = typed().catalog().tool(&step.tool) {
                for (name, v) in &step.args {
                    if let Some(r) = v.get("$ref").and_then(Value::as_str) {
                        let id = r.split('/').next().unwrap_or_default();
                        prop_assert!(seen.contains(&id), "{request}: $ref {r} in {}", step.id);
                    }
                    if symbolic(v) {
                        continue;
                    }
                    let schema = tool.properties().find(|(n, _)| n == name).map(|(_, s)| s);
                    if let Some(schema) = schema {
                        prop_assert!(fits(v, schema), "{request}: {}.{name} = {v} fails {schema}", step.tool);
                    }
                }
            }
            seen.push(&step.id);
        }
    }
}

const MEDIA: &str = r"
tools:
  - name: sync_voiceover
    description: Synchronize a voiceover audio with the visuals of a video.
    input_schema:
      type: object
      properties:
        video: {type: string, description: the video}
        audio: {type: string, description: the audio}
      required: [video, audio]
  - name: transfer_style
    description: Apply the style of one image to the content of another image.
    input_schema:
      type: object
      properties:
        image: {type: string, description: the image}
        image_2: {type: string, description: the style image}
      required: [image, image_2]
  - name: estimate_depth
    description: Estimate the depth of the objects in an image.
    accepts: [image]
    produces: [image]
    input_schema:
      type: object
      properties:
        image: {type: string, description: the image}
      required: [image]
";

steps_over!(media, "media.yaml", MEDIA);

#[test]
fn an_argument_named_for_a_file_type_takes_files_of_that_type_only() {
    // The files are given in a clause that only presents them; the step's clause names
    // none, and the audio is not the video.
    assert_eq!(
        media(
            "I have a video (example.mp4) and a voiceover (example.wav). \
             Please synchronize the voiceover with the visuals of the video."
        ),
        [(
            "sync_voiceover".into(),
            json!({"video": "example.mp4", "audio": "example.wav"})
        )]
    );
    assert_eq!(
        media("apply the style of the image 'photo.jpg' to 'painting.png'"),
        [(
            "transfer_style".into(),
            json!({"image": "photo.jpg", "image_2": "painting.png"})
        )]
    );
    // No file given: a question, never the clause's words.
    let s = media("synchronize the voiceover with the visuals of the video");
    assert_eq!(s[0].0, "sync_voiceover");
    assert!(symbolic(&s[0].1["video"]), "{}", s[0].1);
    assert!(symbolic(&s[0].1["audio"]), "{}", s[0].1);
}

#[test]
fn a_sentence_that_asks_again_for_the_step_before_is_that_step() {
    // The second sentence points back at the image and routes to the same tool: running
    // the tool on its own result is not what was asked.
    assert_eq!(
        media(
            "I need to estimate the depth of objects in my image 'example.jpg'. Please \
             help me analyze this image to understand the depth of the objects in it."
        ),
        [("estimate_depth".into(), json!({"image": "example.jpg"}))]
    );
    // Ordered by "then", the second step is asked for in its own right.
    let s = media("estimate the depth of 'example.jpg', then estimate the depth of it");
    assert_eq!(s.len(), 2, "{s:?}");
    assert_eq!(s[1].1["image"], json!({"$ref": "s1/output"}));
}

#[test]
fn them_after_a_step_is_its_output_not_a_value_said_before() {
    static ENGINE: OnceLock<Engine> = OnceLock::new();
    let engine = engine(
        &ENGINE,
        "lyrics.yaml",
        include_str!("../fixtures/lyrics.yaml"),
    );
    for request in [
        // Two quotations: "them" is neither name.
        "Find the lyrics of 'Bohemian Rhapsody' by 'Queen' and then translate them to French",
        // One quotation, but "them" is several things: the lyrics.
        "Help me find the lyrics for the song 'Shape of You' by Ed Sheeran and then \
         translate them to Spanish",
    ] {
        let s = steps(&engine.plan(request, None).unwrap());
        assert_eq!(s.len(), 2, "{request}: {s:?}");
        assert_eq!(s[1].1["text"], json!({"$ref": "s1/output"}), "{request}");
    }
}

fn obfuscate() -> &'static Engine {
    static ENGINE: OnceLock<Engine> = OnceLock::new();
    engine(
        &ENGINE,
        "obfuscate.yaml",
        include_str!("../fixtures/obfuscate.yaml"),
    )
}

#[test]
fn a_verb_the_catalog_names_its_tools_for_heads_a_clause() {
    // "obfuscate" is no verb of the built-in vocabulary; the catalog's tool is named for
    // it and its description opens with it. As the clause's verb it names no argument
    // ("obfuscation_key" shares its stem) and is no value.
    let engine = obfuscate();
    for request in [
        "Calculate the GCD of 123 and 456 and then obfuscate the result with 'k1'",
        "Calculate the GCD of 123 and 456 and then obfuscate the result",
    ] {
        let s = steps(&engine.plan(request, None).unwrap());
        assert_eq!(s.len(), 2, "{request}: {s:?}");
        assert_eq!(s[1].1["data"], json!({"$ref": "s1/output"}), "{request}");
    }
    let s = steps(
        &engine
            .plan(
                "Calculate the GCD of 123 and 456 and then obfuscate the result with 'k1'",
                None,
            )
            .unwrap(),
    );
    assert_eq!(s[1].1["obfuscation_key"], json!("k1"));
}

#[test]
fn the_participle_of_an_earlier_steps_verb_names_its_output() {
    // `obfuscate_data` makes `obfuscated_data`, not a number; "the obfuscated number" is
    // still its output, because the tool is named for the verb.
    let engine = obfuscate();
    let s = steps(
        &engine
            .plan(
                "Obfuscate the data 'abc' with the key 'k1', then calculate the GCD of \
                 the obfuscated number and 12",
                None,
            )
            .unwrap(),
    );
    assert_eq!(s[1].0, "calculate_gcd", "{s:?}");
    assert!(
        s[1].1
            .as_object()
            .unwrap()
            .values()
            .any(|v| *v == json!({"$ref": "s1/output"})),
        "{s:?}"
    );
}

steps_over!(
    /// Tools whose arguments are named for what they hold and whose outputs are
    /// declared, as function-calling catalogs write them.
    ledger,
    "ledger.yaml",
    include_str!("../fixtures/ledger.yaml")
);

#[test]
fn a_value_goes_to_the_argument_whose_name_the_request_gives_beside_it() {
    // Named before the value, in another order than the schema's.
    assert_eq!(
        ledger("work out the profit with expenses of 5000 and revenue of 7000"),
        [(
            "work_out_profit".into(),
            json!({"revenue": 7000, "expenses": 5000})
        )]
    );
    // Named after the value ("a 5% interest rate"), and a thousands comma that neither
    // splits the request nor the number.
    assert_eq!(
        ledger(
            "calculate the loan payment for a principal of $10,000, a 5% interest rate \
             and a term of 5 years"
        ),
        [(
            "loan_payment".into(),
            json!({"principal": 10000, "interest_rate": 5, "loan_term": 5})
        )]
    );
}

#[test]
fn words_naming_an_earlier_output_link_to_the_step_that_makes_it() {
    // "the profit" is what the first step produces: the amount is a reference to it.
    let s = ledger(
        "work out the profit with expenses of 5000 and revenue of 7000, \
         then convert the profit to EUR",
    );
    assert_eq!(s[1].0, "convert_money");
    assert_eq!(s[1].1["amount"], json!({"$ref": "s1/output"}));
    assert_eq!(s[1].1["currency"], json!("EUR"));
    // A bare "it" after a step that makes something is that step's output, and it goes to
    // the argument named for content, not to the first in the schema.
    let s = ledger("tell me a random joke, then text it to 555");
    assert_eq!(
        s[1],
        (
            "text_message".into(),
            json!({"phone": "555", "message": {"$ref": "s1/output"}})
        )
    );
}

#[test]
fn a_word_written_before_an_arguments_name_is_its_value() {
    let s = ledger("calculate the trip distance between 'Lisbon' and 'Porto' using driving mode");
    assert_eq!(s[0].0, "travel_distance");
    assert_eq!(s[0].1["mode"], json!("driving"));
    // A capitalised name that ends in the argument's word is kept whole.
    let s = ledger("borrow 'Dune' from the Example Library");
    assert_eq!(s[0].0, "borrow_book");
    assert_eq!(s[0].1["library"], json!("Example Library"));
    // "a text message" names a kind of message, not its words: "it" stays the link.
    let s = ledger("tell me a random joke, then send it as a text message to 555");
    assert_eq!(s[1].0, "text_message");
    assert_eq!(s[1].1["message"], json!({"$ref": "s1/output"}));
}

#[test]
fn a_language_with_no_preposition_is_the_one_to_translate_into() {
    let s = ledger("get the translation of the word 'hello' in French");
    assert_eq!(s[0].0, "translate_words");
    assert_eq!(s[0].1["target_language"], json!("French"));
    assert_ne!(s[0].1["source_language"], json!("French"));
    // With the target marked ("to French"), a bare language is the source.
    let s = ledger("translate the English words 'good night' to French");
    assert_eq!(s[0].1["source_language"], json!("English"));
    assert_eq!(s[0].1["target_language"], json!("French"));
}

#[test]
fn a_free_text_value_is_not_the_words_that_restate_the_tool() {
    assert_eq!(
        ledger("report on the sales figures for laptops"),
        [("sales_report".into(), json!({"product": "laptops"}))]
    );
    // "from … to …" give where a journey starts and ends; a numeric date is a date.
    assert_eq!(
        ledger("find a bus from New York to Boston on 01/15/2024"),
        [(
            "find_bus".into(),
            json!({"origin": "New York", "destination": "Boston", "travel_date": "01/15/2024"})
        )]
    );
}

#[test]
fn a_date_in_words_is_iso_for_a_date_argument_and_one_in_digits_stays() {
    // A list written in brackets is a list of its quoted items.
    assert_eq!(
        ledger(
            "schedule a call for the 1st of January, 2023 with attendees ['John', 'Jane', 'Jim']"
        ),
        [(
            "schedule_call".into(),
            json!({"attendees": ["John", "Jane", "Jim"], "date": "2023-01-01"})
        )]
    );
    assert_eq!(
        ledger("schedule a call on 10/05/2023 with attendees 'Ana' and 'Bo'"),
        [(
            "schedule_call".into(),
            json!({"attendees": ["Ana", "Bo"], "date": "10/05/2023"})
        )]
    );
}

#[test]
fn lists_makers_currencies_and_written_dates_go_where_their_words_say() {
    // A list argument takes every value listed after its name; a date whose description
    // asks for YYYY-MM-DD is written so.
    assert_eq!(
        ledger(
            "book a meeting with the participants 'Alice', 'Bob' and 'Charlie' on January 5, 2024"
        ),
        [(
            "book_meeting".into(),
            json!({"participants": ["Alice", "Bob", "Charlie"], "day": "2024-01-05"})
        )]
    );
    // "by" names who made a work.
    assert_eq!(
        ledger("look up the lyrics of the song 'Imagine' by John Lennon"),
        [(
            "song_lyrics".into(),
            json!({"title": "Imagine", "artist": "John Lennon"})
        )]
    );
    // A `to` its description does not call an address takes words.
    assert_eq!(
        ledger("exchange 100 from USD to EUR"),
        [(
            "exchange".into(),
            json!({"amount": 100, "from": "USD", "to": "EUR"})
        )]
    );
}

#[test]
fn a_bracketed_list_of_words_is_one_value_per_item_kept_together() {
    // The last item of a list stands just before the next argument's name; it stays
    // with its list, and a list of numbers stays numbers.
    assert_eq!(
        ledger("work out the grade point average with grades [A, B+, F], credit hours [3, 4, 2]"),
        [(
            "grade_average".into(),
            json!({"grades": ["A", "B+", "F"], "credit_hours": [3, 4, 2]})
        )]
    );
}

#[test]
fn the_ends_of_a_range_or_a_translation_go_where_their_words_say() {
    // "to French" is where the translation goes, never where it comes from.
    let s = ledger("translate 'good morning' to French");
    assert_eq!(s[0].0, "translate");
    assert_eq!(s[0].1["target_language"], json!("French"));
    assert_eq!(s[0].1["text"], json!("good morning"));
    assert!(s[0].1["source_language"].get("$placeholder").is_some());
    // "between A and B" gives both ends at once.
    assert_eq!(
        ledger("find a bus between New York and Boston on 01/15/2024"),
        [(
            "find_bus".into(),
            json!({"origin": "New York", "destination": "Boston", "travel_date": "01/15/2024"})
        )]
    );
}

#[test]
fn the_result_phone_numbers_and_one_argument_per_earlier_output() {
    // "the result" names whatever the step before made.
    let s = ledger(
        "work out the profit with expenses of 5000 and revenue of 7000, \
         then convert the result to EUR",
    );
    assert_eq!(s[1].1["amount"], json!({"$ref": "s1/output"}));
    // A phone number keeps its sign and its dashes.
    let s = ledger("tell me a random joke, then text it to +1234567890");
    assert_eq!(s[1].1["phone"], json!("+1234567890"));
    let s = ledger("tell me a random joke, then text it to 555-123-4567");
    assert_eq!(s[1].1["phone"], json!("555-123-4567"));
    // An earlier output fills one argument, not every one the request leaves open.
    let s = ledger("measure the distance between Paris and Berlin, then convert it into miles");
    assert_eq!(
        s[0],
        (
            "measure_distance".into(),
            json!({"origin": "Paris", "destination": "Berlin"})
        )
    );
    assert_eq!(s[1].0, "convert_units");
    assert_eq!(s[1].1["distance"], json!({"$ref": "s1/output"}));
    assert_eq!(s[1].1["to"], json!("miles"));
    assert!(s[1].1["from"].get("$placeholder").is_some(), "{:?}", s[1]);
}

/// Tools that take ids other tools look up, as REST APIs imported from an API
/// description or an MCP server do.
const LOOKUPS: &str = include_str!("../fixtures/lookups.yaml");

fn lookups(request: &str) -> Plan {
    static ENGINE: OnceLock<Engine> = OnceLock::new();
    engine(&ENGINE, "lookups.yaml", LOOKUPS)
        .plan(request, None)
        .unwrap()
}

#[test]
fn an_id_the_request_cannot_give_is_looked_up_by_the_one_tool_that_makes_it() {
    // One lookup per end of the route, each taking the name its end's words give.
    let p = lookups("search flights from New York to London on August 15, 2024");
    assert_eq!(
        steps(&p),
        [
            ("find_airport".into(), json!({"query": "New York"})),
            ("find_airport".into(), json!({"query": "London"})),
            (
                "search_flights".into(),
                json!({
                    "originSkyId": {"$ref": "s1/output"},
                    "destinationSkyId": {"$ref": "s2/output"},
                    "originEntityId": {"$ref": "s1/output"},
                    "destinationEntityId": {"$ref": "s2/output"},
                    "date": "2024-08-15",
                })
            ),
        ]
    );
    assert_eq!(p.steps()[2].input_refs, ["s1", "s2"]);
    assert!(p.steps()[2].group > p.steps()[0].group);
    assert!(
        p.clarity().missing_criteria().is_empty(),
        "{:?}",
        p.clarity().missing_criteria()
    );
    // Without a prefix the lookup takes the clause's proper name.
    let p = lookups("give me an overview of Beyonce");
    assert_eq!(
        steps(&p),
        [
            ("artist_id_by_name".into(), json!({"name": "Beyonce"})),
            (
                "artist_overview".into(),
                json!({"artistId": {"$ref": "s1/output"}})
            ),
        ]
    );
}

#[test]
fn a_name_the_request_leaves_open_is_looked_up_and_a_kind_is_no_name() {
    // "a Chinese restaurant" says what kind of restaurant, not which: the one tool that
    // makes restaurant names finds one first, of that kind.
    let p = lookups("book a table at a Chinese restaurant in Boston at 7 pm");
    assert_eq!(
        steps(&p),
        [
            (
                "find_restaurants".into(),
                json!({"city": "Boston", "cuisine": "Chinese"})
            ),
            (
                "reserve_restaurant".into(),
                json!({
                    "restaurant_name": {"$ref": "s1/output"},
                    "city": "Boston",
                    "time": "7 pm",
                })
            ),
        ]
    );
    assert_eq!(p.steps()[1].input_refs, ["s1"]);
    // A restaurant the request names needs no search.
    let p = lookups("book a table at the Golden Dragon in Boston at 7 pm");
    assert_eq!(
        steps(&p),
        [(
            "reserve_restaurant".into(),
            json!({"restaurant_name": "Golden Dragon", "city": "Boston", "time": "7 pm"})
        )]
    );
}

#[test]
fn an_id_links_to_the_step_whose_product_names_it_most_fully() {
    // The overview makes an `id` too, but `artist_id` names `artistId` whole: the albums
    // take the looked-up id, not the overview.
    let p = lookups("give me an overview of Beyonce and list her albums");
    assert_eq!(
        steps(&p)[2],
        (
            "list_albums".into(),
            json!({"artistId": {"$ref": "s1/output"}})
        )
    );
}

/// Tools of several services, each named for its service as imported APIs are.
const SERVICES: &str = include_str!("../fixtures/services.yaml");

#[test]
fn a_capitalised_word_naming_a_service_routes_like_any_other_word() {
    static ENGINE: OnceLock<Engine> = OnceLock::new();
    let engine = engine(&ENGINE, "services.yaml", SERVICES);
    let first = |request: &str| engine.plan(request, None).unwrap().steps()[0].tool.clone();
    // "Spotify" is a word of a tool's name, not a value like "Eminem".
    assert_eq!(
        first("Find the biography of Eminem from Spotify"),
        "spotify_artist_overview"
    );
}

/// Tools of one trip, as slot-filling dialog APIs declare them.
const TRIPS: &str = include_str!("../fixtures/trips.yaml");

fn trips(request: &str) -> Vec<(String, Value)> {
    static ENGINE: OnceLock<Engine> = OnceLock::new();
    steps(
        &engine(&ENGINE, "trips.yaml", TRIPS)
            .plan(request, None)
            .unwrap(),
    )
}

#[test]
fn values_said_once_carry_to_later_steps_and_in_gives_a_location() {
    // Where and when the request said once hold for the ticket too; what only the
    // search can tell (the bus's time) is its output.
    let s = trips("find a bus from New York to Boston on 01/15/2024 and buy me a ticket");
    assert_eq!(s[1].0, "buy_bus_ticket");
    assert_eq!(
        s[1].1,
        json!({
            "origin": "New York",
            "destination": "Boston",
            "travel_date": "01/15/2024",
            "departure_time": {"$ref": "s1/output"},
        })
    );
    assert_eq!(
        trips("find hotels in Lisbon"),
        [("find_hotels".into(), json!({"location": "Lisbon"}))]
    );
}

/// A tool whose product a later clause names, and the tool that clause asks for.
const SALARY: &str = include_str!("../fixtures/salary.yaml");

#[test]
fn words_naming_an_earlier_output_do_not_route_the_clause_back_to_its_maker() {
    static ENGINE: OnceLock<Engine> = OnceLock::new();
    let engine = engine(&ENGINE, "salary.yaml", SALARY);
    let p = engine
        .plan(
            "calculate the gross salary for a basic salary of 5000 and an allowance of 500, \
             then convert the gross salary from USD to EUR",
            None,
        )
        .unwrap();
    assert_eq!(
        steps(&p),
        [
            (
                "calculate_gross_salary".into(),
                json!({"basic_salary": 5000, "allowance": 500})
            ),
            (
                "convert_currency".into(),
                json!({"amount": {"$ref": "s1/output"}, "from": "USD", "to": "EUR"})
            ),
        ]
    );
}

#[test]
fn the_output_of_an_earlier_step_does_not_route_the_clause_back_to_its_maker() {
    static ENGINE: OnceLock<Engine> = OnceLock::new();
    let engine = engine(&ENGINE, "salary.yaml", SALARY);
    let p = engine
        .plan(
            "I want to execute a program with the path '/path/to/program', \
             then I want to encrypt the output of the program.",
            None,
        )
        .unwrap();
    let tools: Vec<&str> = p.steps().iter().map(|s| s.tool.as_str()).collect();
    assert_eq!(tools, ["execute_program", "encrypt_data"]);
}

/// The plan of a request that makes one step: `tool` with `args`.
fn one_step(tool: &str, args: Value) -> Vec<(String, Value)> {
    vec![(tool.to_string(), args)]
}

steps_over!(
    errands,
    "errands.yaml",
    include_str!("../fixtures/errands.yaml")
);

#[test]
fn a_value_a_description_lists_fills_the_argument_and_names_the_tool() {
    // "buy" names no tool's words but `side`'s examples; the verb is the value.
    assert_eq!(
        errands("I want to buy Tesla shares"),
        one_step("trade_shares", json!({"shares": "Tesla", "side": "buy"}))
    );
    assert_eq!(
        errands("please install the 'ripgrep' package"),
        one_step(
            "manage_package",
            json!({"package": "ripgrep", "action": "install"})
        )
    );
}

#[test]
fn the_preposition_a_description_ends_with_introduces_the_value() {
    // "to" before a verb is no preposition; the listed service ends the address.
    assert_eq!(
        errands("book a car to take me to 221B Baker Street using Lyft"),
        one_step(
            "book_ride",
            json!({"place": "221B Baker Street", "service": "Lyft"})
        )
    );
    // The article before a name is not the name's.
    assert_eq!(
        errands("book a ride to the Grand Hotel with Lyft"),
        one_step(
            "book_ride",
            json!({"place": "Grand Hotel", "service": "Lyft"})
        )
    );
    // A name that starts with a listed value is kept whole.
    assert_eq!(
        errands("book a ride to 5 Elm Road with Bolt Business"),
        one_step(
            "book_ride",
            json!({"place": "5 Elm Road", "service": "Bolt Business"})
        )
    );
}

#[test]
fn a_number_after_the_head_word_of_a_text_argument_is_its_value() {
    assert_eq!(
        errands("then file my income return for the year 2021"),
        one_step("file_return", json!({"year": "2021"}))
    );
}

#[test]
fn a_place_ends_before_a_preposition_that_brings_its_own_value() {
    // No argument takes the 3, and still it is not the city's.
    assert_eq!(
        errands("rent a car in San Diego for 3 days starting tomorrow"),
        one_step("rent_car", json!({"city": "San Diego"}))
    );
}

#[test]
fn a_reference_goes_to_the_argument_named_a_few_words_before_it() {
    let s = errands(
        "measure the distance from Lisbon to Porto, then create an invoice for a client \
         named John Doe with the note 'trip' and an amount equal to the distance",
    );
    assert_eq!(s[1].0, "create_invoice", "{s:?}");
    assert_eq!(s[1].1["amount"], json!({"$ref": "s1/output"}), "{s:?}");
    // A surname that stems like a function word ("Doe", "does") is still the name's.
    assert_eq!(s[1].1["client_name"], json!("John Doe"), "{s:?}");
}

#[test]
fn a_reference_goes_to_the_argument_it_is_given_as() {
    let plan = errands(
        "record a voice memo for 30 seconds, then save a contact Ada Lovelace 5551234567 \
         with the recorded memo as her ringtone",
    );
    assert_eq!(plan[1].0, "save_contact");
    assert_eq!(plan[1].1["ringtone"], json!({"$ref": "s1/output"}));
    assert_eq!(plan[1].1["phone"], json!("5551234567"));
}

#[test]
fn a_phone_number_fills_its_argument_as_written() {
    for number in ["555-0134", "(555) 123-4567", "+44 20 7946 0958"] {
        let plan = errands(&format!("save a contact named Ana with number {number}"));
        assert_eq!(
            plan,
            one_step("save_contact", json!({"name": "Ana", "phone": number})),
            "{number}"
        );
    }
}

#[test]
fn a_quoted_date_is_a_date_and_the_tools_own_words_name_no_reference() {
    let plan = errands(
        "sum up the sales of 'Lamps' from '2024-01-01' to '2024-06-30' and then work out \
         the sales tax on the total sales amount",
    );
    assert_eq!(
        plan[0].1,
        json!({"product": "Lamps", "start_date": "2024-01-01", "end_date": "2024-06-30"})
    );
    // "the sales tax" is this tool's own thing; "the total sales amount" is one phrase,
    // so the earlier step's output fills one argument.
    assert_eq!(plan[1].1["amount"], json!({"$ref": "s1/output"}));
    assert!(
        plan[1].1["tax_rate"].get("$placeholder").is_some(),
        "{}",
        plan[1].1
    );
}

#[test]
fn a_one_word_listed_value_names_the_tool_and_a_name_ends_before_other_words() {
    assert_eq!(
        errands("Transfer $300 from my savings at Chase to my sister's account"),
        one_step(
            "bank_errand",
            json!({"instruction": "transfer", "bank": "Chase"})
        )
    );
    assert_eq!(
        errands("please deposit this cheque at Bank of America"),
        one_step(
            "bank_errand",
            json!({"instruction": "deposit", "bank": "Bank of America"})
        )
    );
}

#[test]
fn a_sentence_that_gives_the_value_an_earlier_request_lacked_completes_it() {
    // Said twice: the first sentence chose the tool, the second gives its number.
    assert_eq!(
        errands(
            "I need to make a voice call to my friend. Please call this number 555-123-4567 for me."
        ),
        one_step("voice_call", json!({"phone_number": "555-123-4567"}))
    );
    // A second request of its own, whose value the first tool could take, stays apart.
    let two = errands("I need to make a voice call. Record a voice memo for 30 seconds.");
    assert_eq!(two.len(), 2);
    assert_eq!(two[1], ("record_voice".into(), json!({"seconds": 30})));
    // So does a request ordered after it.
    let ordered = errands("Make a voice call. Then call 555-123-4567.");
    assert_eq!(ordered.len(), 2);
    assert_eq!(
        ordered[0].1,
        json!({"phone_number": {"$placeholder": "The phone number to make the voice call to"}})
    );
}

#[test]
fn a_number_in_another_unit_of_the_arguments_measure_is_converted() {
    // "The search radius in meters" (an integer) and "The weight in kilograms".
    assert_eq!(
        errands("find cafes within 2 km"),
        one_step("find_places", json!({"kind": "cafes", "radius": 2000}))
    );
    assert_eq!(
        errands("find places within 1.5 miles"),
        one_step("find_places", json!({"kind": "places", "radius": 2414}))
    );
    assert_eq!(
        errands("find cafes within 300 m"),
        one_step("find_places", json!({"kind": "cafes", "radius": 300}))
    );
    assert_eq!(
        errands("log my body weight, 154 lbs"),
        one_step("log_weight", json!({"weight": 69.853_224_98}))
    );
    // Written onto the number, or in the argument's own unit, it is taken as it is.
    assert_eq!(
        errands("log my body weight of 70kg"),
        one_step("log_weight", json!({"weight": 70}))
    );
    // The argument's name may say its unit.
    assert_eq!(
        errands("record a voice memo for 2 minutes"),
        one_step("record_voice", json!({"seconds": 120}))
    );
    // A unit of another measure converts nothing.
    assert_eq!(
        errands("find cafes within 5 minutes"),
        one_step("find_places", json!({"kind": "cafes", "radius": 5}))
    );
}

#[test]
fn a_percentage_is_a_fraction_where_the_argument_takes_a_decimal() {
    // "The rate as a decimal": 8% is 0.08, the sign at the clause's very end too.
    assert_eq!(
        errands("work out the sales tax on a purchase of $50 at a tax rate of 8%"),
        one_step("sales_tax", json!({"amount": 50, "tax_rate": 0.08}))
    );
    assert_eq!(
        errands("work out the sales tax on $120 with a tax rate of 7.5 percent."),
        one_step("sales_tax", json!({"amount": 120, "tax_rate": 0.075}))
    );
    // "The percentage of the bill to tip" keeps the number as written.
    assert_eq!(
        errands("work out the tip for a bill of $80 at 15%"),
        one_step("tip", json!({"bill": 80, "percent": 15}))
    );
}

fn stocks() -> &'static Engine {
    static ENGINE: OnceLock<Engine> = OnceLock::new();
    engine(
        &ENGINE,
        "stocks.yaml",
        include_str!("../fixtures/stocks.yaml"),
    )
}

#[test]
fn an_argument_described_as_a_name_takes_the_name_not_the_clause() {
    let s = steps(
        &stocks()
            .plan("I want to know the current stock price of Microsoft", None)
            .unwrap(),
    );
    assert_eq!(s[0].0, "get_stock_price");
    assert_eq!(s[0].1["company"], json!("Microsoft"));
    // No name written: a question, not the clause's words.
    let p = stocks()
        .plan("I want to know the current stock price", None)
        .unwrap();
    let company = &p.steps()[0].args["company"];
    assert!(company.get("$placeholder").is_some(), "{company}");
}

#[test]
fn a_name_written_after_its_arguments_name_is_the_value() {
    for request in [
        "get the balance sheet for the ticker MSFT",
        "get the balance sheet for Microsoft (ticker id is MSFT)",
        "get the balance sheet for Microsoft, whose ticker is MSFT",
    ] {
        let s = steps(&stocks().plan(request, None).unwrap());
        assert_eq!(
            s,
            [("get_balance_sheet".into(), json!({"ticker": "MSFT"}))],
            "{request}"
        );
    }
}

#[test]
fn an_object_that_only_restates_what_the_tool_makes_fills_nothing() {
    // "its financial statements" is what the tool makes of the company: the id it needs
    // is never those words; "its" says it comes from the company the step before found.
    let p = stocks()
        .plan(
            "get the balance sheet for the ticker MSFT and then retrieve its financial statements",
            None,
        )
        .unwrap();
    assert_eq!(p.steps()[1].tool, "get_financial_statements");
    let cik = &p.steps()[1].args["cik"];
    assert_eq!(cik, &json!({"$ref": "s1/output"}), "{cik}");
}

#[test]
fn a_pronoun_before_a_verb_particle_still_points_back() {
    static ENGINE: OnceLock<Engine> = OnceLock::new();
    let e = engine(
        &ENGINE,
        "recorder.yaml",
        "tools:
  - name: record_audio
    description: Record audio for a duration
    input_schema:
      type: object
      properties:
        duration: {type: integer, description: seconds to record}
      required: [duration]
    produces: [audio]
  - name: play_music
    description: Play music
    input_schema:
      type: object
      properties:
        song: {type: string, description: The name of the song to play}
      required: [song]
",
    );
    // "back" closes the verb; "it" is still the recording.
    let p = e
        .plan("record audio for 5 minutes and then play it back", None)
        .unwrap();
    assert_eq!(
        steps(&p)[1],
        ("play_music".into(), json!({"song": {"$ref": "s1/output"}}))
    );
    assert_eq!(p.steps()[1].input_refs, ["s1"]);
}

#[test]
fn a_value_after_a_short_phrase_naming_it_is_the_value() {
    for (request, data) in [
        (
            "obfuscate the birthdate '1990-01-01' using the key 'k1'",
            "1990-01-01",
        ),
        ("obfuscate the code 4411 with the key 'k1'", "4411"),
        // A longer phrase is the value itself.
        (
            "obfuscate the text of the old family recipe with the key 'k1'",
            "the text of the old family recipe",
        ),
    ] {
        let s = steps(&stocks().plan(request, None).unwrap());
        assert_eq!(s[0].1["data"], json!(data), "{request}: {s:?}");
        assert_eq!(s[0].1["obfuscation_key"], json!("k1"), "{request}");
    }
}

#[test]
fn a_place_ends_where_a_relative_clause_describes_it() {
    static ENGINE: OnceLock<Engine> = OnceLock::new();
    let e = engine(
        &ENGINE,
        "houses.yaml",
        "tools:
  - name: search_house
    description: Search for a house to stay in
    input_schema:
      type: object
      properties:
        where_to: {type: string, description: The location to search in}
      required: [where_to]
",
    );
    let s = steps(
        &e.plan(
            "I want to find a house in San Francisco that has laundry service",
            None,
        )
        .unwrap(),
    );
    assert_eq!(s[0].1["where_to"], json!("San Francisco"), "{s:?}");
}

#[test]
fn a_description_that_says_what_an_argument_is_brings_its_cues() {
    static ENGINE: OnceLock<Engine> = OnceLock::new();
    let e = engine(
        &ENGINE,
        "hotels.yaml",
        "tools:
  - name: search_hotel
    description: Search for a hotel
    input_schema:
      type: object
      properties:
        destination: {type: string, description: Location of the hotel}
      required: [destination]
",
    );
    for request in ["Find a 4-star hotel in London", "Find a hotel to London"] {
        let s = steps(&e.plan(request, None).unwrap());
        assert_eq!(s[0].1["destination"], json!("London"), "{request}: {s:?}");
    }
}

steps_over!(
    geometry,
    "geometry.yaml",
    include_str!("../fixtures/geometry.yaml")
);

#[test]
fn a_list_argument_takes_each_listed_name_and_stops_at_another_arguments_words() {
    assert_eq!(
        geometry(
            "find the best route between New York, Los Angeles, and San Francisco \
             with mode of transport as driving"
        ),
        one_step(
            "plan_route",
            json!({
                "locations": ["New York", "Los Angeles", "San Francisco"],
                "mode_of_transport": "driving"
            })
        )
    );
    // "D.C." is an abbreviation, not a file named "D.C": the quotation stays whole.
    assert_eq!(
        geometry("calculate the best route between 'Boston' and 'Washington D.C.'"),
        one_step(
            "plan_route",
            json!({"locations": ["Boston", "Washington D.C."]})
        )
    );
}

#[test]
fn a_kind_is_its_noun_and_a_list_of_measures_takes_the_numbers() {
    assert_eq!(
        geometry("calculate the area of a rectangle with length 5 meters and width 3 meters"),
        one_step(
            "shape_area",
            json!({"shape": "rectangle", "dimensions": [5, 3]})
        )
    );
    assert_eq!(
        geometry("calculate the area of a circle with a radius of 2.5"),
        one_step(
            "shape_area",
            json!({"shape": "circle", "dimensions": [2.5]})
        )
    );
    // Numbers named for the list are numbers, not text, when the schema types no items.
    assert_eq!(
        geometry("calculate the area of a rectangle with dimensions 10 and 20"),
        one_step(
            "shape_area",
            json!({"shape": "rectangle", "dimensions": [10, 20]})
        )
    );
}

#[test]
fn a_value_said_earlier_and_named_again_is_that_value() {
    // "the expenses" is the 5000 the first step was given; "the profit" its output.
    let s = ledger(
        "work out the profit with expenses of 5000 and revenue of 7000, \
         then calculate the GCD of the profit and the expenses",
    );
    assert_eq!(s[1].0, "calculate_gcd");
    assert_eq!(s[1].1, json!({"num1": {"$ref": "s1/output"}, "num2": 5000}));
}

#[test]
fn both_before_an_output_fills_two_arguments_with_it() {
    let s = ledger(
        "report on the sales figures for the product 'Laptop', \
         then calculate the greatest common divisor of both the values",
    );
    assert_eq!(s[1].0, "calculate_gcd");
    assert_eq!(
        s[1].1,
        json!({"num1": {"$ref": "s1/output"}, "num2": {"$ref": "s1/output"}})
    );
    // Without "both", the output fills one argument and the other is asked for.
    let s = ledger(
        "report on the sales figures for the product 'Laptop', \
         then calculate the greatest common divisor of the values",
    );
    assert!(s[1].1["num2"].get("$placeholder").is_some(), "{s:?}");
}

#[test]
fn the_total_or_the_resulting_figure_is_the_step_befores_output() {
    let s = ledger(
        "work out the profit with expenses of 5000 and revenue of 7000, \
         then calculate the square of the total",
    );
    assert_eq!(
        s[1],
        (
            "square_number".into(),
            json!({"number": {"$ref": "s1/output"}})
        )
    );
    let s = ledger(
        "work out the profit with expenses of 5000 and revenue of 7000, \
         then text the resulting figure to 555-123-4567",
    );
    assert_eq!(s[1].1["message"], json!({"$ref": "s1/output"}), "{s:?}");
}

#[test]
fn a_capitalised_word_before_the_tools_object_is_the_kind_asked_for() {
    assert_eq!(
        ledger("find Italian restaurants in Boston"),
        one_step(
            "find_restaurants",
            json!({"location": "Boston", "cuisine": "Italian"})
        )
    );
    // Two capitalised words name a place, not a kind.
    assert_eq!(
        ledger("find New York restaurants"),
        one_step("find_restaurants", json!({"location": "New York"}))
    );
}

#[test]
fn named_values_listed_after_a_comma_or_and_stay_with_their_step() {
    // "notes 'Milk, eggs'" reads as a verb and its object on its own; after a value its
    // own name gave, it is one more named value of the same step.
    assert_eq!(
        errands(
            "add a task with the title 'Buy groceries', notes 'Milk, eggs', \
             and due date '2023-12-20'"
        ),
        one_step(
            "add_task",
            json!({"title": "Buy groceries", "notes": "Milk, eggs", "due_date": "2023-12-20"})
        )
    );
    // A bare verb after a named value is still a request of its own.
    let s = errands("add a task with the title 'Buy groceries' and note 'ask Ana'");
    assert_eq!(s.len(), 2, "{s:?}");
}

#[test]
fn a_named_value_after_a_comma_stays_with_its_step_after_an_unvalued_item() {
    // "notes equal to the shopping list" names no value; the title before it did, so
    // "due date '…'" after the comma is one more item of the same list.
    let s = errands(
        "add a task with the title 'Buy groceries' with notes equal to the shopping list, \
         due date '2023-12-20'",
    );
    assert_eq!(s.len(), 1, "{s:?}");
    assert_eq!(s[0].1["due_date"], json!("2023-12-20"), "{s:?}");
}

#[test]
fn two_numbers_of_one_range_are_one_value() {
    for (request, range) in [
        (
            "find a product with query 'laptop' and a price range of $100 - $200",
            "$100-$200",
        ),
        (
            "find a product with query 'laptop' and a price range between 500 and 1000",
            "500-1000",
        ),
    ] {
        assert_eq!(
            errands(request),
            one_step(
                "find_product",
                json!({"query": "laptop", "price_range": range})
            ),
            "{request}"
        );
    }
}

#[test]
fn that_before_an_argument_name_points_at_the_step_before() {
    // The profit is not called an amount anywhere; "that amount" can only point back.
    let s = ledger(
        "work out the profit with expenses of 5000 and revenue of 7000, \
         then convert that amount to EUR",
    );
    assert_eq!(s[1].0, "convert_money");
    assert_eq!(s[1].1["amount"], json!({"$ref": "s1/output"}));
}

#[test]
fn a_list_inside_one_quotation_is_its_items() {
    let s = ledger("book a meeting with participants 'John Doe, Jane Doe' on day '2024-05-02'");
    assert_eq!(
        s,
        one_step(
            "book_meeting",
            json!({"participants": ["John Doe", "Jane Doe"], "day": "2024-05-02"})
        )
    );
}

#[test]
fn a_number_before_to_is_no_range() {
    let s = ledger("send the message 10,000 to 555-0100");
    assert!(
        s.iter()
            .all(|(_, a)| a["message"] != json!("10,000-555-0100")),
        "{s:?}"
    );
}

#[test]
fn it_is_the_nearest_clause_before_not_a_value_further_back() {
    let s = ledger(
        "report on the sales figures for 'laptops', then tell me a random joke and text it to 555",
    );
    let text = s.iter().find(|(t, _)| t == "text_message").unwrap();
    assert_eq!(text.1["message"], json!({"$ref": "s2/output"}), "{s:?}");
}

#[test]
fn words_that_name_a_value_written_after_them_are_no_reference() {
    let s = ledger(
        "calculate the square of 25, then calculate the GCD of the result and the number 10",
    );
    assert_eq!(s[1].0, "calculate_gcd");
    assert_eq!(s[1].1, json!({"num1": {"$ref": "s1/output"}, "num2": 10}));
}

#[test]
fn a_participle_names_the_step_whose_product_follows_it() {
    // Both steps calculate; "the calculated profit" is the first one's.
    let s = ledger(
        "calculate the profit with expenses of 5000 and revenue of 7000, calculate the square \
         of 12, then convert the calculated profit to EUR",
    );
    let convert = s.iter().find(|(t, _)| t == "convert_money").unwrap();
    assert_eq!(convert.1["amount"], json!({"$ref": "s1/output"}), "{s:?}");
}

#[test]
fn what_belongs_to_an_earlier_steps_thing_is_its_output() {
    for request in [
        "calculate the square of 12, then text the square's digits to 555",
        "calculate the square of 12, then text the squared value to 555",
    ] {
        let s = ledger(request);
        let text = s.iter().find(|(t, _)| t == "text_message").unwrap();
        assert_eq!(
            text.1["message"],
            json!({"$ref": "s1/output"}),
            "{request}: {s:?}"
        );
    }
}

#[test]
fn a_comparison_between_a_name_and_its_value_still_names_it() {
    assert_eq!(
        geometry(
            "recommend films in the genre 'Action' with a rating greater than or equal to 7 \
             made after 2010"
        ),
        one_step(
            "recommend_films",
            json!({"genre": "Action", "year": 2010, "rating": 7})
        )
    );
}

#[test]
fn a_value_given_as_an_argument_goes_to_it() {
    assert_eq!(
        ledger("work out the profit with 5000 as expenses and 7000 as revenue"),
        one_step(
            "work_out_profit",
            json!({"revenue": 7000, "expenses": 5000})
        )
    );
}

#[test]
fn their_before_a_product_points_at_the_step_that_made_it() {
    let s = ledger(
        "calculate the age of a person born on 1990-01-01, then calculate the GCD of their age and 36",
    );
    assert_eq!(s[1].0, "calculate_gcd");
    assert_eq!(s[1].1, json!({"num1": {"$ref": "s1/output"}, "num2": 36}));
}

#[test]
fn a_range_ends_a_named_value_and_the_next_one_stays_in_the_clause() {
    assert_eq!(
        errands("find a product with a price range of $100-$500 and query 'laptop'"),
        one_step(
            "find_product",
            json!({"query": "laptop", "price_range": "$100-$500"})
        )
    );
}

steps_over!(
    filings,
    "filings.yaml",
    include_str!("../fixtures/filings.yaml")
);

#[test]
fn a_code_a_description_legend_lists_fills_its_argument() {
    // "10-K = Annual Report | 10-Q = …" lists the codes `formtype` takes; the name before
    // the parenthesis does not run into it.
    assert_eq!(
        filings("Fetch the balance sheet for IBM (form 10-K)"),
        one_step(
            "sec_balance_sheet",
            json!({"ticker": "IBM", "formtype": "10-K"})
        )
    );
    assert_eq!(
        filings("Get the balance sheet for MSFT as a 10-Q"),
        one_step(
            "sec_balance_sheet",
            json!({"ticker": "MSFT", "formtype": "10-Q"})
        )
    );
}

#[test]
fn a_possessive_after_the_verb_gives_the_identifiers_the_step_before_made() {
    // "its" statements belong to what the balance sheet step found: both identifiers
    // (named only by their descriptions) take its output.
    let s =
        filings("get the balance sheet for ticker MSFT and then retrieve its financial statements");
    assert_eq!(
        s[1],
        (
            "sec_statements".into(),
            json!({"cik": {"$ref": "s1/output"}, "accessionNumber": {"$ref": "s1/output"}})
        )
    );
    // Without the possessive, nothing says the identifiers come from that step.
    let s = filings("get the balance sheet for ticker MSFT and then retrieve financial statements");
    assert!(
        s[1].1["accessionNumber"].get("$placeholder").is_some(),
        "{s:?}"
    );
}

steps_over!(
    /// An agent maker whose description uses the words requests describe agents with,
    /// and a scheduler that runs what it makes.
    studio,
    "studio.yaml",
    r"
tools:
  - name: create_agent
    description: Create one agent with instructions and tools, for example one that watches a saved search.
    keywords: [create an agent, new agent]
    input_schema: {type: object, properties: {instructions: {type: string}}, required: [instructions]}
    produces: [agent]
    effects: write
  - name: create_workflow
    description: Run an agent on a schedule.
    keywords: [schedule, every]
    input_schema: {type: object, properties: {schedule: {type: string}}, required: [schedule]}
    accepts: [agent]
    effects: write
"
);

#[test]
fn what_a_relative_clause_says_is_the_instructions_and_a_bare_verb_after_it_is_not() {
    // "watches" is a word of the tool's description, but after "that" it is what the
    // agent is to do; "and run it every Monday at 9" asks for the schedule step.
    let s = studio("create an agent that watches my inbox and run it every monday at 9");
    assert_eq!(s[0].0, "create_agent", "{s:?}");
    assert_eq!(s[0].1["instructions"], "watches my inbox", "{s:?}");
    assert_eq!(s.last().unwrap().0, "create_workflow", "{s:?}");
    // An inflected verb after "and" carries the description on.
    let s = studio("create an agent that checks my feed and emails me new posts");
    assert_eq!(
        s[0].1["instructions"], "checks my feed and emails me new posts",
        "{s:?}"
    );
}

steps_over!(
    /// A file reader with two counts, `tail` before `head`, as the MCP filesystem server
    /// declares them.
    reader,
    "reader.yaml",
    "tools:
  - name: read_text_file
    description: Read the contents of a text file.
    input_schema:
      type: object
      properties:
        path: {type: string}
        tail: {type: number, description: 'If provided, returns only the last N lines of the file'}
        head: {type: number, description: 'If provided, returns only the first N lines of the file'}
      required: [path]
    effects: read
"
);

#[test]
fn a_word_beside_a_number_picks_which_count_it_is() {
    assert_eq!(
        reader("read the first 10 lines of log.txt"),
        one_step("read_text_file", json!({"path": "log.txt", "head": 10}))
    );
    assert_eq!(
        reader("read the last 5 lines of log.txt"),
        one_step("read_text_file", json!({"path": "log.txt", "tail": 5}))
    );
    // Nothing beside the number tells them apart: the schema's order decides.
    assert_eq!(
        reader("read 7 lines of log.txt"),
        one_step("read_text_file", json!({"path": "log.txt", "tail": 7}))
    );
}

steps_over!(
    /// Folder tools as the MCP filesystem server describes them.
    folders,
    "folders.yaml",
    "tools:
  - name: list_directory
    description: Get a detailed listing of all files and directories in a specified path.
    input_schema: {type: object, properties: {path: {type: string}}, required: [path]}
    effects: read
  - name: directory_tree
    description: Get a recursive tree view of files and directories. Each entry includes its name, type and children.
    input_schema: {type: object, properties: {path: {type: string}}, required: [path]}
    effects: read
  - name: create_directory
    description: Create a new directory or ensure a directory exists.
    input_schema: {type: object, properties: {path: {type: string}}, required: [path]}
    effects: write
  - name: move_file
    description: Move or rename files and directories.
    input_schema:
      type: object
      properties: {source: {type: string}, destination: {type: string}}
      required: [source, destination]
    effects: write
"
);

#[test]
fn a_bare_word_beside_folder_is_its_path() {
    assert_eq!(
        folders("list the files in the docs folder"),
        one_step("list_directory", json!({"path": "docs"}))
    );
    assert_eq!(
        folders("list the folder src"),
        one_step("list_directory", json!({"path": "src"}))
    );
    // Past the tool's own words and a preposition.
    assert_eq!(
        folders("show the directory tree of src"),
        one_step("directory_tree", json!({"path": "src"}))
    );
    // The word after "to" is the folder's name, not the words of the phrase.
    assert_eq!(
        folders("move report.txt to the archive folder"),
        one_step(
            "move_file",
            json!({"source": "report.txt", "destination": "archive"})
        )
    );
}

#[test]
fn a_word_that_only_says_which_folder_or_is_the_tools_own_is_no_path() {
    let open = json!({"path": {"$placeholder": "path"}});
    assert_eq!(
        folders("make a new folder"),
        one_step("create_directory", open.clone())
    );
    assert_eq!(
        folders("show the directory tree of the current folder"),
        one_step("directory_tree", open)
    );
    // A cue gives the name, and what follows it is no object of the verb: "logs" is not
    // what is created.
    assert_eq!(
        folders("create a folder named logs"),
        one_step("create_directory", json!({"path": "logs"}))
    );
}

#[test]
fn an_object_of_the_tools_own_words_pointing_back_gives_no_value() {
    // "a slide deck with it" restates what slides_render makes and points at the image:
    // no markdown was given.
    let s = steps(
        &crate::engine()
            .plan(
                "generate an image of a cat and then make a slide deck with it",
                None,
            )
            .unwrap(),
    );
    assert_eq!(s[1].0, "slides_render", "{s:?}");
    assert_eq!(
        s[1].1["markdown"],
        json!({"$placeholder": "markdown"}),
        "{s:?}"
    );
    // What the deck is about is a value.
    let s = steps(
        &crate::engine()
            .plan("make a slide deck about rust", None)
            .unwrap(),
    );
    assert_eq!(s[0].1["markdown"], "rust", "{s:?}");
}

steps_over!(
    /// Tools as a filesystem server lists them: no declared types.
    files,
    "files.yaml",
    r"
tools:
  - name: read_text_file
    description: Read the complete contents of a file as text.
    input_schema: {type: object, properties: {path: {type: string}}, required: [path]}
  - name: edit_file
    description: Make line-based edits to a text file.
    input_schema: {type: object, properties: {path: {type: string}, edits: {type: array, items: {type: object}}}, required: [path, edits]}
  - name: search_files
    description: Recursively search for files and directories matching a pattern.
    input_schema: {type: object, properties: {path: {type: string}, pattern: {type: string}}, required: [path, pattern]}
"
);

#[test]
fn a_pronoun_for_the_file_an_earlier_verb_acted_on_is_that_file() {
    // "it" is todo.txt, not the text reading it returned; the edits stay a question.
    let s = files("read todo.txt and then edit it");
    assert_eq!(s.len(), 2, "{s:?}");
    assert_eq!(s[1].0, "edit_file");
    assert_eq!(s[1].1["path"], "todo.txt", "{s:?}");
    assert!(s[1].1["edits"].get("$placeholder").is_some(), "{s:?}");
    // A folder after a preposition says where the search looked, not what "it" is.
    let found = files("search for notes in /docs and then read it");
    assert_eq!(found.len(), 2, "{found:?}");
    assert_ne!(found[1].1["path"], "/docs", "{found:?}");
}

const CONTACTS: &str = r"
tools:
  - name: add_contact
    description: Add a new contact to the address book
    input_schema:
      type: object
      properties:
        name: {type: string, description: The name of the contact}
        phone: {type: string, description: The phone number of the contact}
        email: {type: string, description: The email address of the contact}
      required: [name, phone]
  - name: get_order_id
    description: Get the id number of an order
    input_schema:
      type: object
      properties:
        order: {type: string, description: The order}
      required: [order]
";

steps_over!(contacts, "contacts.yaml", CONTACTS);

#[test]
fn a_fact_stated_beside_a_request_gives_it_values_not_a_step_of_its_own() {
    // "Her number is …" would fit `get_order_id` by its words ("number"); it states
    // what the contact's arguments are.
    assert_eq!(
        contacts(
            "Add Sarah Lee as a new contact. Her number is 123-456-7890 and her email is sarah@example.com."
        ),
        [(
            "add_contact".into(),
            json!({"name": "Sarah Lee", "phone": "123-456-7890", "email": "sarah@example.com"})
        )]
    );
}
