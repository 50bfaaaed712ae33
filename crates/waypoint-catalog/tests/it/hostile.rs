use proptest::prelude::*;
use waypoint_catalog::{Source, load, yaml};

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn arbitrary_text_never_panics(text in ".{0,400}") {
        let _ = load(&[Source { name: "x.yaml".into(), text }]);
    }

    #[test]
    fn yaml_shaped_text_never_panics(text in "[a-z:\\-\\[\\]{}&*!| \\n'\"#,0-9]{0,300}") {
        let _ = load(&[Source { name: "x.yaml".into(), text }]);
    }
}

#[test]
fn an_alias_bomb_is_refused_quickly() {
    let mut text = String::from("a: &a [x, x, x, x, x, x, x, x, x]\n");
    for (prev, name) in ('a'..='h').zip('b'..='i') {
        text.push_str(&format!("{name}: &{name} [*{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}]\n"));
    }
    let err = load(&[Source {
        name: "bomb.yaml".into(),
        text,
    }])
    .unwrap_err();
    assert!(err.to_string().contains("1 error"));
}

#[test]
fn oversized_input_is_refused() {
    let limits = yaml::Limits {
        max_bytes: 10,
        ..yaml::Limits::default()
    };
    assert!(yaml::parse("tools: [a, b, c]", limits).is_err());
}
