//! The built-in table as shipped: readable, and closer for related words than unrelated.

use waypoint_wordvec::builtin;

fn cos(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[test]
fn the_builtin_table_reads_and_knows_the_vocabulary() {
    let t = builtin();
    assert_eq!(t.len(), 30_522);
    assert_eq!(t.dims(), 128);
    assert!(!t.piece_ids("unbelievably cheap flights").is_empty());
}

#[test]
fn related_requests_are_closer_than_unrelated_ones() {
    let t = builtin();
    let fare = t.sentence("what's the cheapest fare to tokyo").unwrap();
    let flight = t.sentence("search flights and airline tickets").unwrap();
    let recipe = t
        .sentence("recipes for dinner with what is in the fridge")
        .unwrap();
    assert!(cos(&fare, &flight) > cos(&fare, &recipe));
}

proptest::proptest! {
    #[test]
    fn any_text_gives_a_unit_vector_or_none(text in "\\PC{0,60}") {
        if let Some(v) = builtin().sentence(&text) {
            let n: f32 = v.iter().map(|x| x * x).sum::<f32>().sqrt();
            proptest::prop_assert!((n - 1.0).abs() < 1e-4);
        }
    }
}
