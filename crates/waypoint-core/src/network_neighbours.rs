//! The taught requests nearest a clause as the trained router's network reads them, where
//! an encoder is on (docs/routing.md, "Requests").
//!
//! The closest requests by sentence vector say how sure the router's best entry is
//! ([`crate::meaning`]). A sentence vector holds all a request means, much of it beside
//! what tells one entry's requests from another's; the network's hidden layer, trained to
//! tell them apart, holds that part. Requests close in it ask for the same entry, and a
//! request no entry handles sits near none. Its vote is averaged with the sentence
//! vectors' per entry: alone it ranks well and separates requests no entry handles worse
//! (docs/performance.md).

use std::ops::Range;

use waypoint_classify::{Model, TrainingSet};
use waypoint_embed::QuantRows;
use waypoint_wordvec::{Centre, unit};

use crate::meaning::{NEIGHBOURS, Scale, entry_spans, vote, voting_requests};

/// The mean cosine of the closest requests (activations less their mean, at unit
/// length) below `low` means nothing, above `high` a match. Chosen on CLINC150's dev
/// split and its train split's out-of-scope requests (docs/performance.md).
const SCALE: Scale = Scale {
    low: 0.65,
    high: 0.95,
};

/// Each entry's taught requests as the network's hidden layer reads them, less their
/// mean, in 8-bit rows.
#[derive(Debug, Clone)]
pub(crate) struct NetworkNeighbours {
    /// The mean of the requests' activations at unit length, taken out of them and of
    /// each text's. Made unit length first, a request's share of the mean does not
    /// depend on how strongly the network reads it.
    centre: Centre,
    rows: QuantRows,
    /// Per entry with requests: its index in the route index and its rows in `rows`.
    spans: Vec<(u32, Range<usize>)>,
}

impl NetworkNeighbours {
    /// From the requests of a training set that ask for one entry, read by `model`'s
    /// network (which learned from the set's probes or dense vectors); `docs` maps a
    /// class to its route-index entry (`u32::MAX`: none). `None` without a network or
    /// such requests.
    pub(crate) fn new(set: &TrainingSet, model: &Model, docs: &[u32]) -> Option<Self> {
        let inputs = set.head_inputs();
        if inputs.len() != set.examples().len() || !model.has_head() {
            return None;
        }
        let (spans, voting) = entry_spans(&voting_requests(set, |_| true), docs);
        let chosen: Vec<&[f32]> = voting.iter().map(|&i| inputs[i].as_slice()).collect();
        let mut hidden = read_all(model, &chosen)?;
        for h in &mut hidden {
            unit(h);
        }
        let dims = hidden.first()?.len();
        let centre = Centre::of(hidden.iter().map(Vec::as_slice), dims);
        for h in &mut hidden {
            centre.apply(h);
        }
        let rows = QuantRows::new(hidden.iter().map(Vec::as_slice), dims);
        Some(Self {
            centre,
            rows,
            spans,
        })
    }

    /// `(entry, score)` for every entry with a score above zero: the mean cosine of its
    /// [`NEIGHBOURS`] requests closest to the text's reading, on [`SCALE`]. `hidden`: the
    /// network's hidden layer for the text ([`Model::head_hidden`]).
    pub(crate) fn scores(&self, mut h: Vec<f32>) -> Vec<(u32, f32)> {
        unit(&mut h);
        self.centre.apply(&mut h);
        vote::<NEIGHBOURS>(&self.rows.dots(&h), &self.spans, SCALE)
    }
}

/// Inputs read through the network together: enough for its tiles of four, few enough
/// that their copy stays in the cache.
const READ_AT_ONCE: usize = 64;

/// The hidden activations of every input, read many at a time and on two threads where
/// there are many; `None` if any is refused.
fn read_all(model: &Model, inputs: &[&[f32]]) -> Option<Vec<Vec<f32>>> {
    // A chunk at a time, so the copies of the inputs made for the network stay small
    // (15,000 encoder probes are 70 MB).
    let read = |part: &[&[f32]]| -> Option<Vec<Vec<f32>>> {
        let mut all = Vec::with_capacity(part.len());
        for chunk in part.chunks(READ_AT_ONCE) {
            all.extend(model.head_hidden_many(chunk)?);
        }
        Some(all)
    };
    if inputs.len() < 1_000 {
        return read(inputs);
    }
    let (first, second) = inputs.split_at(inputs.len() / 2);
    let (a, b) = std::thread::scope(|s| {
        let other = s.spawn(|| read(second));
        (read(first), other.join().ok().flatten())
    });
    let mut all = a?;
    all.extend(b?);
    Some(all)
}

#[cfg(test)]
mod tests {
    use super::*;
    use waypoint_classify::Settings;

    /// Three classes of requests whose vectors lie around three directions of 8.
    fn set() -> TrainingSet {
        let mut set = TrainingSet::default();
        let mut vectors = Vec::new();
        for (c, name) in ["a", "b", "c"].iter().enumerate() {
            for k in 0..12 {
                set.add(&format!("{name} request {k}"), &[name], 1.0, true);
                let mut v = vec![0.05 * ((k * 7 + c) % 5) as f32; 8];
                v[c * 2] = 1.0;
                v[c * 2 + 1] = 0.5 + 0.02 * k as f32;
                vectors.push(v);
            }
        }
        assert!(set.set_dense(vectors));
        set
    }

    fn model(set: &TrainingSet) -> Model {
        let settings = Settings {
            network: true,
            folds: 0,
            ..Settings::default()
        };
        Model::train(set, &settings)
    }

    #[test]
    fn a_clause_read_like_an_entrys_requests_goes_to_that_entry() {
        let set = set();
        let model = model(&set);
        let near = NetworkNeighbours::new(&set, &model, &[10, 11, 12]).expect("a network");
        assert_eq!(near.spans, [(10, 0..12), (11, 12..24), (12, 24..36)]);
        let mut like_b = vec![0.0; 8];
        like_b[2] = 1.0;
        like_b[3] = 0.6;
        let scores = near.scores(model.head_hidden(&like_b).expect("a reading"));
        let best = scores
            .iter()
            .max_by(|x, y| x.1.total_cmp(&y.1))
            .expect("a score");
        assert_eq!(best.0, 11, "{scores:?}");
        // A vector the network was not trained on the length of is no reading.
        assert!(model.head_hidden(&[1.0; 3]).is_none());
    }

    #[test]
    fn no_network_no_neighbours() {
        let set = set();
        let settings = Settings {
            network: false,
            folds: 0,
            ..Settings::default()
        };
        let model = Model::train(&set, &settings);
        assert!(NetworkNeighbours::new(&set, &model, &[0, 1, 2]).is_none());
    }

    #[test]
    fn the_votes_are_averaged_per_entry_and_one_left_out_counts_zero() {
        let a = [(1, 0.8), (2, 0.4)];
        let b = [(2, 0.6), (3, 0.2)];
        assert_eq!(
            crate::meaning::mean_votes(&a, &b),
            [(1, 0.4), (2, 0.5), (3, 0.1)]
        );
        assert!(crate::meaning::mean_votes(&[], &[]).is_empty());
    }
}
