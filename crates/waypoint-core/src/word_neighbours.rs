//! The taught requests nearest a clause by the static word vectors, where no sentence
//! encoder is on (docs/routing.md, "Static word vectors").
//!
//! With an encoder, each entry's few requests closest to a clause vote after the trained
//! router ([`crate::meaning`]). The built-in word vectors can hold the same vote without
//! one: far weaker than the encoder on a whole sentence, they still put "what's my
//! balance" near "how much money is in my account", which share no n-gram, and a clause
//! near no taught request (one no entry handles) far from every entry. The vectors are
//! taken less the requests' mean, which every text's vector shares and which says nothing
//! of which entry it asks for.

use waypoint_classify::TrainingSet;
use waypoint_embed::QuantRows;
use waypoint_wordvec::Centre;

use crate::meaning::{NEIGHBOURS, Scale, entry_spans, vote, voting_requests};

/// The mean cosine of the closest requests below `low` means nothing, above `high` a
/// match. Chosen on CLINC150's dev split and its train split's out-of-scope requests
/// (docs/performance.md).
const SCALE: Scale = Scale {
    low: 0.32,
    high: 0.8,
};

/// Each entry's taught requests as static word vectors, centred, in 8-bit rows.
#[derive(Debug, Clone)]
pub(crate) struct WordNeighbours {
    /// The kept requests' mean, taken out of them and of each text.
    centre: Centre,
    rows: QuantRows,
    /// Per entry with requests: its index in the route index and its rows in `rows`.
    spans: Vec<(u32, std::ops::Range<usize>)>,
}

impl WordNeighbours {
    /// From the labelled requests of a training set that ask for one entry; `docs` maps
    /// a class to its route-index entry (`u32::MAX`: none). Also gives what the network
    /// reads of every example of the set ([`Self::reading`]; zeros where the table knows
    /// none of its words), from the one vector per text both need. `None` without such
    /// requests.
    pub(crate) fn with_readings(set: &TrainingSet, docs: &[u32]) -> Option<(Self, Vec<Vec<f32>>)> {
        let table = waypoint_wordvec::builtin();
        let mut vectors: Vec<Option<Vec<f32>>> = set
            .examples()
            .iter()
            .map(|e| table.sentence(&e.text))
            .collect();
        // Per class, the examples whose vectors vote.
        let per_class = voting_requests(set, |i| vectors[i].is_some());
        if per_class.iter().all(Vec::is_empty) {
            return None;
        }
        let centre = Centre::of(
            per_class
                .iter()
                .flatten()
                .filter_map(|&i| vectors[i].as_deref()),
            table.dims(),
        );
        for v in vectors.iter_mut().flatten() {
            centre.apply(v);
        }
        let (spans, voting) = entry_spans(&per_class, docs);
        let rows = QuantRows::new(
            voting.iter().filter_map(|&i| vectors[i].as_deref()),
            table.dims(),
        );
        let readings = vectors
            .into_iter()
            .map(|v| v.unwrap_or_else(|| vec![0.0; table.dims()]))
            .collect();
        Some((
            Self {
                centre,
                rows,
                spans,
            },
            readings,
        ))
    }

    /// What the router's network reads of a text: its vector less the taught requests'
    /// mean, as the vote compares it (CLINC150 dev 92.3% → 92.6% in-scope against the
    /// vector as it is). `None` where the table knows none of its words.
    pub(crate) fn reading(&self, text: &str) -> Option<Vec<f32>> {
        let mut v = waypoint_wordvec::builtin().sentence(text)?;
        self.centre.apply(&mut v);
        Some(v)
    }

    /// `(entry, score)` for every entry with a score above zero: the mean cosine of its
    /// [`NEIGHBOURS`] requests closest to the text, on [`SCALE`].
    pub(crate) fn scores(&self, text: &str) -> Vec<(u32, f32)> {
        let Some(v) = self.reading(text) else {
            return Vec::new();
        };
        let cosines = self.rows.dots(&v);
        vote::<NEIGHBOURS>(&cosines, &self.spans, SCALE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(requests: &[(&str, &str)]) -> TrainingSet {
        let mut set = TrainingSet::default();
        for (text, label) in requests {
            set.add(text, &[label], 1.0, true);
        }
        set
    }

    #[test]
    fn a_clause_goes_to_the_entry_whose_requests_mean_the_same() {
        let set = set(&[
            ("what is my account balance", "balance"),
            ("how much money do i have in checking", "balance"),
            ("show the funds in my savings", "balance"),
            ("what will the weather be tomorrow", "weather"),
            ("is it going to rain today", "weather"),
            ("how hot is it outside", "weather"),
        ]);
        let near = WordNeighbours::with_readings(&set, &[10, 20])
            .expect("requests")
            .0;
        let scores = near.scores("how much cash is left in my bank account");
        let of = |doc| scores.iter().find(|s| s.0 == doc).map_or(0.0, |s| s.1);
        assert!(of(10) > of(20), "{scores:?}");
        let scores = near.scores("will it snow this weekend");
        let of = |doc| scores.iter().find(|s| s.0 == doc).map_or(0.0, |s| s.1);
        assert!(of(20) > of(10), "{scores:?}");
    }

    #[test]
    fn nothing_taught_or_nothing_read_gives_no_vote() {
        assert!(WordNeighbours::with_readings(&TrainingSet::default(), &[]).is_none());
        let own_words_only = {
            let mut set = TrainingSet::default();
            set.add("check balance", &["balance"], 0.5, false);
            set
        };
        assert!(WordNeighbours::with_readings(&own_words_only, &[0]).is_none());
        let set = set(&[("what is my balance", "balance"), ("rain today", "weather")]);
        let (near, _) = WordNeighbours::with_readings(&set, &[0, u32::MAX]).expect("requests");
        assert_eq!(near.spans.len(), 1, "an entry not in the index has no rows");
        assert!(near.scores("42 !!").is_empty(), "no word to read");
    }
}
