//! The encoder against a real model folder: `WAYPOINT_TEST_EMBED_MODEL`, which `scripts/test`
//! sets from `scripts/embed-model`. Without the folder the tests say so and pass only if
//! `WAYPOINT_REQUIRE_EMBED` is unset (CI sets it).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;

use waypoint_embed::{EmbedError, Encoder, Precision, cosine};

fn model_dir() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("WAYPOINT_TEST_EMBED_MODEL") {
        return Some(PathBuf::from(d));
    }
    assert!(
        std::env::var_os("WAYPOINT_REQUIRE_EMBED").is_none(),
        "WAYPOINT_REQUIRE_EMBED is set but WAYPOINT_TEST_EMBED_MODEL is not (scripts/test sets it)"
    );
    eprintln!("skipped: WAYPOINT_TEST_EMBED_MODEL is not set (scripts/embed-model install)");
    None
}

#[test]
fn vectors_match_the_reference_implementation() {
    let Some(dir) = model_dir() else { return };
    let e = Encoder::load_with(&dir, Precision::F32).unwrap();
    assert_eq!(e.precision(), Precision::F32);
    assert_eq!(e.dims(), 384);
    let v = e
        .embed("what's the weather like in Denver tomorrow")
        .unwrap();
    let norm: f32 = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    assert!((norm - 1.0).abs() < 1e-4, "norm {norm}");
    // From tests/reference.py, an independent NumPy forward pass of the same model.
    let reference = [
        0.057_505, -0.045_96, 0.092_152, 0.035_092, 0.038_542, -0.058_075, -0.052_407, -0.069_802,
    ];
    for (got, want) in v.iter().zip(reference) {
        assert!((got - want).abs() < 1e-4, "{got} vs {want}");
    }
}

#[test]
fn int8_vectors_stay_close_to_the_float_ones() {
    let Some(dir) = model_dir() else { return };
    let fast = Encoder::load_with(&dir, Precision::Int8).unwrap();
    if fast.precision() != Precision::Int8 {
        eprintln!("skipped: this CPU has neither AVX-512 VNNI nor AVX2, so int8 is f32 here");
        return;
    }
    let exact = Encoder::load_with(&dir, Precision::F32).unwrap();
    assert_ne!(fast.digest(), exact.digest(), "caches must not mix the two");
    let texts = [
        "what's the weather like in Denver tomorrow",
        "delete notes.txt",
        "book a table for two at an italian place near the office at 7pm on friday",
        "hi",
        "translate the release notes into French and German, then email them to ana@example.com",
    ];
    let mut worst = 1.0_f32;
    for t in texts {
        let c = cosine(&fast.embed(t).unwrap(), &exact.embed(t).unwrap());
        worst = worst.min(c);
    }
    assert!(worst > 0.99, "worst cosine {worst}");
    eprintln!("int8 against f32: worst cosine {worst}");
}

#[test]
fn paraphrases_are_closer_than_unrelated_requests() {
    let Some(dir) = model_dir() else { return };
    let e = Encoder::load(&dir).unwrap();
    let a = e.embed("show me what's in the folder").unwrap();
    let b = e.embed("list the files in a directory").unwrap();
    let c = e.embed("delete entities from the knowledge graph").unwrap();
    assert!(cosine(&a, &b) > cosine(&a, &c) + 0.2);
}

#[test]
fn a_batch_gives_what_single_texts_give() {
    let Some(dir) = model_dir() else { return };
    let e = Encoder::load(&dir).unwrap();
    let texts = [
        "book a table for two",
        "what is the capital of France and how many people live there",
        "hi",
    ];
    let batch = e.embed_batch(&texts).unwrap();
    for (t, v) in texts.iter().zip(&batch) {
        let single = e.embed(t).unwrap();
        assert!(cosine(v, &single) > 0.9999, "{t}");
    }
}

#[test]
fn a_folder_without_weights_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let err = Encoder::load(dir.path()).unwrap_err();
    assert!(matches!(err, EmbedError::Read { .. }), "{err}");
    assert!(err.to_string().contains("config.json"), "{err}");
}

#[test]
fn a_config_with_sizes_the_heads_do_not_divide_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("config.json"),
        r#"{"vocab_size": 10, "hidden_size": 10, "num_hidden_layers": 1,
            "num_attention_heads": 3, "intermediate_size": 0,
            "max_position_embeddings": 8}"#,
    )
    .unwrap();
    let err = Encoder::load(dir.path()).unwrap_err();
    assert!(matches!(err, EmbedError::Config { .. }), "{err}");
    assert!(err.to_string().contains("heads divide"), "{err}");
}

#[test]
fn vectors_are_cached_by_encoder_and_texts() {
    use waypoint_embed::cache::{Source, embed_all};
    let Some(dir) = model_dir() else { return };
    let e = Encoder::load(&dir).unwrap();
    let cache = tempfile::tempdir().unwrap();
    let texts = ["list the files", "what's the weather", "list the files"];
    let (first, how) = embed_all(&e, &texts, Some(cache.path())).unwrap();
    assert!(matches!(how, Source::Encoded(_)), "{how:?}");
    assert_eq!(first.len(), 3 * e.dims());
    // A text repeated is encoded once and given to each place it appears.
    assert_eq!(first[..e.dims()], first[2 * e.dims()..]);
    let (again, how) = embed_all(&e, &texts, Some(cache.path())).unwrap();
    assert!(matches!(how, Source::Cached(_)), "{how:?}");
    assert_eq!(again, first);
    let (_, how) = embed_all(&e, &["list the files"], Some(cache.path())).unwrap();
    assert!(
        matches!(how, Source::Encoded(_)),
        "other texts, another entry: {how:?}"
    );
}

#[test]
fn a_probe_is_the_sentence_vector_then_the_earlier_layers() {
    let Some(dir) = model_dir() else { return };
    let e = Encoder::load(&dir).unwrap();
    // MiniLM-L6: the embeddings and the third layer's output beside the sentence vector.
    assert_eq!(e.probe_dims(), 3 * e.dims());
    let texts = [
        "book a table for two",
        "what's the weather like in Denver tomorrow",
    ];
    let encoded = e.encode_batch(&texts).unwrap();
    for (t, enc) in texts.iter().zip(&encoded) {
        assert_eq!(enc.sentence, e.embed(t).unwrap(), "{t}");
        assert_eq!(enc.probe.len(), e.probe_dims());
        assert_eq!(enc.probe[..e.dims()], enc.sentence[..]);
        let norm = |v: &[f32]| v.iter().map(|x| x * x).sum::<f32>().sqrt();
        for part in enc.probe[e.dims()..].chunks(e.dims()) {
            assert!((norm(part) - 0.7).abs() < 1e-4, "{}", norm(part));
        }
    }
    // Two different requests differ in every part, not only in the sentence vector.
    for k in 1..3 {
        let part = |i: usize| &encoded[i].probe[k * e.dims()..(k + 1) * e.dims()];
        assert!(cosine(part(0), part(1)) < 0.999, "part {k}");
    }
}

#[test]
fn probes_are_cached_apart_from_sentence_vectors() {
    use waypoint_embed::cache::{Source, embed_all, embed_all_keeping_probes, probe_all};
    let Some(dir) = model_dir() else { return };
    let e = Encoder::load(&dir).unwrap();
    let cache = tempfile::tempdir().unwrap();
    let texts = ["list the files", "what's the weather"];
    let none = |_: &str| None;
    let (vectors, _) = embed_all(&e, &texts, Some(cache.path())).unwrap();
    let (probes, how) = probe_all(&e, &texts, Some(cache.path()), &none).unwrap();
    assert!(
        matches!(how, Source::Encoded(_)),
        "not the vectors' file: {how:?}"
    );
    assert_eq!(probes.len(), 2 * e.probe_dims());
    assert_eq!(probes[..e.dims()], vectors[..e.dims()]);
    let (again, how) = probe_all(&e, &texts, Some(cache.path()), &none).unwrap();
    assert!(matches!(how, Source::Cached(_)), "{how:?}");
    assert_eq!(again, probes);

    // Encoding sentence vectors can keep the probes the same pass gave ...
    let fresh = embed_all_keeping_probes(&e, &texts, None).unwrap();
    assert!(
        matches!(fresh.source, Source::Uncached),
        "{:?}",
        fresh.source
    );
    assert_eq!(fresh.vectors, vectors);
    assert_eq!(fresh.probes.as_deref(), Some(&probes[..]));
    // ... but a read from the cache gives none.
    let read = embed_all_keeping_probes(&e, &texts, Some(cache.path())).unwrap();
    assert!(
        matches!(read.source, Source::Cached(_)),
        "{:?}",
        read.source
    );
    assert_eq!(read.probes, None);
    // A probe the caller already has is taken as it is, not encoded again.
    let mark = vec![0.25_f32; e.probe_dims()];
    let known = |t: &str| (t == "list the files").then(|| mark.clone());
    let (mixed, _) = probe_all(&e, &texts, None, &known).unwrap();
    assert_eq!(mixed[..e.probe_dims()], mark[..]);
    assert_eq!(mixed[e.probe_dims()..], probes[e.probe_dims()..]);
}
