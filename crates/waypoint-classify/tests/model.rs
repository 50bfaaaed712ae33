//! The trained model as a user of the crate meets it: deterministic training, a cache
//! keyed by the training data, damaged files refused, calibration that matches a hand
//! computation.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use waypoint_classify::cache::{self, Source};
use waypoint_classify::{ArtifactError, Calibration, Model, Settings, TrainingSet};

fn small_set() -> TrainingSet {
    let mut set = TrainingSet::default();
    let data = [
        ("weather", "what is the weather today"),
        ("weather", "will it rain tomorrow"),
        ("weather", "how hot is it outside"),
        ("weather", "is it going to snow this week"),
        ("music", "play some jazz"),
        ("music", "put on my workout playlist"),
        ("music", "play the new album by adele"),
        ("music", "i want to hear some rock music"),
        ("alarm", "wake me up at 7am"),
        ("alarm", "set an alarm for six thirty"),
        ("alarm", "cancel my morning alarm"),
        ("alarm", "set a wake up call for 8"),
    ];
    for (label, text) in data {
        set.add(text, &[label], 1.0, true);
    }
    set
}

fn best(model: &Model, text: &str) -> String {
    let p = model.probabilities(text);
    let mut k = 0;
    for (i, v) in p.iter().enumerate() {
        if *v > p[k] {
            k = i;
        }
    }
    model.classes()[k].clone()
}

#[test]
fn training_is_deterministic_and_learns_the_classes() {
    let set = small_set();
    let a = Model::train(&set, &Settings::default());
    let b = Model::train(&set, &Settings::default());
    assert_eq!(a.to_bytes(), b.to_bytes(), "same inputs, same artifact");
    assert_eq!(best(&a, "is it raining"), "weather");
    assert_eq!(best(&a, "play a song by adele"), "music");
    assert_eq!(best(&a, "wake me at 9am"), "alarm");
    let report = a
        .report()
        .expect("twelve requests are enough to cross-validate");
    assert_eq!(report.folds, 3);
    assert_eq!(report.held_out, 12);
}

#[test]
fn the_artifact_round_trips_and_damage_is_an_error() {
    let model = Model::train(&small_set(), &Settings::default());
    let bytes = model.to_bytes();
    assert_eq!(Model::from_bytes(&bytes).as_ref(), Ok(&model));
    assert_eq!(Model::from_bytes(b"nope"), Err(ArtifactError::Magic));
    for cut in [5, 40, bytes.len() / 2, bytes.len() - 1] {
        assert!(
            matches!(
                Model::from_bytes(&bytes[..cut]),
                Err(ArtifactError::Damaged { .. } | ArtifactError::Version { .. })
            ),
            "cut at {cut}"
        );
    }
    let mut wrong_version = bytes.clone();
    wrong_version[4] = 99;
    assert_eq!(
        Model::from_bytes(&wrong_version),
        Err(ArtifactError::Version { found: 99 })
    );
}

#[test]
fn the_cache_is_read_when_the_data_is_the_same_and_retrained_when_it_changes() {
    let dir = tempfile::tempdir().unwrap();
    let settings = Settings::default();
    let set = small_set();
    let (first, source) = cache::load_or_train(dir.path(), &set, &settings);
    assert!(matches!(source, Source::Trained(_)), "{source:?}");
    let (again, source) = cache::load_or_train(dir.path(), &set, &settings);
    assert!(matches!(source, Source::Cached(_)), "{source:?}");
    assert_eq!(first, again);

    let mut changed = small_set();
    changed.add("turn it up", &["music"], 1.0, true);
    assert_ne!(changed.key(&settings), set.key(&settings));
    let (_, source) = cache::load_or_train(dir.path(), &changed, &settings);
    assert!(matches!(source, Source::Trained(_)), "{source:?}");

    // A damaged cache file is replaced, not trusted.
    let path = cache::path_for(dir.path(), &set.key(&settings));
    std::fs::write(&path, b"WPCL garbage").unwrap();
    let (model, source) = cache::load_or_train(dir.path(), &set, &settings);
    assert!(matches!(source, Source::Trained(_)), "{source:?}");
    assert_eq!(model, first);
}

#[test]
fn an_unwritable_cache_still_gives_a_model() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("not-a-dir");
    std::fs::write(&file, b"x").unwrap();
    let (model, source) = cache::load_or_train(&file, &small_set(), &Settings::default());
    assert!(matches!(source, Source::TrainedUncached(_)), "{source:?}");
    assert_eq!(best(&model, "play jazz"), "music");
}

#[test]
fn calibration_matches_a_hand_computation() {
    // Two decision values, each seen right and wrong equally often: the maximum-likelihood
    // sigmoid passes through the smoothed targets' mean at each value, which by symmetry
    // puts p(0) at one half and makes p(1) = 1 - p(-1).
    let mut pairs = Vec::new();
    for _ in 0..50 {
        pairs.push((1.0_f32, true));
        pairs.push((-1.0_f32, false));
    }
    for _ in 0..10 {
        pairs.push((1.0_f32, false));
        pairs.push((-1.0_f32, true));
    }
    let c = Calibration::fit(&pairs);
    assert!((c.probability(0.0) - 0.5).abs() < 1e-3, "{c:?}");
    // 50 right of 60 at d = 1; the smoothing moves the targets by under 2%.
    let p1 = f64::from(c.probability(1.0));
    assert!((p1 - 50.0 / 60.0).abs() < 0.02, "{p1}");
    assert!((f64::from(c.probability(1.0) + c.probability(-1.0)) - 1.0).abs() < 1e-3);
}

/// A dense vector per example (a sentence embedding) that carries what the words do not:
/// here, one direction per class. Texts are all alike, so only the vector tells them apart.
#[test]
fn dense_vectors_are_learned_beside_the_ngrams_and_survive_the_artifact() {
    let mut set = TrainingSet::default();
    let mut vectors = Vec::new();
    for (k, label) in ["weather", "music", "alarm"].iter().enumerate() {
        for i in 0..6 {
            set.add(&format!("do the thing number {i}"), &[label], 1.0, true);
            let mut v = vec![0.05_f32; 4];
            v[k] = 1.0;
            vectors.push(v);
        }
    }
    assert!(
        !set.clone().set_dense(vec![vec![1.0; 4]; 3]),
        "one vector per example"
    );
    assert!(set.set_dense(vectors));
    let settings = Settings::default();
    let model = Model::train(&set, &settings);
    assert_eq!(model.dense_dims(), 4);
    let pick = |m: &Model, v: &[f32]| {
        let p = m.probabilities_with("do the thing", Some(v));
        let k = (0..p.len()).max_by(|a, b| p[*a].total_cmp(&p[*b])).unwrap();
        m.classes()[k].clone()
    };
    assert_eq!(pick(&model, &[0.0, 1.0, 0.0, 0.0]), "music");
    assert_eq!(pick(&model, &[0.0, 0.0, 1.0, 0.0]), "alarm");
    // Every example asks for one class, so a network over the vectors learned them too.
    let head = model
        .head_probabilities(&[0.0, 0.0, 1.0, 0.0])
        .expect("a network");
    assert!((head.iter().sum::<f32>() - 1.0).abs() < 1e-4);
    assert_eq!(model.classes()[2], "alarm");
    assert!(head[2] > head[0] && head[2] > head[1], "{head:?}");
    let back = Model::from_bytes(&model.to_bytes()).unwrap();
    assert_eq!(back, model);
    assert!(back.has_head());
    // A caller that will not ask the network does not pay for it.
    let without = Settings {
        network: false,
        ..Settings::default()
    };
    assert!(!Model::train(&set, &without).has_head());
    // A vector of another length is ignored rather than misread.
    assert_eq!(
        model.probabilities_with("do the thing", Some(&[1.0, 0.0])),
        model.probabilities("do the thing")
    );
    // The vectors are part of the training key: other vectors, another cache entry.
    let mut other = set.clone();
    assert!(other.set_dense(vec![vec![0.5; 4]; 18]));
    assert_ne!(other.key(&settings), set.key(&settings));
    // A request asking for two classes leaves the softmax network out.
    set.add("do the thing twice", &["weather", "music"], 1.0, true);
    let mut vectors: Vec<Vec<f32>> = vec![vec![0.05; 4]; 18];
    vectors.push(vec![1.0, 1.0, 0.0, 0.0]);
    assert!(set.set_dense(vectors));
    assert!(!Model::train(&set, &settings).has_head());
}

#[test]
fn the_network_reads_probes_where_it_is_given_them() {
    // The dense vectors say nothing (every example the same); the probes, twice as long,
    // tell the classes apart in their second half, where the linear model never looks.
    let mut set = TrainingSet::default();
    let mut probes = Vec::new();
    for (k, label) in ["weather", "music", "alarm"].iter().enumerate() {
        for i in 0..6 {
            set.add(&format!("do the thing number {i}"), &[label], 1.0, true);
            let mut p = vec![0.05_f32; 6];
            p[3 + k] = 1.0;
            probes.push(p);
        }
    }
    assert!(set.set_dense(vec![vec![0.5; 3]; 18]));
    assert!(
        !set.clone().set_probes(vec![vec![1.0; 6]; 17]),
        "one probe per example"
    );
    let settings = Settings::default();
    let plain = set.key(&settings);
    assert!(set.set_probes(probes));
    assert_ne!(
        set.key(&settings),
        plain,
        "probes are part of the training key"
    );
    let model = Model::train(&set, &settings);
    assert_eq!(
        model.dense_dims(),
        3,
        "the linear model keeps the dense vectors"
    );
    assert_eq!(model.head_dims(), Some(6));
    let head = model
        .head_probabilities(&[0.05, 0.05, 0.05, 0.05, 0.05, 1.0])
        .expect("a probe of the network's length");
    assert_eq!(model.classes()[2], "alarm");
    assert!(head[2] > head[0] && head[2] > head[1], "{head:?}");
    assert_eq!(
        model.head_probabilities(&[0.5; 3]),
        None,
        "a dense vector is no probe"
    );
    let back = Model::from_bytes(&model.to_bytes()).unwrap();
    assert_eq!(back.head_dims(), Some(6));
}

#[test]
fn parts_follow_their_whole_and_change_the_key() {
    let mut set = small_set();
    set.add(
        "will it rain tomorrow and play some jazz",
        &["weather", "music"],
        1.0,
        true,
    );
    let whole = set.examples().len() - 1;
    let settings = Settings::default();
    let before = set.key(&settings);
    set.add_part("will it rain tomorrow", "weather", 1.0, whole);
    set.add_part("play some jazz", "music", 1.0, whole);
    // A part of a part, or of an example that is not there, is refused.
    set.add_part("rain", "weather", 1.0, whole + 1);
    set.add_part("jazz", "music", 1.0, whole + 99);
    assert_eq!(set.examples().len(), whole + 3);
    assert_eq!(set.examples()[whole + 1].part_of, Some(whole));
    assert!(set.examples()[whole + 2].held_out);
    assert_ne!(set.key(&settings), before);
    // Training with parts stays deterministic and the parts' classes are learned.
    let a = Model::train(&set, &settings);
    let b = Model::train(&set, &settings);
    assert_eq!(a.to_bytes(), b.to_bytes());
    assert_eq!(best(&a, "will it snow tomorrow"), "weather");
    assert_eq!(best(&a, "play me some jazz"), "music");
    // Cross-validation scores each text once: both parts repeat requests of the set, so
    // only the whole adds a text (its parts were dealt to one fold, so it is scored too).
    let report = a.report().unwrap();
    assert_eq!(report.held_out as usize, whole + 1);
}
