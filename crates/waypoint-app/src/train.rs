//! Teaching the router and fitting its abstain threshold: what `train` and `calibrate`
//! report, computed here so every face reports the same.

use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::Serialize;
use waypoint_classify::cache::Source;
use waypoint_core::Engine;

use crate::error::AppError;
use crate::setup::{Notice, Setup};

/// What the router's network reads of a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NetworkReads {
    /// The sentence encoder's readings (docs/routing.md, item 2).
    Encoder,
    /// The built-in static word vectors (docs/routing.md, "Static word vectors").
    WordVectors,
}

/// What training taught the router, per entry.
#[derive(Debug, Serialize)]
pub struct TrainSummary {
    /// Labelled requests added from the files.
    pub requests_added: usize,
    /// (request, entry) labels they carried.
    pub labels_added: usize,
    /// Of the requests training added, those labelled with two or more entries.
    pub requests_asking_two: usize,
    /// The labelled requests ask for one entry at a time, so a request is planned as one
    /// request (docs/architecture.md, "Route").
    pub one_entry_per_request: bool,
    /// The catalog is taught by its entries' examples alone, one entry each, and the
    /// examples closest to a clause vote on how sure the router is (docs/routing.md,
    /// "Requests").
    pub examples_vote: bool,
    /// The share of the router's probability that a network over the encoder's readings
    /// of a request, or its static word vectors without an encoder, gives in ranking the
    /// entries (docs/routing.md, item 2); `None` where there is none.
    pub network_share: Option<f32>,
    /// Its share in how sure the router is of the best entry, where there is a network.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub network_sure_share: Option<f32>,
    /// What the network reads, where there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub network_reads: Option<NetworkReads>,
    /// How many values the network reads per request: the sentence vector's length, or
    /// more where it reads the encoder's earlier layers too (docs/routing.md, item 2).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub network_inputs: Option<usize>,
    pub classes: usize,
    pub features: usize,
    pub weights: usize,
    /// Share of the route score that is the trained model's (the rest is lexical).
    pub model_weight: f64,
    pub calibration: Calibration,
    pub cross_validation: Option<CrossValidation>,
    /// `cached` (read), `trained` (and written), or `uncached` (trained; not written).
    pub source: &'static str,
    pub cache_file: Option<String>,
    pub seconds: f64,
    /// Meaning-level matching: `off`, `on` or `failed`, with the encoder folder or why.
    pub meaning: crate::meaning::Status,
    pub entries: Vec<EntrySummary>,
    /// Steps the taught sequences run before others, which plans add when a request
    /// does not ask for them (docs/routing.md, "Prerequisites").
    pub taken_first: Vec<TakenFirst>,
    /// The taught sequences use each tool once per request, so a tool asked for again
    /// is one step.
    pub one_step_per_tool: bool,
}

#[derive(Debug, Serialize)]
pub struct TakenFirst {
    pub entry: String,
    pub first: String,
    /// Taught sequences that use `entry` and run `first` before it.
    pub before: u32,
    /// Taught sequences that use `entry`.
    pub of: u32,
}

#[derive(Debug, Serialize)]
pub struct Calibration {
    pub a: f64,
    pub b: f64,
}

#[derive(Debug, Serialize)]
pub struct CrossValidation {
    pub folds: u32,
    pub held_out: u32,
    pub accuracy: f64,
}

#[derive(Debug, Serialize)]
pub struct EntrySummary {
    pub entry: String,
    /// Texts it learned from: its own words and its requests.
    pub examples: u32,
    pub precision: Option<f64>,
    pub recall: Option<f64>,
    pub confused_with: Vec<Confusion>,
}

#[derive(Debug, Serialize)]
pub struct Confusion {
    pub entry: String,
    pub count: u32,
}

/// Trains the router on the setup's catalog and training files plus `extra` files,
/// and reports what it learned.
pub fn train(setup: &Setup, extra: &[PathBuf]) -> Result<(TrainSummary, Vec<Notice>), AppError> {
    let mut s = setup.clone();
    s.train.extend(extra.iter().cloned());
    let config = s.config()?;
    let (catalog, trained, mut notices) = s.catalog()?;
    let started = Instant::now();
    let mut built = s.engine_over(catalog, &config)?;
    notices.append(&mut built.notices);
    let engine = built.engine;
    let seconds = started.elapsed().as_secs_f64();
    let Some(learned) = engine.learned() else {
        return Err(AppError::NothingToTrain);
    };
    let model = learned.model();
    let classes = model.classes();
    let report = model.report();
    let entries = classes
        .iter()
        .enumerate()
        .map(|(k, name)| {
            let cv = report.and_then(|r| r.classes.get(k));
            EntrySummary {
                entry: name.clone(),
                examples: model.support(k),
                precision: cv.and_then(waypoint_classify::ClassReport::precision),
                recall: cv.and_then(waypoint_classify::ClassReport::recall),
                confused_with: cv
                    .map(|c| {
                        c.confused_with
                            .iter()
                            .map(|(other, count)| Confusion {
                                entry: classes.get(*other as usize).cloned().unwrap_or_default(),
                                count: *count,
                            })
                            .collect()
                    })
                    .unwrap_or_default(),
            }
        })
        .collect();
    let (source, cache_file) = match learned.source() {
        Some(Source::Cached(p)) => ("cached", Some(p.display().to_string())),
        Some(Source::Trained(p)) => ("trained", Some(p.display().to_string())),
        Some(Source::TrainedUncached(why)) => {
            notices.push(Notice::Uncached(why.clone()));
            ("uncached", None)
        }
        None => ("uncached", None),
    };
    let c = model.calibration();
    let summary = TrainSummary {
        requests_added: trained.requests,
        labels_added: trained.examples,
        requests_asking_two: engine.catalog().taught().asking_two,
        one_entry_per_request: learned.one_at_a_time(),
        examples_vote: learned.examples_vote(),
        network_share: learned.network_share(),
        network_sure_share: learned.network_sure_share(),
        network_reads: learned.network_share().map(|_| {
            if learned.reads_word_vectors() {
                NetworkReads::WordVectors
            } else {
                NetworkReads::Encoder
            }
        }),
        network_inputs: model.head_dims(),
        classes: classes.len(),
        features: model.features(),
        weights: model.weights(),
        model_weight: (learned.weight() * 1000.0).round() / 1000.0,
        calibration: Calibration { a: c.a, b: c.b },
        cross_validation: report.map(|r| CrossValidation {
            folds: r.folds,
            held_out: r.held_out,
            accuracy: (r.accuracy * 10_000.0).round() / 10_000.0,
        }),
        source,
        cache_file,
        seconds: (seconds * 1000.0).round() / 1000.0,
        meaning: crate::meaning::status(&engine),
        entries,
        taken_first: waypoint_core::plan::taken_first(engine.catalog())
            .into_iter()
            .map(|t| TakenFirst {
                entry: t.step,
                first: t.first,
                before: t.before,
                of: t.of,
            })
            .collect(),
        one_step_per_tool: engine.catalog().precedence().once_per_request(),
    };
    Ok((summary, notices))
}

/// A fitted abstain threshold and what it does, per entry and over the sweep.
#[derive(Serialize)]
pub struct CalibrateSummary {
    pub requests: usize,
    pub in_scope: usize,
    pub out_of_scope: usize,
    /// The threshold in use now, and its figures.
    pub current: waypoint_eval::calibrate::Point,
    pub fitted: waypoint_eval::calibrate::Point,
    pub entries: Vec<waypoint_eval::calibrate::EntryFigures>,
    pub curve: Vec<waypoint_eval::calibrate::Point>,
}

/// Fits the abstain threshold on `held_out` labelled requests, or — without them — on
/// the setup's training requests in cross-validation; `progress` is told each fold.
/// Answers the fit and what it was fitted on.
pub fn calibrate(
    setup: &Setup,
    held_out: Option<&Path>,
    progress: impl FnMut(usize, usize),
) -> Result<(CalibrateSummary, String, Vec<Notice>), AppError> {
    use waypoint_eval::calibrate;
    let config = setup.config()?;
    let (mut opts, notice) = setup.options(&config);
    let mut notices: Vec<Notice> = notice.into_iter().collect();
    // Route at threshold 0 so every clause reports its best candidate; the sweep decides.
    let current = opts.threshold;
    opts.threshold = 0.0;
    let (observations, from) = match held_out {
        Some(path) => {
            let text = waypoint_catalog::limited::read_file(
                path,
                waypoint_catalog::limited::MAX_INPUT_BYTES,
            )
            .map_err(|source| AppError::Read {
                path: path.to_path_buf(),
                what: "held-out requests",
                source,
            })?;
            let name = path.display().to_string();
            let cases = waypoint_eval::read_cases(&text, &name)?;
            let (catalog, _, mut more) = setup.catalog()?;
            notices.append(&mut more);
            let engine = Engine::new(catalog, opts)?;
            (calibrate::observe(&engine, &cases), format!("`{name}`"))
        }
        None => cross_validated(setup, &opts, progress)?,
    };
    if observations.is_empty() {
        return Err(AppError::BadInput(format!(
            "{from} has no labelled requests: give each `\"expect\": {{\"tools\": [...]}}` or \
             `{{\"unknown\": true}}` for one the catalog cannot serve"
        )));
    }
    let fit = calibrate::fit_threshold(&observations, calibrate::grid());
    let summary = CalibrateSummary {
        requests: observations.len(),
        in_scope: fit.in_scope,
        out_of_scope: fit.out_of_scope,
        current: calibrate::point(&observations, current),
        fitted: fit.best,
        entries: calibrate::per_entry(&observations, fit.best.threshold),
        curve: fit.curve,
    };
    Ok((summary, from, notices))
}

/// Folds of cross-validation when no held-out file is given.
const FOLDS: usize = 3;

/// The fold of each request, dealt round in order of first appearance, every copy of a
/// request (case and spacing aside) in one fold: a fold that routes a request it was
/// also taught (benchmark files repeat requests) would rate the router surer than it is.
fn folds_by_text<'r>(requests: impl Iterator<Item = &'r str>) -> Vec<usize> {
    let mut fold_of_text: std::collections::HashMap<String, usize> =
        std::collections::HashMap::new();
    requests
        .map(|r| {
            let words = r.to_lowercase();
            let words = words.split_whitespace().collect::<Vec<_>>().join(" ");
            let next = fold_of_text.len() % FOLDS;
            *fold_of_text.entry(words).or_insert(next)
        })
        .collect()
}

/// Observations from the training requests themselves: each fold is held out in turn
/// and routed by an engine taught by the other folds.
fn cross_validated(
    setup: &Setup,
    opts: &waypoint_core::Options,
    mut progress: impl FnMut(usize, usize),
) -> Result<(Vec<waypoint_eval::calibrate::Observation>, String), AppError> {
    if setup.train.is_empty() {
        return Err(AppError::NothingToCalibrate);
    }
    let mut cases = Vec::new();
    for file in &setup.train {
        let text =
            waypoint_catalog::limited::read_file(file, waypoint_catalog::limited::MAX_INPUT_BYTES)
                .map_err(|source| AppError::Read {
                    path: file.clone(),
                    what: "training file",
                    source,
                })?;
        cases.extend(waypoint_eval::read_cases(
            &text,
            &file.display().to_string(),
        )?);
    }
    let alone = Setup {
        train: Vec::new(),
        ..setup.clone()
    };
    let fold_of = folds_by_text(cases.iter().map(|c| c.request.as_str()));
    let mut observations = Vec::new();
    for fold in 0..FOLDS {
        let (held, taught): (Vec<_>, Vec<_>) = cases
            .iter()
            .enumerate()
            .partition(|(i, _)| fold_of[*i] == fold);
        let taught: Vec<_> = taught.into_iter().map(|(_, c)| c.clone()).collect();
        let held: Vec<_> = held.into_iter().map(|(_, c)| c.clone()).collect();
        // The catalog alone, taught only by the other folds.
        let (mut catalog, _, _) = alone.catalog()?;
        waypoint_eval::train(&mut catalog, &taught);
        let engine = Engine::new(catalog, opts.clone())?;
        observations.extend(waypoint_eval::calibrate::observe(&engine, &held));
        progress(fold + 1, FOLDS);
    }
    Ok((
        observations,
        format!(
            "{} training requests, {FOLDS}-fold cross-validation",
            cases.len()
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_of_a_request_share_a_fold() {
        let requests = [
            "play jazz",
            "will it rain",
            "Play  jazz",
            "set an alarm",
            "play jazz",
        ];
        assert_eq!(folds_by_text(requests.into_iter()), [0, 1, 0, 2, 0]);
    }
}
