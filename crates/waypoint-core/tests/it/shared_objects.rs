//! "find and book a table", "check and cancel my booking": a verb alone, joined by "and"
//! to the next clause, acts on that clause's object (docs/architecture.md, "Understand").

use std::sync::OnceLock;

use waypoint_core::Engine;

use crate::{engine_over, tools_of};

fn bookings() -> &'static Engine {
    static ENGINE: OnceLock<Engine> = OnceLock::new();
    ENGINE.get_or_init(|| {
        engine_over(
            "bookings.yaml",
            r"
tools:
  - name: search_songs
    description: Find songs by title or artist.
  - name: play_song
    description: Play a song or an album.
  - name: book_table
    description: Find a free table at a restaurant and reserve it.
    effects: write
  - name: check_booking
    description: Look up the status of a booking.
    input_schema: {type: object, properties: {booking_id: {type: string, description: The booking ID}}, required: [booking_id]}
  - name: cancel_booking
    description: Cancel a booking.
    effects: destructive
    input_schema: {type: object, properties: {booking_id: {type: string, description: The booking ID}}, required: [booking_id]}
",
        )
    })
}

fn steps(request: &str) -> Vec<String> {
    tools_of(bookings(), request)
}

#[test]
fn a_bare_verb_that_asks_what_the_next_clause_asks_is_one_step() {
    // "find" alone finds songs; "find a table at Nopa" is a booking, and the finding is
    // how the table is booked.
    assert_eq!(steps("find"), ["search_songs"]);
    assert_eq!(steps("find and book a table at Nopa"), ["book_table"]);
}

#[test]
fn a_bare_verb_that_asks_for_another_entry_is_routed_with_the_shared_object() {
    // "look up my booking" and "cancel my booking": two steps, the first found by the
    // booking it borrows rather than by "look up" alone.
    assert_eq!(
        steps("look up and cancel my booking"),
        ["check_booking", "cancel_booking"]
    );
    // A verb with an object of its own keeps it.
    assert_eq!(
        steps("find the song yesterday and play it"),
        ["search_songs", "play_song"]
    );
}

#[test]
fn a_bare_verb_takes_what_the_shared_object_presents() {
    let plan = bookings()
        .plan("look up and cancel booking BK-2231", None)
        .unwrap();
    let steps: Vec<(&str, Option<&serde_json::Value>)> = plan
        .steps()
        .iter()
        .map(|s| (s.tool.as_str(), s.args.get("booking_id")))
        .collect();
    let id = serde_json::json!("BK-2231");
    assert_eq!(
        steps,
        [("check_booking", Some(&id)), ("cancel_booking", Some(&id))]
    );
}
