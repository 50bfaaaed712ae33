//! The trained model: vocabulary, per-class weights stored by feature, calibration and
//! the cross-validation report; trained from a [`TrainingSet`] under [`Settings`].

use std::collections::HashMap;

use sha2::{Digest, Sha256};

use crate::calibrate::{Calibration, Report, Tally};
use crate::features::{Sparse, Vocabulary};
use crate::head::{Head, Sample};
use crate::svm::{self, Row};

/// One labelled text.
#[derive(Debug, Clone, PartialEq)]
pub struct Example {
    pub text: String,
    /// Class indices, ascending, no repeats.
    pub labels: Vec<u32>,
    /// How much getting it wrong costs relative to other examples.
    pub weight: f32,
    /// Whether cross-validation may hold it out: requests are, an entry's own name is not
    /// (without it the entry would be unknown to the fold).
    pub held_out: bool,
    /// The example (by index) this text was cut from: a request that asks for several
    /// classes, of which this part asks for one. It is held out with its whole, never
    /// apart from it.
    pub part_of: Option<usize>,
}

/// Classes and their labelled texts, in the order they were added.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TrainingSet {
    classes: Vec<String>,
    index: std::collections::HashMap<String, u32>,
    examples: Vec<Example>,
    /// One dense vector per example (a sentence embedding), or none.
    dense: Vec<Vec<f32>>,
    /// One vector per example for the network alone, or none (it then reads `dense`).
    probes: Vec<Vec<f32>>,
}

impl TrainingSet {
    /// The class's index, adding it when new.
    pub fn class(&mut self, name: &str) -> u32 {
        if let Some(&i) = self.index.get(name) {
            return i;
        }
        let i = u32::try_from(self.classes.len()).unwrap_or(u32::MAX);
        self.classes.push(name.to_string());
        self.index.insert(name.to_string(), i);
        i
    }

    pub fn class_index(&self, name: &str) -> Option<u32> {
        self.index.get(name).copied()
    }

    /// Adds a text labelled with one or more classes. Empty texts teach nothing and are
    /// skipped.
    pub fn add(&mut self, text: &str, labels: &[&str], weight: f32, held_out: bool) {
        if text.trim().is_empty() || labels.is_empty() {
            return;
        }
        let mut ids: Vec<u32> = labels.iter().map(|l| self.class(l)).collect();
        ids.sort_unstable();
        ids.dedup();
        self.examples.push(Example {
            text: text.to_string(),
            labels: ids,
            weight,
            held_out,
            part_of: None,
        });
    }

    /// Adds a part of example `whole` (a request asking for several classes, cut into one
    /// text per class), labelled with one class. Cross-validation holds it out with its
    /// whole: a fold that learned the part's words from the whole would rate the part
    /// surer than a new request. Ignored when `whole` is not an example yet or is itself
    /// a part.
    pub fn add_part(&mut self, text: &str, label: &str, weight: f32, whole: usize) {
        let Some(of) = self.examples.get(whole) else {
            return;
        };
        if text.trim().is_empty() || of.part_of.is_some() {
            return;
        }
        let held_out = of.held_out;
        let label = self.class(label);
        self.examples.push(Example {
            text: text.to_string(),
            labels: vec![label],
            weight,
            held_out,
            part_of: Some(whole),
        });
    }

    pub fn classes(&self) -> &[String] {
        &self.classes
    }

    pub fn examples(&self) -> &[Example] {
        &self.examples
    }

    /// The vectors the network learns from, one per example (probes, else dense vectors;
    /// empty without either).
    pub fn head_inputs(&self) -> &[Vec<f32>] {
        if self.probes.is_empty() {
            &self.dense
        } else {
            &self.probes
        }
    }

    /// Gives every example a dense vector (its sentence embedding, say) that the model
    /// learns from beside its n-grams; scoring then takes the text's vector too
    /// ([`Model::probabilities_with`]). Refused (false) unless there is one vector per
    /// example, all of one length.
    pub fn set_dense(&mut self, vectors: Vec<Vec<f32>>) -> bool {
        let fits = self.one_per_example(&vectors);
        if fits {
            self.dense = vectors;
        }
        fits
    }

    /// Gives every example the vector the network learns from in place of its dense one:
    /// a longer reading of the same text (the encoder's earlier layers beside its sentence
    /// vector, say), which the network's hidden layer can use and the linear model, one
    /// weight per value, gains little from. Scoring then gives the network the text's
    /// probe ([`Model::head_probabilities`], [`Model::head_dims`]). Refused (false) unless
    /// there is one vector per example, all of one length.
    pub fn set_probes(&mut self, vectors: Vec<Vec<f32>>) -> bool {
        let fits = self.one_per_example(&vectors);
        if fits {
            self.probes = vectors;
        }
        fits
    }

    /// Whether there is one vector per example, all of one length above zero.
    fn one_per_example(&self, vectors: &[Vec<f32>]) -> bool {
        let dims = vectors.first().map_or(0, Vec::len);
        vectors.len() == self.examples.len() && dims > 0 && vectors.iter().all(|v| v.len() == dims)
    }

    fn dense_dims(&self) -> usize {
        self.dense.first().map_or(0, Vec::len)
    }

    /// A digest of everything training reads, settings included: the key of the
    /// trained artifact in a cache.
    pub fn key(&self, settings: &Settings) -> [u8; 32] {
        let mut h = Sha256::new();
        h.update(crate::artifact::FORMAT.to_le_bytes());
        h.update(METHOD.to_le_bytes());
        h.update(format!("{settings:?}").as_bytes());
        for c in &self.classes {
            h.update((c.len() as u64).to_le_bytes());
            h.update(c.as_bytes());
        }
        for e in &self.examples {
            h.update((e.text.len() as u64).to_le_bytes());
            h.update(e.text.as_bytes());
            for l in &e.labels {
                h.update(l.to_le_bytes());
            }
            h.update(e.weight.to_le_bytes());
            h.update([u8::from(e.held_out), 0xff]);
            if let Some(of) = e.part_of {
                h.update((of as u64).to_le_bytes());
            }
        }
        for v in &self.dense {
            for x in v {
                h.update(x.to_le_bytes());
            }
        }
        if !self.probes.is_empty() {
            h.update(b"probes");
        }
        for v in &self.probes {
            for x in v {
                h.update(x.to_le_bytes());
            }
        }
        h.finalize().into()
    }
}

/// How training turns a set into a model, beyond the settings: changed whenever a model
/// trained on the same set would come out different, so a cached one is not reused.
/// 2: folds keep every copy of a text together, parts included. 3: a network over the
/// dense vectors where every example asks for one class. 4: copies of an example are one
/// example weighing as much as all of them. 5: the solver sums a row's products in four
/// running sums.
const METHOD: u32 = 5;

/// Training knobs; the defaults are scikit-learn's `LinearSVC` where it has one.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// Inverse regularisation strength.
    pub c: f64,
    /// Most passes over the examples per class.
    pub max_epochs: usize,
    /// Folds of cross-validation for calibration and the report; 0 or 1 skips it.
    pub folds: u32,
    /// An n-gram must occur in this many examples to be a feature; `None` picks 1 for
    /// small sets and 2 from [`Settings::MIN_DF_FROM`] examples on.
    pub min_df: Option<u32>,
    /// Whether to train the network over the dense vectors, where every example asks for
    /// one class (a caller that will not ask it saves the time).
    pub network: bool,
}

impl Settings {
    /// Examples from which rare n-grams (seen once) are dropped.
    pub const MIN_DF_FROM: usize = 2_000;
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            c: 1.0,
            max_epochs: 100,
            folds: 3,
            min_df: None,
            network: true,
        }
    }
}

/// A trained classifier. Scoring a text costs one pass over its n-grams and the weights
/// they touch.
#[derive(Debug, Clone, PartialEq)]
pub struct Model {
    pub(crate) key: [u8; 32],
    pub(crate) vocab: Vocabulary,
    pub(crate) classes: Vec<String>,
    /// Weights by feature: `entries[offsets[f]..offsets[f + 1]]` are `(class, weight)`.
    pub(crate) offsets: Vec<u32>,
    pub(crate) entries: Vec<(u32, f32)>,
    /// The same weights laid out as one row per feature with a weight for every class,
    /// where nearly every feature has one for nearly every class (as a linear SVM trained
    /// one class against the rest on a small catalog gives): scoring then adds whole
    /// rows, which compiles to vector instructions. `None` where the rows would take
    /// more memory than the entries ([`dense_rows`]).
    pub(crate) rows: Option<Vec<f32>>,
    pub(crate) bias: Vec<f32>,
    /// Fitted on every class's held-out decisions together.
    pub(crate) calibration: Calibration,
    /// One per class: its own fit where it has enough held-out examples on both sides,
    /// else the shared one. A class that co-occurs with many others ("flights" in most
    /// travel requests) scores high on texts that are not its own; its own fit knows.
    pub(crate) per_class: Vec<Calibration>,
    pub(crate) report: Option<Report>,
    /// Examples it learned from, per class.
    pub(crate) support: Vec<u32>,
    /// Length of the dense vector appended to the n-grams (0: none); its features follow
    /// the vocabulary's.
    pub(crate) dense_dims: usize,
    /// A network over the dense vectors alone, where every example asks for one class.
    pub(crate) head: Option<Head>,
}

/// Every feature's weights as a row of one weight per class (0 where the entries have
/// none), when those rows take no more memory than the `(class, weight)` entries: at
/// least half of all (feature, class) pairs have a weight.
pub(crate) fn dense_rows(
    offsets: &[u32],
    entries: &[(u32, f32)],
    classes: usize,
) -> Option<Vec<f32>> {
    let features = offsets.len().checked_sub(1)?;
    let cells = features.checked_mul(classes)?;
    if cells == 0 || entries.len().checked_mul(2)? < cells {
        return None;
    }
    let mut rows = vec![0.0_f32; cells];
    for (f, bounds) in offsets.windows(2).enumerate() {
        let row = &mut rows[f * classes..(f + 1) * classes];
        for &(k, w) in entries.get(bounds[0] as usize..bounds[1] as usize)? {
            *row.get_mut(k as usize)? += w;
        }
    }
    Some(rows)
}

/// A dense vector counts as much as each n-gram family (each is scaled to norm 1/√2).
const DENSE_SCALE: f32 = std::f32::consts::FRAC_1_SQRT_2;

/// The n-gram vector with the dense one appended after the vocabulary's features.
fn with_dense(mut x: Sparse, dense: Option<&[f32]>, first: usize) -> Sparse {
    let Some(dense) = dense else { return x };
    let norm = dense.iter().map(|v| v * v).sum::<f32>().sqrt();
    if norm == 0.0 {
        return x;
    }
    for (j, v) in dense.iter().enumerate() {
        if let Ok(id) = u32::try_from(first + j) {
            x.idx.push(id);
            x.val.push(v / norm * DENSE_SCALE);
        }
    }
    x
}

/// Examples from which training takes long enough to report it: a second or more on
/// two cores (CLINC150's 15,000 take about ten).
const LONG_TRAINING: usize = 5_000;

impl Model {
    /// Trains on the set, then (with enough examples to spare) cross-validates to fit the
    /// calibration and the report. The same set and settings give the same model.
    pub fn train(set: &TrainingSet, settings: &Settings) -> Self {
        // Seconds of silence look like a hang: say what is under way where it is long.
        let long = set.examples.len() >= LONG_TRAINING;
        let started = std::time::Instant::now();
        if long {
            tracing::info!(
                target: "waypoint::progress",
                "training the router on {} texts for {} entries",
                set.examples.len(),
                set.classes.len()
            );
        }
        let model = Self::train_both(set, settings);
        if long {
            tracing::info!(
                target: "waypoint::progress",
                "trained the router in {:.1}s",
                started.elapsed().as_secs_f64()
            );
        }
        model
    }

    /// The linear model and, where asked, the network beside it.
    fn train_both(set: &TrainingSet, settings: &Settings) -> Self {
        // The network learns from the set apart from the linear model, so it trains
        // beside it: each fills the other's single-threaded stretches (the vocabulary,
        // the calibration fit, the network's steps between batches) on the second core.
        // Neither reads what the other makes, so the model is the one training them in
        // turn gives.
        std::thread::scope(|s| {
            let head = settings.network.then(|| s.spawn(|| train_head(set)));
            let mut model = Self::train_linear(set, settings);
            // A network whose thread died leaves the router without one, as a set it
            // cannot learn from does.
            model.head = head.and_then(|h| h.join().ok()).flatten();
            model
        })
    }

    /// The linear model, its calibrations and the cross-validation report.
    fn train_linear(set: &TrainingSet, settings: &Settings) -> Self {
        let min_df = settings
            .min_df
            .unwrap_or(if set.examples.len() >= Settings::MIN_DF_FROM {
                2
            } else {
                1
            });
        let vocab = Vocabulary::build(set.examples.iter().map(|e| e.text.as_str()), min_df);
        let dense_dims = set.dense_dims();
        let xs: Vec<Sparse> = set
            .examples
            .iter()
            .enumerate()
            .map(|(i, e)| {
                with_dense(
                    vocab.vector(&e.text),
                    set.dense.get(i).map(Vec::as_slice),
                    vocab.len(),
                )
            })
            .collect();
        let classes = set.classes.len();
        let all: Vec<usize> = (0..set.examples.len()).collect();
        let dims = vocab.len() + dense_dims;
        let weights = fit(set, &xs, &all, classes, dims, settings);
        let mut support = vec![0_u32; classes];
        for e in &set.examples {
            for &l in &e.labels {
                support[l as usize] += 1;
            }
        }
        let mut model = Self::assemble(set, vocab, dense_dims, &weights, support);
        model.key = set.key(settings);
        if let Some(cv) = cross_validate(set, &xs, &model.vocab, dense_dims, settings) {
            model.calibration = cv.shared;
            model.per_class = cv.per_class;
            model.report = Some(cv.report);
        } else {
            model.per_class = vec![Calibration::default(); model.classes.len()];
        }
        model
    }

    fn assemble(
        set: &TrainingSet,
        vocab: Vocabulary,
        dense_dims: usize,
        weights: &[svm::ClassWeights],
        support: Vec<u32>,
    ) -> Self {
        let dims = vocab.len() + dense_dims;
        let mut counts = vec![0_u32; dims + 1];
        for w in weights {
            for (f, _) in &w.features {
                counts[*f as usize + 1] += 1;
            }
        }
        for f in 0..dims {
            counts[f + 1] += counts[f];
        }
        let offsets = counts;
        let mut fill = offsets.clone();
        let mut entries = vec![(0_u32, 0.0_f32); offsets[dims] as usize];
        for (k, w) in weights.iter().enumerate() {
            let class = u32::try_from(k).unwrap_or(u32::MAX);
            for &(f, v) in &w.features {
                let at = &mut fill[f as usize];
                entries[*at as usize] = (class, v);
                *at += 1;
            }
        }
        Self {
            key: [0; 32],
            vocab,
            classes: set.classes.clone(),
            rows: dense_rows(&offsets, &entries, set.classes.len()),
            offsets,
            entries,
            bias: weights.iter().map(|w| w.bias).collect(),
            calibration: Calibration::default(),
            per_class: Vec::new(),
            report: None,
            support,
            dense_dims,
            head: None,
        }
    }

    pub fn classes(&self) -> &[String] {
        &self.classes
    }

    /// The digest of the training set and settings this model came from.
    pub fn key(&self) -> [u8; 32] {
        self.key
    }

    /// The calibration fitted on all classes together.
    pub fn calibration(&self) -> Calibration {
        self.calibration
    }

    /// Classes with a calibration of their own.
    pub fn own_calibrations(&self) -> usize {
        self.per_class
            .iter()
            .filter(|c| **c != self.calibration)
            .count()
    }

    pub fn report(&self) -> Option<&Report> {
        self.report.as_ref()
    }

    /// Examples the class learned from.
    pub fn support(&self, class: usize) -> u32 {
        self.support.get(class).copied().unwrap_or(0)
    }

    /// Features the model knows.
    pub fn features(&self) -> usize {
        self.vocab.len()
    }

    /// Non-zero weights over all classes.
    pub fn weights(&self) -> usize {
        self.entries.len()
    }

    /// Raw decision values, one per class: above 0 means "this class" to its SVM.
    pub fn decisions(&self, text: &str) -> Vec<f32> {
        self.decisions_with(text, None)
    }

    /// Length of the dense vector the model was trained with (0: none).
    pub fn dense_dims(&self) -> usize {
        self.dense_dims
    }

    /// Decision values for a text and its dense vector; a vector of the wrong length is
    /// ignored, as is one the model was not trained with.
    pub fn decisions_with(&self, text: &str, dense: Option<&[f32]>) -> Vec<f32> {
        let dense = dense.filter(|d| self.dense_dims > 0 && d.len() == self.dense_dims);
        let x = with_dense(self.vocab.vector(text), dense, self.vocab.len());
        self.decide(&x)
    }

    fn decide(&self, x: &Sparse) -> Vec<f32> {
        let mut out = self.bias.clone();
        if let Some(rows) = &self.rows {
            let classes = out.len();
            for (f, v) in x.iter() {
                let at = f as usize * classes;
                let Some(row) = rows.get(at..at + classes) else {
                    continue;
                };
                // The same products added in the same order as the entries below; a
                // missing entry adds 0.
                for (o, w) in out.iter_mut().zip(row) {
                    *o += w * v;
                }
            }
            return out;
        }
        for (f, v) in x.iter() {
            let from = self.offsets[f as usize] as usize;
            let to = self.offsets[f as usize + 1] as usize;
            for &(k, w) in &self.entries[from..to] {
                out[k as usize] += w * v;
            }
        }
        out
    }

    /// Whether the model has a network over the dense vectors
    /// ([`Model::head_probabilities`]).
    pub fn has_head(&self) -> bool {
        self.head.is_some()
    }

    /// Length of the vector the network reads (its probe, or its dense vector where it
    /// was trained on those), when the model has one.
    pub fn head_dims(&self) -> Option<usize> {
        self.head.as_ref().map(|h| h.dims)
    }

    /// The network's probabilities for a text's probe or dense vector, which sum to one over the
    /// classes: `None` without a network or for a vector of the wrong length.
    pub fn head_probabilities(&self, dense: &[f32]) -> Option<Vec<f32>> {
        self.head.as_ref()?.probabilities(dense)
    }

    /// The network's hidden-layer activations for a text's probe or dense vector: `None`
    /// without a network or for a vector of the wrong length.
    pub fn head_hidden(&self, dense: &[f32]) -> Option<Vec<f32>> {
        self.head.as_ref()?.hidden(dense)
    }

    /// [`Model::head_hidden`] for many vectors at once (the same activations to the bit,
    /// sooner): `None` without a network or if any vector is of the wrong length.
    pub fn head_hidden_many(&self, dense: &[&[f32]]) -> Option<Vec<Vec<f32>>> {
        self.head.as_ref()?.hidden_many(dense)
    }

    /// The network's probabilities from its hidden layer's activations
    /// ([`Model::head_hidden`]), for a caller that needs both: the same as
    /// [`Model::head_probabilities`] of the vector they were read from.
    pub fn head_probabilities_of_hidden(&self, hidden: &[f32]) -> Option<Vec<f32>> {
        self.head.as_ref()?.probabilities_of_hidden(hidden)
    }

    /// Calibrated probabilities that each class is right for the text.
    pub fn probabilities(&self, text: &str) -> Vec<f32> {
        self.probabilities_with(text, None)
    }

    /// The same with the text's dense vector, for a model trained with them.
    pub fn probabilities_with(&self, text: &str, dense: Option<&[f32]>) -> Vec<f32> {
        let mut d = self.decisions_with(text, dense);
        for (v, c) in d.iter_mut().zip(&self.per_class) {
            *v = c.probability(*v);
        }
        d
    }
}

/// The network over the probes (else the dense vectors), where there are vectors and
/// every example asks for exactly one class (a softmax gives a text one class).
fn train_head(set: &TrainingSet) -> Option<Head> {
    let inputs = if set.probes.is_empty() {
        &set.dense
    } else {
        &set.probes
    };
    if inputs.is_empty() || set.examples.iter().any(|e| e.labels.len() != 1) {
        return None;
    }
    let samples: Vec<Sample<'_>> = set
        .examples
        .iter()
        .zip(inputs)
        .map(|(e, x)| Sample {
            x,
            class: e.labels[0],
            weight: e.weight,
        })
        .collect();
    Head::train(&samples, set.classes.len())
}

/// Trains on the examples at `rows`.
fn fit(
    set: &TrainingSet,
    xs: &[Sparse],
    rows: &[usize],
    classes: usize,
    dims: usize,
    settings: &Settings,
) -> Vec<svm::ClassWeights> {
    let merged = merged_rows(set, xs, rows);
    svm::train(&merged, classes, dims, settings.c, settings.max_epochs)
}

/// The rows to train on: copies of one text with the same labels and weight are one
/// example weighing as much as all of them. With the squared hinge, `n` equal terms of
/// the primal are one term with `n` times the penalty, so the optimum is the same, and
/// each pass over the examples costs what it reads: multi-intent sets are built from a
/// small stock of clauses (MixSNIPS' 91,000 parts from about 13,000 texts), and a
/// caller's history repeats its requests.
fn merged_rows<'a>(set: &'a TrainingSet, xs: &'a [Sparse], rows: &[usize]) -> Vec<Row<'a>> {
    let mut first_of: HashMap<(&str, &[u32], u32), (usize, usize)> = HashMap::new();
    let mut merged: Vec<Row<'_>> = Vec::with_capacity(rows.len());
    for &i in rows {
        let e = &set.examples[i];
        let key = (e.text.as_str(), e.labels.as_slice(), e.weight.to_bits());
        // A text's dense vector is the text's; two that differ stay two examples.
        if let Some(&(at, first)) = first_of.get(&key)
            && set.dense.get(first) == set.dense.get(i)
        {
            merged[at].weight += e.weight;
            continue;
        }
        first_of.entry(key).or_insert((merged.len(), i));
        merged.push(Row {
            x: &xs[i],
            labels: &e.labels,
            weight: e.weight,
        });
    }
    merged
}

/// What cross-validation gives a model.
struct CrossValidated {
    shared: Calibration,
    per_class: Vec<Calibration>,
    report: Report,
}

/// Held-out examples a class needs on each side (its own, and others') for a calibration
/// of its own.
const OWN_CALIBRATION_FROM: usize = 10;

/// Which examples each fold trains on and which it scores.
struct Folds {
    count: usize,
    /// Per example, the folds that must not learn from it (bit `k` for fold `k`).
    withheld: Vec<u64>,
    /// Per example, the fold that scores it; `None` for texts no fold holds out (an
    /// entry's own words), for a repeat of a text already scored, and for a request whose
    /// parts went to different folds.
    scored_in: Vec<Option<usize>>,
}

/// Deals the held-out texts round the folds so that no fold learns a text it scores, not
/// even inside a longer request: every part of a request, and every request, with the
/// same words goes to one fold, and a request cut into parts is withheld from each fold
/// one of its parts went to. Benchmarks built by joining single questions repeat each
/// question in many requests; dealt by request, every fold would have seen the question
/// it is scored on, and the calibration would learn a confidence that new requests do
/// not earn. Stratified by first label. `None` with fewer than two texts per fold.
fn deal_folds(set: &TrainingSet, folds: usize) -> Option<Folds> {
    let count = folds.min(64);
    if count < 2 {
        return None;
    }
    let n = set.examples.len();
    let mut cut = vec![false; n];
    for e in &set.examples {
        if let Some(of) = e.part_of {
            cut[of] = true;
        }
    }
    // Atoms: parts, and held-out requests that were not cut. Their words decide the fold;
    // the first copy of a text is the one scored.
    let mut fold_of_words: std::collections::HashMap<String, usize> =
        std::collections::HashMap::new();
    let mut dealt = vec![0_usize; set.classes.len()];
    let mut withheld = vec![0_u64; n];
    let mut scored_in: Vec<Option<usize>> = vec![None; n];
    for (i, e) in set.examples.iter().enumerate() {
        if !e.held_out || cut[i] {
            continue;
        }
        let words = crate::features::words(&e.text).join(" ");
        let fold = *fold_of_words.entry(words).or_insert_with(|| {
            // Each class starts where its index says, so classes with one text each do
            // not all land in fold 0.
            let first = e.labels[0] as usize;
            let f = (dealt[first] + first) % count;
            dealt[first] += 1;
            scored_in[i] = Some(f);
            f
        });
        withheld[i] |= 1 << fold;
        if let Some(of) = e.part_of {
            withheld[of] |= 1 << fold;
        }
    }
    if fold_of_words.len() < count * 2 {
        return None;
    }
    // A cut request is scored too when all its parts went to one fold.
    let mut seen_whole = std::collections::HashSet::new();
    for i in 0..n {
        let mask = withheld[i];
        if cut[i] && mask.is_power_of_two() {
            let words = crate::features::words(&set.examples[i].text).join(" ");
            if seen_whole.insert(words) {
                scored_in[i] = Some(mask.trailing_zeros() as usize);
            }
        }
    }
    Some(Folds {
        count,
        withheld,
        scored_in,
    })
}

/// Holds each fold's texts out, trains on the rest (over the full vocabulary, so the
/// folds cost no re-vectorising), and fits the calibrations on the held-out decisions.
/// `None` when there are too few held-out texts ([`deal_folds`]).
fn cross_validate(
    set: &TrainingSet,
    xs: &[Sparse],
    vocab: &Vocabulary,
    dense_dims: usize,
    settings: &Settings,
) -> Option<CrossValidated> {
    let plan = deal_folds(set, settings.folds as usize)?;
    let classes = set.classes.len();
    let mut pairs: Vec<Vec<(f32, bool)>> = vec![Vec::new(); classes];
    let mut tally = Tally::new(classes);
    for fold in 0..plan.count {
        let train: Vec<usize> = (0..set.examples.len())
            .filter(|&i| plan.withheld[i] & (1 << fold) == 0)
            .collect();
        let weights = fit(set, xs, &train, classes, vocab.len() + dense_dims, settings);
        let model = Model::assemble(set, vocab.clone(), dense_dims, &weights, Vec::new());
        for i in (0..set.examples.len()).filter(|&i| plan.scored_in[i] == Some(fold)) {
            let d = model.decide(&xs[i]);
            let labels = &set.examples[i].labels;
            let best = best_class(&d);
            let mut predicted: Vec<u32> = (0..d.len())
                .filter(|&k| d[k] > 0.0)
                .filter_map(|k| u32::try_from(k).ok())
                .collect();
            if !predicted.contains(&best) {
                predicted.push(best);
            }
            tally.add(labels, &predicted, best);
            for (k, v) in d.iter().enumerate() {
                let class = u32::try_from(k).unwrap_or(u32::MAX);
                pairs[k].push((*v, labels.contains(&class)));
            }
        }
    }
    let all: Vec<(f32, bool)> = pairs.iter().flatten().copied().collect();
    let shared = Calibration::fit(&all);
    let per_class = pairs
        .iter()
        .map(|own| {
            let right = own.iter().filter(|p| p.1).count();
            if right >= OWN_CALIBRATION_FROM && own.len() - right >= OWN_CALIBRATION_FROM {
                Calibration::fit(own)
            } else {
                shared
            }
        })
        .collect();
    Some(CrossValidated {
        shared,
        per_class,
        report: tally.finish(u32::try_from(plan.count).unwrap_or(u32::MAX)),
    })
}

/// The index of the highest value (the first on ties).
pub(crate) fn best_class(d: &[f32]) -> u32 {
    let mut best = 0;
    for (k, v) in d.iter().enumerate() {
        if *v > d[best] {
            best = k;
        }
    }
    u32::try_from(best).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Requests joined from a few questions, each question in several requests, as
    /// MixATIS builds them; every request is cut into its questions.
    fn joined_questions() -> TrainingSet {
        let questions = [
            ("what meals are served on flight 811", "meal"),
            ("how many seats does a 737 hold", "capacity"),
            ("what city is mco", "city"),
            ("show me flights from boston to denver", "flight"),
            ("what is the fare to dallas", "fare"),
            ("what does ap68 mean", "abbreviation"),
        ];
        let mut set = TrainingSet::default();
        for (i, a) in questions.iter().enumerate() {
            for b in questions.iter().skip(i + 1) {
                let whole = set.examples().len();
                set.add(&format!("{} and {}", a.0, b.0), &[a.1, b.1], 1.0, true);
                set.add_part(a.0, a.1, 1.0, whole);
                set.add_part(b.0, b.1, 1.0, whole);
            }
        }
        set.add("what city is mco", &["city"], 1.0, true);
        set.add("meal", &["meal"], 1.0, false);
        set
    }

    #[test]
    fn no_fold_learns_a_text_it_scores() {
        let set = joined_questions();
        let plan = deal_folds(&set, 3).expect("six questions fill three folds");
        let words = |i: usize| crate::features::words(&set.examples()[i].text).join(" ");
        let mut scored_words = Vec::new();
        for fold in 0..plan.count {
            let scored: Vec<usize> = (0..set.examples().len())
                .filter(|&i| plan.scored_in[i] == Some(fold))
                .collect();
            assert!(!scored.is_empty(), "fold {fold} scores nothing");
            for i in scored {
                let w = words(i);
                for j in (0..set.examples().len()).filter(|&j| plan.withheld[j] & (1 << fold) == 0)
                {
                    assert!(
                        !words(j).contains(&w),
                        "fold {fold} scores “{w}” but learns from “{}”",
                        words(j)
                    );
                }
                scored_words.push(w);
            }
        }
        // Each text is scored once, however often it was written.
        let mut distinct = scored_words.clone();
        distinct.sort();
        distinct.dedup();
        assert_eq!(distinct.len(), scored_words.len());
        // An entry's own words are never held out.
        let own = set.examples().len() - 1;
        assert_eq!((plan.withheld[own], plan.scored_in[own]), (0, None));
    }

    #[test]
    fn copies_of_an_example_train_as_one_weighing_as_much_as_all() {
        let texts = [
            ("play some jazz", "music", 1.0),
            ("play some jazz", "music", 1.0),
            ("will it rain today", "weather", 1.0),
            ("play some jazz", "music", 0.5),
            ("wake me at six", "alarm", 1.0),
        ];
        let mut copies = TrainingSet::default();
        for (t, l, w) in texts {
            copies.add(t, &[l], w, false);
        }
        let vocab = Vocabulary::build(copies.examples().iter().map(|e| e.text.as_str()), 1);
        let xs: Vec<Sparse> = copies
            .examples()
            .iter()
            .map(|e| vocab.vector(&e.text))
            .collect();
        // The two copies of weight 1 are one of weight 2, where the first was; the copy of
        // another weight stays apart.
        let weights = |rows: &[Row<'_>]| rows.iter().map(|r| r.weight).collect::<Vec<_>>();
        let all = [0, 1, 2, 3, 4];
        assert_eq!(
            weights(&merged_rows(&copies, &xs, &all)),
            [2.0, 1.0, 0.5, 1.0]
        );
        // Trained, they are the example of weight 2 itself.
        let mut once = TrainingSet::default();
        for (t, l, w) in [texts[0], texts[2], texts[3], texts[4]] {
            once.add(t, &[l], w, false);
        }
        once.examples[0].weight = 2.0;
        let once_xs: Vec<Sparse> = [0, 2, 3, 4].iter().map(|&i| xs[i].clone()).collect();
        let (settings, classes) = (Settings::default(), copies.classes().len());
        assert_eq!(
            fit(&copies, &xs, &all, classes, vocab.len(), &settings),
            fit(
                &once,
                &once_xs,
                &[0, 1, 2, 3],
                classes,
                vocab.len(),
                &settings
            )
        );
        // Copies whose dense vectors differ are two examples.
        assert!(copies.set_dense(vec![vec![1.0], vec![0.0], vec![0.5], vec![1.0], vec![0.2]]));
        assert_eq!(
            weights(&merged_rows(&copies, &xs, &all)),
            [1.0, 1.0, 1.0, 0.5, 1.0]
        );
    }

    #[test]
    fn rows_of_weights_decide_as_the_entries_do() {
        let model = Model::train(&joined_questions(), &Settings::default());
        assert!(
            model.rows.is_some(),
            "a small catalog's weights are nearly all set"
        );
        let entries_only = Model {
            rows: None,
            ..model.clone()
        };
        for text in [
            "what meals are served on flight 811",
            "fare to denver",
            "zzz",
        ] {
            let x = model.vocab.vector(text);
            assert_eq!(model.decide(&x), entries_only.decide(&x), "{text}");
        }
    }

    #[test]
    fn weights_few_features_have_for_each_class_stay_entries() {
        // Four features, four classes, one weight: rows would take 16 cells for 1.
        assert!(dense_rows(&[0, 1, 1, 1, 1], &[(2, 0.5)], 4).is_none());
        let rows = dense_rows(&[0, 2, 3], &[(0, 1.0), (1, 2.0), (1, 3.0)], 2);
        assert_eq!(rows, Some(vec![1.0, 2.0, 0.0, 3.0]));
        // An entry for a class the model does not have is no model.
        assert!(dense_rows(&[0, 2], &[(0, 1.0), (5, 2.0)], 2).is_none());
    }

    #[test]
    fn too_few_texts_for_the_folds_is_no_cross_validation() {
        let mut set = TrainingSet::default();
        for _ in 0..10 {
            set.add("what city is mco", &["city"], 1.0, true);
        }
        assert!(
            deal_folds(&set, 3).is_none(),
            "one text repeated is one text"
        );
        assert!(deal_folds(&joined_questions(), 1).is_none());
    }
}
