//! Meaning-level matching on a catalog described only by its tools' descriptions, as
//! tools imported from MCP servers come. Needs `WAYPOINT_TEST_EMBED_MODEL` (scripts/embed-model);
//! without it the tests say so and pass, unless `WAYPOINT_REQUIRE_EMBED` is set (CI).

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use waypoint_catalog::{Catalog, Source, load};
use waypoint_core::meaning::{MeaningSettings, MeaningState};
use waypoint_core::{Engine, Options};
use waypoint_embed::Encoder;
use waypoint_protocol::Candidate;

/// Tools as imported MCP servers describe them (filesystem, knowledge graph, weather).
pub(crate) const TOOLS: &str = r"
tools:
  - name: list_directory
    description: Get a detailed listing of all files and directories in a specified path.
  - name: edit_file
    description: Make line-based edits to a text file. Each edit replaces exact line sequences with new content.
  - name: read_text_file
    description: Read the complete contents of a file from the file system as text.
  - name: search_files
    description: Recursively search for files and directories matching a pattern.
  - name: delete_entities
    description: Delete multiple entities and their associated relations from the knowledge graph
    effects: destructive
  - name: create_entities
    description: Create multiple new entities in the knowledge graph
    effects: write
  - name: get_weather
    description: Current conditions and the forecast for a city
";

fn encoder() -> Option<Arc<Encoder>> {
    static ENCODER: OnceLock<Option<Arc<Encoder>>> = OnceLock::new();
    ENCODER
        .get_or_init(|| {
            let Some(dir) = std::env::var_os("WAYPOINT_TEST_EMBED_MODEL") else {
                assert!(
                    std::env::var_os("WAYPOINT_REQUIRE_EMBED").is_none(),
                    "WAYPOINT_REQUIRE_EMBED is set but WAYPOINT_TEST_EMBED_MODEL is not (scripts/test sets it)"
                );
                eprintln!("skipped: WAYPOINT_TEST_EMBED_MODEL is not set (scripts/embed-model install)");
                return None;
            };
            Some(Arc::new(Encoder::load(&PathBuf::from(dir)).unwrap()))
        })
        .clone()
}

fn parse(name: &str, text: &str) -> Catalog {
    load(&[Source {
        name: name.into(),
        text: text.into(),
    }])
    .unwrap()
    .catalog
}

fn catalog() -> Catalog {
    parse("mcp.yaml", TOOLS)
}

/// Fifty apps described in a sentence or two of marketing prose (eval/catalogs/prose).
fn prose_apps() -> Catalog {
    parse(
        "tools.yaml",
        include_str!("../../../../eval/catalogs/prose/tools.yaml"),
    )
}

/// An engine over `catalog` that routes by meaning with `encoder`'s default settings.
fn with_meaning(catalog: Catalog, encoder: Arc<Encoder>) -> Engine {
    let options = Options {
        meaning: Some(MeaningSettings::new(encoder)),
        ..Options::default()
    };
    Engine::new(catalog, options).unwrap()
}

fn best(engine: &Engine, request: &str) -> Option<String> {
    engine
        .route(request, None)
        .unwrap()
        .first()
        .and_then(|r| r.recommendation.as_ref())
        .map(|c| c.id.clone())
}

#[test]
fn without_an_encoder_meaning_is_off_and_words_route() {
    let e = Engine::new(catalog(), Options::default()).unwrap();
    assert!(matches!(e.meaning(), MeaningState::Off));
    // The words say delete, but a tool that takes no file is not what deletes one.
    assert_eq!(best(&e, "delete notes.txt"), None);
    assert_eq!(
        best(&e, "delete the entity Alice from the knowledge graph").as_deref(),
        Some("delete_entities")
    );
}

#[test]
fn a_request_that_shares_no_word_with_its_tool_finds_it_by_meaning() {
    let Some(encoder) = encoder() else { return };
    let words = Engine::new(catalog(), Options::default()).unwrap();
    let meaning = with_meaning(catalog(), encoder);
    assert!(matches!(meaning.meaning(), MeaningState::On(_)));
    // The words alone now read "what's in" as asking for a listing; "peek inside" they
    // do not know.
    let request = "peek inside the folder";
    assert_ne!(best(&words, request).as_deref(), Some("list_directory"));
    assert_eq!(best(&meaning, request).as_deref(), Some("list_directory"));
    assert_eq!(
        best(&meaning, "show me what's in the folder").as_deref(),
        Some("list_directory")
    );
    assert_eq!(
        best(&meaning, "what's the forecast like in Lisbon").as_deref(),
        Some("get_weather")
    );
    // Sharing "delete" with a knowledge-graph tool is not enough to delete with it.
    assert_ne!(
        best(&meaning, "delete notes.txt").as_deref(),
        Some("delete_entities")
    );
}

/// Tools described in prose, as plugins and imported servers often are: their words are
/// not the words people ask with.
const PROSE: &str = r"
tools:
  - name: market_pulse
    description: Stay ahead of the markets with live quotes, company fundamentals and the day's movers, all in one place.
  - name: trip_scout
    description: Plan your next getaway with fares, stays and itineraries tailored to where you want to go.
  - name: word_smith
    description: Polish your writing with suggestions for clarity, tone and correctness.
  - name: news_digest
    description: The stories that matter today, summarised from trusted outlets.
";

#[test]
fn on_a_catalog_described_in_prose_meaning_leads_where_it_thinks_better_of_an_entry() {
    let Some(encoder) = encoder() else { return };
    let prose = || parse("prose.yaml", PROSE);
    let mut even = MeaningSettings::new(Arc::clone(&encoder));
    even.lead_weight = even.weight;
    let with = |settings: MeaningSettings| {
        let options = Options {
            meaning: Some(settings),
            ..Options::default()
        };
        Engine::new(prose(), options).unwrap()
    };
    let (even, leading) = (with(even), with(MeaningSettings::new(encoder)));
    for (request, tool) in [
        ("make this paragraph sound more formal", "word_smith"),
        ("what are the headlines this morning", "news_digest"),
    ] {
        // Weighed as evenly as where the words lead, meaning's find stays under the
        // threshold: the prose shares no word with the request.
        assert_eq!(best(&even, request), None, "{request}");
        assert_eq!(best(&leading, request).as_deref(), Some(tool), "{request}");
    }
}

/// Tools as the MCP filesystem and memory servers describe them: what each does first,
/// then how to call it, in several sentences.
const SERVERS: &str = r#"
tools:
  - name: read_text_file
    description: "Read the complete contents of a file from the file system as text. Handles various text encodings and provides detailed error messages if the file cannot be read. Use this tool when you need to examine the contents of a single file. Use the 'head' parameter to read only the first N lines of a file, or the 'tail' parameter to read only the last N lines of a file. Operates on the file as text regardless of extension. Only works within allowed directories."
    input_schema: {type: object, properties: {path: {type: string}}, required: [path]}
    effects: read
  - name: edit_file
    description: "Make line-based edits to a text file. Each edit replaces exact line sequences with new content. Returns a git-style diff showing the changes made. Only works within allowed directories."
    input_schema: {type: object, properties: {path: {type: string}, edits: {type: array}}, required: [path, edits]}
    effects: destructive
  - name: write_file
    description: "Create a new file or completely overwrite an existing file with new content. Use with caution as it will overwrite existing files without warning. Handles text content with proper encoding. Only works within allowed directories."
    input_schema: {type: object, properties: {path: {type: string}, content: {type: string}}, required: [path, content]}
    effects: destructive
  - name: read_graph
    description: Read the entire knowledge graph
    input_schema: {type: object, properties: {}}
    effects: read
  - name: list_directory
    description: "Get a detailed listing of all files and directories in a specified path. Results clearly distinguish between files and directories with [FILE] and [DIR] prefixes. This tool is essential for understanding directory structure and finding specific files within a directory. Only works within allowed directories."
    input_schema: {type: object, properties: {path: {type: string}}, required: [path]}
    effects: read
  - name: list_allowed_directories
    description: "Returns the list of directories that this server is allowed to access. Subdirectories within these allowed directories are also accessible. Use this to understand which directories and their nested paths are available before trying to access files."
    input_schema: {type: object, properties: {}}
    effects: read
"#;

#[test]
fn a_long_description_is_read_by_its_opening_too_and_a_tool_that_takes_nothing_is_no_reader_of_a_file()
 {
    let Some(encoder) = encoder() else { return };
    let e = with_meaning(parse("servers.yaml", SERVERS), encoder);
    // "Read the entire knowledge graph" is closer in meaning to "read README.md" than
    // the whole of read_text_file's description, but it can take no file.
    assert_eq!(
        best(&e, "read README.md").as_deref(),
        Some("read_text_file")
    );
    // "Make line-based edits to a text file" alone is close to appending a line; the
    // rest of its description is about diffs and allowed directories.
    assert_eq!(
        best(&e, "append a line to todo.txt").as_deref(),
        Some("edit_file")
    );
    // A folder named by a bare word is a thing to act on, as a path is: the tool that
    // lists the directories it may access takes none, though its description speaks of
    // what is inside them.
    assert_eq!(
        best(&e, "what's inside the src folder").as_deref(),
        Some("list_directory")
    );
    assert_eq!(
        first_ranked(&e, "which directories are you allowed to access").as_deref(),
        Some("list_allowed_directories")
    );
}

#[test]
fn a_tool_that_takes_nothing_is_not_asked_to_list_a_named_folder() {
    let e = Engine::new(parse("servers.yaml", SERVERS), Options::default()).unwrap();
    // The words say "list" and "folder" for both listing tools alike; the one that takes
    // no path loses part of its score.
    let named = "what's inside the src folder";
    assert_eq!(best(&e, named).as_deref(), Some("list_directory"));
    assert!(
        crate::score_of(&e, named, "list_allowed_directories")
            < 0.6 * crate::score_of(&e, named, "list_directory")
    );
    assert_eq!(
        first_ranked(&e, "which directories are you allowed to access").as_deref(),
        Some("list_allowed_directories")
    );
    // A folder no word names is no thing to act on: "what's inside the folder" means
    // "list" as well, which names none.
    let unnamed = "what's inside the folder";
    assert!(
        crate::score_of(&e, unnamed, "list_allowed_directories")
            >= 0.9 * crate::score_of(&e, unnamed, "list_directory")
    );
}

/// The best-ranked candidate of the request's last clause, recommended or not.
fn top_ranked(engine: &Engine, request: &str) -> Option<Candidate> {
    let mut ranked = engine.route(request, None).unwrap().pop()?;
    ranked
        .recommendation
        .take()
        .or_else(|| ranked.alternatives.into_iter().next())
}

/// The id of [`top_ranked`].
fn first_ranked(engine: &Engine, request: &str) -> Option<String> {
    top_ranked(engine, request).map(|c| c.id)
}

#[test]
fn in_a_catalog_of_prose_the_entry_that_stands_out_in_meaning_ranks_first() {
    let Some(encoder) = encoder() else { return };
    let e = with_meaning(prose_apps(), encoder);
    // The to-do app's words say "store" and "list"; the horoscope app is what the
    // question means, at a cosine the absolute scale calls middling and no other app
    // comes near.
    assert_eq!(
        first_ranked(&e, "what's in store for Scorpios today?").as_deref(),
        Some("zodiaq")
    );
    // "script" is a word of the video editor's; the question is a programmer's.
    assert_eq!(
        first_ranked(
            &e,
            "Why does my Python script throw 'TypeError: NoneType object is not subscriptable'?"
        )
        .as_deref(),
        Some("stackmate")
    );
    // The question alone says nothing of a PDF; the sentence that presents it does.
    assert_eq!(
        first_ranked(
            &e,
            "I've got a 90-page annual report as a PDF. What does it say about revenue growth?"
        )
        .as_deref(),
        Some("paperlens")
    );
}

#[test]
fn without_an_encoder_the_built_in_word_vectors_rank_a_prose_catalog_where_words_say_nothing() {
    let e = Engine::new(prose_apps(), Options::default()).unwrap();
    assert!(matches!(e.meaning(), MeaningState::Off));
    // The words find little or nothing here: the recipe app speaks of dinner, kitchens and
    // recipes, the garden app of plants, not of tomatoes.
    for (request, tool) in [
        (
            "how do I make a proper sourdough loaf from scratch",
            "forkful",
        ),
        (
            "I'm craving something spicy tonight, what can I cook with chicken and rice?",
            "forkful",
        ),
        ("when should I plant tomatoes in zone 6?", "sproutly"),
    ] {
        let top = top_ranked(&e, request).unwrap();
        assert_eq!(top.id, tool, "{request}");
        assert!(
            top.why.iter().any(|w| w.starts_with("close in meaning")),
            "{request}: {:?}",
            top.why
        );
        // Below the threshold it stays a gap: the vectors order, they do not vouch.
        let last = e.route(request, None).unwrap().pop().unwrap();
        assert!(last.recommendation.is_none(), "{request}");
    }
    // Turned off (`[embed] word_vectors = false`), the words alone rank.
    let off = Engine::new(
        e.catalog().clone(),
        Options {
            word_vectors: false,
            ..Options::default()
        },
    )
    .unwrap();
    let ranked = off
        .route("how do I make a proper sourdough loaf from scratch", None)
        .unwrap();
    assert!(ranked.iter().all(|r| {
        r.alternatives
            .iter()
            .chain(&r.recommendation)
            .all(|c| !c.why.iter().any(|w| w.starts_with("close in meaning")))
    }));
}
