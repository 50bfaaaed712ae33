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
//!
//! The vote compares the pieces as the model reads them alone
//! ([`waypoint_wordvec::builtin`]); the router's network reads the pieces as the model
//! reads them in requests ([`waypoint_wordvec::contexts`]). Each ranks better over its
//! own table, and the two together tell more than either table twice.

use waypoint_classify::TrainingSet;
use waypoint_embed::QuantRows;
use waypoint_wordvec::{Centre, WordVectors};

use crate::meaning::{NEIGHBOURS, Scale, entry_spans, vote, voting_requests};

/// The mean cosine of the closest requests below `low` means nothing, above `high` a
/// match, where the router's network reads the requests too. Chosen on CLINC150's dev
/// split and its train split's out-of-scope requests (docs/performance.md).
const SCALE: Scale = Scale {
    low: 0.34,
    high: 0.8,
};

/// The same where a catalog is taught by its entries' `examples:` alone and no network
/// learns from them: the vote is then the one second opinion on how sure the router is.
const EXAMPLES_SCALE: Scale = Scale {
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
    /// Where a network learns from the requests: the same requests' mean in the table it
    /// reads ([`waypoint_wordvec::contexts`]).
    network: Option<Centre>,
}

impl WordNeighbours {
    /// From the labelled requests of a training set that ask for one entry; `docs` maps
    /// a class to its route-index entry (`u32::MAX`: none). With `network`, also gives
    /// what the network reads of every example of the set ([`Self::reading`]; zeros
    /// where the table knows none of its words). `None` without such requests.
    pub(crate) fn with_readings(
        set: &TrainingSet,
        docs: &[u32],
        network: bool,
    ) -> Option<(Self, Option<Vec<Vec<f32>>>)> {
        let table = waypoint_wordvec::builtin();
        let vectors = sentences(table, set);
        // Per class, the examples whose vectors vote.
        let per_class = voting_requests(set, |i| vectors[i].is_some());
        if per_class.iter().all(Vec::is_empty) {
            return None;
        }
        let (centre, vectors) = centred(vectors, &per_class, table.dims());
        let (spans, voting) = entry_spans(&per_class, docs);
        let rows = QuantRows::new(
            voting.iter().filter_map(|&i| vectors[i].as_deref()),
            table.dims(),
        );
        let (network, readings) = if network {
            let table = waypoint_wordvec::contexts();
            let (centre, vectors) = centred(sentences(table, set), &per_class, table.dims());
            let readings = vectors
                .into_iter()
                .map(|v| v.unwrap_or_else(|| vec![0.0; table.dims()]))
                .collect();
            (Some(centre), Some(readings))
        } else {
            (None, None)
        };
        Some((
            Self {
                centre,
                rows,
                spans,
                network,
            },
            readings,
        ))
    }

    /// What the router's network reads of a text: its vector in the table of pieces in
    /// context, less the taught requests' mean (CLINC150 dev 92.3% → 92.6% in-scope
    /// against the vector as it is). `None` where no network learned from the requests
    /// or the table knows none of the text's words.
    pub(crate) fn reading(&self, text: &str) -> Option<Vec<f32>> {
        let centre = self.network.as_ref()?;
        let mut v = waypoint_wordvec::contexts().sentence(text)?;
        centre.apply(&mut v);
        Some(v)
    }

    /// `(entry, score)` for every entry with a score above zero: the mean cosine of its
    /// [`NEIGHBOURS`] requests closest to the text, on [`Self::scale`].
    pub(crate) fn scores(&self, text: &str) -> Vec<(u32, f32)> {
        let Some(mut v) = waypoint_wordvec::builtin().sentence(text) else {
            return Vec::new();
        };
        self.centre.apply(&mut v);
        let cosines = self.rows.dots(&v);
        vote::<NEIGHBOURS>(&cosines, &self.spans, self.scale())
    }

    /// The vote's cosine scale: [`SCALE`] beside a network, else [`EXAMPLES_SCALE`].
    fn scale(&self) -> Scale {
        if self.network.is_some() {
            SCALE
        } else {
            EXAMPLES_SCALE
        }
    }
}

/// Every example's vector in `table` (`None` where it knows none of the words).
fn sentences(table: &WordVectors, set: &TrainingSet) -> Vec<Option<Vec<f32>>> {
    set.examples()
        .iter()
        .map(|e| table.sentence(&e.text))
        .collect()
}

/// The voting requests' mean, and every vector less it.
fn centred(
    mut vectors: Vec<Option<Vec<f32>>>,
    per_class: &[Vec<usize>],
    dims: usize,
) -> (Centre, Vec<Option<Vec<f32>>>) {
    let centre = Centre::of(
        per_class
            .iter()
            .flatten()
            .filter_map(|&i| vectors[i].as_deref()),
        dims,
    );
    for v in vectors.iter_mut().flatten() {
        centre.apply(v);
    }
    (centre, vectors)
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
        let near = WordNeighbours::with_readings(&set, &[10, 20], false)
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
        assert!(WordNeighbours::with_readings(&TrainingSet::default(), &[], true).is_none());
        let own_words_only = {
            let mut set = TrainingSet::default();
            set.add("check balance", &["balance"], 0.5, false);
            set
        };
        assert!(WordNeighbours::with_readings(&own_words_only, &[0], true).is_none());
        let set = set(&[("what is my balance", "balance"), ("rain today", "weather")]);
        let (near, _) =
            WordNeighbours::with_readings(&set, &[0, u32::MAX], false).expect("requests");
        assert_eq!(near.spans.len(), 1, "an entry not in the index has no rows");
        assert!(near.scores("42 !!").is_empty(), "no word to read");
    }

    #[test]
    fn the_network_reads_the_pieces_in_context_and_only_where_it_learns() {
        let set = set(&[
            ("what is my account balance", "balance"),
            ("will it rain today", "weather"),
        ]);
        let (near, readings) = WordNeighbours::with_readings(&set, &[0, 1], false).unwrap();
        assert!(readings.is_none());
        assert!(near.reading("what is my balance").is_none());
        assert_eq!(near.scale(), EXAMPLES_SCALE);

        let (near, readings) = WordNeighbours::with_readings(&set, &[0, 1], true).unwrap();
        let readings = readings.expect("one reading per example");
        assert_eq!(readings.len(), 2);
        assert_eq!(near.scale(), SCALE);
        let read = near
            .reading("what is my account balance")
            .expect("known words");
        assert_eq!(read.len(), waypoint_wordvec::contexts().dims());
        // The same text reads as it was read in training: the network sees what it learned.
        assert_eq!(read, readings[0]);
        // The vote still compares the pieces read alone.
        let mut alone = waypoint_wordvec::builtin()
            .sentence("what is my account balance")
            .unwrap();
        near.centre.apply(&mut alone);
        assert_ne!(read, alone);
    }
}
