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
