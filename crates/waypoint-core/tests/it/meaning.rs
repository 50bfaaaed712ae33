//! Meaning-level matching on a catalog described only by its tools' descriptions, as
//! tools imported from MCP servers come. Needs `WAYPOINT_TEST_EMBED_MODEL` (scripts/embed-model);
//! without it the tests say so and pass, unless `WAYPOINT_REQUIRE_EMBED` is set (CI).

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use waypoint_catalog::{Catalog, Source, load};
use waypoint_core::meaning::{MeaningSettings, MeaningState};
use waypoint_core::{Engine, Options};
use waypoint_embed::Encoder;

const TOOLS: &str = r"
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

fn catalog() -> Catalog {
    load(&[Source {
        name: "mcp.yaml".into(),
        text: TOOLS.into(),
    }])
    .unwrap()
    .catalog
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
    let options = Options {
        meaning: Some(MeaningSettings::new(encoder)),
        ..Options::default()
    };
    let meaning = Engine::new(catalog(), options).unwrap();
    assert!(matches!(meaning.meaning(), MeaningState::On(_)));
    let request = "show me what's in the folder";
    assert_ne!(best(&words, request).as_deref(), Some("list_directory"));
    assert_eq!(best(&meaning, request).as_deref(), Some("list_directory"));
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
    let prose = || {
        load(&[Source {
            name: "prose.yaml".into(),
            text: PROSE.into(),
        }])
        .unwrap()
        .catalog
    };
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
