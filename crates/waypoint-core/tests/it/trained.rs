//! The trained router on a small catalog whose entries are described in a word or two
//! and taught by requests, the way a user's own catalog with `--train` is.

use waypoint_catalog::{Catalog, Source, load};
use waypoint_core::{Engine, Options};

const TOOLS: &str = r"
tools:
  - name: play_music
    description: play music
    examples:
      - put on some jazz
      - i want to hear the new album by adele
      - start my workout songs
      - could you play something relaxing
      - blast some rock in the kitchen
      - play some jazz and how windy is it in chicago
      - a spot for two at a diner, will it snow and blast some rock
  - name: get_weather
    description: get weather
    examples:
      - will it rain in paris tomorrow
      - how humid is it in denver
      - is it going to snow this weekend
      - what's the forecast for boston
      - how windy is it in chicago
      - play some jazz and how windy is it in chicago
      - a spot for two at a diner, will it snow and blast some rock
  - name: book_restaurant
    description: book restaurant
    examples:
      - i need a table for four at an italian place
      - reserve a spot at a sushi bar tonight
      - get me a reservation at a steakhouse for two
      - book a table near the station at 8 pm
      - find me a table for six on friday
      - a spot for two at a diner, will it snow and blast some rock
";

fn engine(text: &str) -> Engine {
    let catalog: Catalog = load(&[Source {
        name: "tools.yaml".into(),
        text: text.into(),
    }])
    .unwrap()
    .catalog;
    Engine::new(catalog, Options::default()).unwrap()
}

fn tools(engine: &Engine, request: &str) -> Vec<String> {
    let mut t: Vec<String> = engine
        .plan(request, None)
        .unwrap()
        .steps()
        .iter()
        .map(|s| s.tool.clone())
        .collect();
    t.sort();
    t
}

#[test]
fn requests_teach_the_router_phrasings_the_names_do_not_share() {
    let e = engine(TOOLS);
    let learned = e
        .learned()
        .expect("a catalog with requests has a trained router");
    assert!(learned.weight() > 0.5, "{}", learned.weight());
    assert_eq!(tools(&e, "is it going to rain in rome"), ["get_weather"]);
    assert_eq!(
        tools(&e, "reserve a table at a thai place"),
        ["book_restaurant"]
    );
    assert_eq!(tools(&e, "put on the new adele album"), ["play_music"]);
}

#[test]
fn a_clause_the_segmenter_keeps_whole_can_ask_for_two_entries() {
    let e = engine(TOOLS);
    // "humid…" starts no verb phrase, so the segmenter keeps one clause; each side of
    // the "and" routes to a different entry.
    assert_eq!(
        tools(&e, "put on some jazz and how humid is it in denver"),
        ["get_weather", "play_music"]
    );
    // An "or" between two prepositions joins one phrase ("to or from"), never two
    // requests; beside a noun it may.
    assert_eq!(
        tools(&e, "play some jazz or in chicago how windy"),
        ["get_weather", "play_music"]
    );
    assert_eq!(
        tools(&e, "play some jazz for or in chicago how windy"),
        ["play_music"]
    );
}

#[test]
fn a_clause_kept_whole_can_ask_for_three_entries() {
    let e = engine(TOOLS);
    // No part opens with a verb the segmenter knows, so it is one clause; split at both
    // joints, each part routes to a different entry, and a request taught three at once
    // lets the whole speak for all three.
    let request =
        "a table for four at an italian place, how humid is it in denver and put on some jazz";
    assert_eq!(
        tools(&e, request),
        ["book_restaurant", "get_weather", "play_music"]
    );
    let plan = e.plan(request, None).unwrap();
    let order: Vec<&str> = plan.steps().iter().map(|s| s.tool.as_str()).collect();
    assert_eq!(
        order,
        ["book_restaurant", "get_weather", "play_music"],
        "in the order asked"
    );
}

#[test]
fn a_catalog_without_requests_is_routed_by_its_words_alone() {
    let plain: String = TOOLS
        .lines()
        .filter(|l| !l.trim_start().starts_with("- ") || l.contains("name:"))
        .filter(|l| !l.contains("examples:"))
        .collect::<Vec<_>>()
        .join("\n");
    let e = engine(&plain);
    assert!(e.learned().is_none());
    assert_eq!(tools(&e, "play music"), ["play_music"]);
}

#[test]
fn a_clause_that_only_asks_again_is_part_of_the_request_the_whole_asks() {
    let e = engine(TOOLS);
    // The whole request is confidently about the weather; the second clause asks for the
    // same entry with no value of its own, so it is one step, not two.
    let plan = e
        .plan(
            "will it rain in paris tomorrow, or is it going to snow",
            None,
        )
        .unwrap();
    assert_eq!(
        plan.steps()
            .iter()
            .map(|s| s.tool.as_str())
            .collect::<Vec<_>>(),
        ["get_weather"],
        "{plan:?}"
    );
    assert_eq!(
        tools(&e, "is it going to snow in paris or how windy"),
        ["get_weather"]
    );
    // Two clauses that ask for different entries the whole speaks for stay two steps.
    assert_eq!(
        tools(&e, "put on some jazz, or is it going to snow"),
        ["get_weather", "play_music"]
    );
    assert_eq!(
        tools(
            &e,
            "how windy is it in chicago and can you play something relaxing"
        ),
        ["get_weather", "play_music"]
    );
}

/// The catalog above taught, through [`Catalog::teach`], labelled requests that each ask
/// for one entry.
fn taught_one_at_a_time() -> Engine {
    let mut catalog: Catalog = load(&[Source {
        name: "tools.yaml".into(),
        text: TOOLS.into(),
    }])
    .unwrap()
    .catalog;
    let places = [
        "paris", "denver", "boston", "chicago", "rome", "lisbon", "oslo", "austin", "dublin",
        "tokyo",
    ];
    for place in places {
        for (request, entry) in [
            (format!("play some music from {place}"), "play_music"),
            (format!("put on the radio station of {place}"), "play_music"),
            (format!("what's the weather like in {place}"), "get_weather"),
            (format!("is it raining in {place}"), "get_weather"),
            (
                format!("book a table for two in {place}"),
                "book_restaurant",
            ),
            (
                format!("reserve a restaurant in {place} tonight"),
                "book_restaurant",
            ),
        ] {
            assert!(catalog.teach(&request, &[entry]).is_empty());
        }
    }
    assert_eq!(catalog.taught().requests, 60);
    assert_eq!(catalog.taught().asking_two, 0);
    Engine::new(catalog, Options::default()).unwrap()
}

#[test]
fn requests_taught_one_entry_at_a_time_make_a_request_one_step() {
    let e = taught_one_at_a_time();
    assert!(e.learned().unwrap().one_at_a_time());
    // Taught by examples alone (above), this is two steps; taught that people ask for one
    // thing at a time, it is one request read whole.
    assert_eq!(
        tools(
            &engine(TOOLS),
            "put on some jazz and how humid is it in denver"
        ),
        ["get_weather", "play_music"]
    );
    assert_eq!(
        tools(&e, "put on some jazz and how humid is it in denver").len(),
        1
    );
    // "then" orders two requests: the person asked for two things.
    assert_eq!(
        tools(
            &e,
            "put on some jazz, then tell me if it will rain in denver"
        ),
        ["get_weather", "play_music"]
    );
}

#[test]
fn route_reports_a_request_read_whole_as_the_plan_reads_it() {
    let e = taught_one_at_a_time();
    let request = "put on some jazz and how humid is it in denver";
    let reports = e.route(request, None).unwrap();
    assert_eq!(reports.len(), 1, "{reports:#?}");
    assert_eq!(
        reports[0].clause,
        "put on some jazz and how humid is it in denver"
    );
    // The entry route recommends is the plan's one step: a threshold fitted on what
    // `waypoint calibrate` sweeps is fitted on what the plan compares with it.
    let plan = e.plan(request, None).unwrap();
    let best = reports[0]
        .recommendation
        .as_ref()
        .or(reports[0].alternatives.first())
        .unwrap();
    assert_eq!(plan.steps().len(), 1);
    assert_eq!(plan.steps()[0].tool, best.id);
    // Ordered requests stay apart in route as in the plan.
    let ordered = e
        .route(
            "put on some jazz, then tell me if it will rain in denver",
            None,
        )
        .unwrap();
    assert_eq!(ordered.len(), 2);
}

#[test]
fn labelled_requests_that_ask_for_two_entries_keep_requests_apart() {
    let mut catalog: Catalog = load(&[Source {
        name: "tools.yaml".into(),
        text: TOOLS.into(),
    }])
    .unwrap()
    .catalog;
    for k in 0..60 {
        let labels: &[&str] = if k % 2 == 0 {
            &["play_music", "get_weather"]
        } else {
            &["book_restaurant"]
        };
        catalog.teach(&format!("request number {k}"), labels);
    }
    assert_eq!(catalog.taught().asking_two, 30);
    let e = Engine::new(catalog, Options::default()).unwrap();
    assert!(!e.learned().unwrap().one_at_a_time());
    assert_eq!(
        tools(&e, "put on some jazz and how humid is it in denver"),
        ["get_weather", "play_music"]
    );
}

#[test]
fn a_question_for_what_only_an_untaught_entry_is_named_after_goes_there() {
    // `get_sunrise_time` has no requests: the model knows it only by its name, and reads
    // a question about the sunrise as one about the weather it was taught.
    let catalog = format!("{TOOLS}  - name: get_sunrise_time\n    description: sunrise time\n");
    let e = engine(&catalog);
    assert_eq!(
        tools(&e, "what sunrise time is it in paris tomorrow"),
        ["get_sunrise_time"]
    );
    // A question that asks for something no untaught entry is named after is left to
    // the model.
    assert_eq!(
        tools(&e, "what forecast is there for rome"),
        ["get_weather"]
    );
}

#[test]
fn a_joint_inside_one_phrase_asks_for_nothing_new() {
    let catalog = r"
tools:
  - name: find_flights
    description: find flights
    examples:
      - show me flights from boston to denver
      - flights leaving from dallas in the morning
      - i need a flight from paris to rome
      - flights between miami and chicago on friday
  - name: find_airlines
    description: find airlines
    examples:
      - which airlines fly to denver
      - what airlines serve boston
      - show me the airlines
      - airlines that fly from dallas
  - name: arrivals
    description: arrival times
    examples:
      - arriving at dallas
      - arriving in boston before noon
      - when do we arrive in denver
      - what time does it arrive
";
    let e = engine(catalog);
    // Alone, "arriving at denver" asks for arrivals; after "leaving from boston" it goes
    // on with the same phrase.
    assert_eq!(
        tools(&e, "flights leaving from boston and arriving at denver"),
        ["find_flights"]
    );
    // The second half of a range and a repeated preposition split nothing either.
    assert_eq!(
        tools(&e, "which airlines fly between boston and dallas"),
        ["find_airlines"]
    );
}

#[test]
fn a_clause_the_model_places_nowhere_goes_to_the_entry_its_object_names() {
    // The names share a prefix, as a server's or a dataset's do. Many requests teach the
    // model, so it leads the score; those that say "invoice" ask for the other two, so
    // the model cannot place "describe the invoice".
    let mut catalog: Catalog = load(&[Source {
        name: "tools.yaml".into(),
        text: "tools:
  - name: shop_invoice
    description: shop invoice
  - name: shop_refund
    description: shop refund
  - name: shop_delivery
    description: shop delivery
"
        .into(),
    }])
    .unwrap()
    .catalog;
    let taught = [
        (
            "shop_invoice",
            [
                "how much do i owe you",
                "send me my bill",
                "when is my payment due",
            ],
        ),
        (
            "shop_refund",
            ["i want my money back", "refund the invoice", "pay me back"],
        ),
        (
            "shop_delivery",
            [
                "where is my parcel",
                "the invoice says monday",
                "track the package",
            ],
        ),
    ];
    for k in 0..20 {
        for (tool, requests) in &taught {
            catalog.teach(&format!("{} please {k}", requests[k % 3]), &[tool]);
        }
    }
    // A few requests ask for two things, so a request's clauses are read one by one.
    for k in 0..3 {
        catalog.teach(
            &format!("track the package and pay me back {k}"),
            &["shop_delivery", "shop_refund"],
        );
    }
    let e = Engine::new(catalog, Options::default()).unwrap();
    assert_eq!(tools(&e, "describe the invoice"), ["shop_invoice"]);
    let plan = e.plan("describe the invoice", None).unwrap();
    let rationale = &plan.steps()[0].rationale;
    assert!(
        rationale.contains("invoice it is named after"),
        "{rationale}"
    );
    // Beside a clause the whole request is sure of, it is still a request of its own.
    assert_eq!(
        tools(&e, "describe the invoice and where is my parcel please"),
        ["shop_delivery", "shop_invoice"]
    );
    // The prefix every name shares names none of them, nor does a word no name holds.
    for request in ["describe the shop", "describe the weather"] {
        let plan = e.plan(request, None).unwrap();
        assert!(
            plan.steps()
                .iter()
                .all(|s| !s.rationale.contains("named after")),
            "{request}: {:?}",
            plan.steps()
        );
    }
}

/// [`TOOLS`] without the examples that name two entries: every entry taught by a few
/// examples of its own, as a user's catalog often is. (With them, a clause may ask for
/// two entries and the examples' vote is not asked.)
fn taught_by_examples() -> Engine {
    let lines: Vec<&str> = TOOLS
        .lines()
        .filter(|l| !l.contains(" and ") && !l.contains("a spot for two at a diner"))
        .collect();
    engine(&lines.join("\n"))
}

#[test]
fn a_catalog_taught_by_a_few_examples_leaves_a_request_near_none_of_them_a_gap() {
    let e = taught_by_examples();
    // A word shared by chance ("is *it* going to snow", "what's the forecast") taught
    // the linear model a cue its cross-validation rates as sure as any; no example is
    // near these in meaning, so each is a gap rather than a guess.
    for request in [
        "repeat it",
        "what's the capital of france",
        "set an alarm for 7",
    ] {
        assert_eq!(tools(&e, request), ["unknown"], "{request}");
    }
    for (request, entry) in [
        ("play some jazz", "play_music"),
        ("book a table for 3 tonight", "book_restaurant"),
        ("what's the forecast for denver", "get_weather"),
    ] {
        assert_eq!(tools(&e, request), [entry], "{request}");
    }
}
