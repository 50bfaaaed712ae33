//! The built-in tables as shipped: readable, and closer for related words than unrelated.

use waypoint_wordvec::{WordVectors, builtin, contexts, sentences};

fn cos(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn tables() -> [(&'static str, &'static WordVectors); 3] {
    [
        ("builtin", builtin()),
        ("sentences", sentences()),
        ("contexts", contexts()),
    ]
}

#[test]
fn the_builtin_tables_read_and_know_the_vocabulary() {
    for (name, t) in tables() {
        assert_eq!(t.len(), 30_522, "{name}");
        assert_eq!(t.dims(), 128, "{name}");
        assert!(
            !t.piece_ids("unbelievably cheap flights").is_empty(),
            "{name}"
        );
    }
}

#[test]
fn related_requests_are_closer_than_unrelated_ones() {
    for (name, t) in tables() {
        let fare = t.sentence("what's the cheapest fare to tokyo").unwrap();
        let flight = t.sentence("search flights and airline tickets").unwrap();
        let recipe = t
            .sentence("recipes for dinner with what is in the fridge")
            .unwrap();
        assert!(cos(&fare, &flight) > cos(&fare, &recipe), "{name}");
    }
}

#[test]
fn the_sentence_and_context_tables_are_different_tables() {
    let text = "book a table for two tonight";
    assert_ne!(builtin().sentence(text), sentences().sentence(text));
    assert_ne!(builtin().sentence(text), contexts().sentence(text));
    assert_ne!(sentences().sentence(text), contexts().sentence(text));
}

proptest::proptest! {
    #[test]
    fn any_text_gives_a_unit_vector_or_none(text in "\\PC{0,60}") {
        for (_, t) in tables() {
            if let Some(v) = t.sentence(&text) {
                let n: f32 = v.iter().map(|x| x * x).sum::<f32>().sqrt();
                proptest::prop_assert!((n - 1.0).abs() < 1e-4);
            }
        }
    }
}
