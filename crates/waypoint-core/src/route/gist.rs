//! Meaning without a model, for catalogs known by names and descriptions alone: the
//! built-in static word vectors fitted to sentences (`waypoint_wordvec::sentences`, which
//! come nearer the model's meaning of a description than pieces read alone) give each
//! entry a vector, and a clause is compared with them all. The vectors are too coarse to
//! say how sure a match is, so they only reorder: an entry whose cosine stands far above
//! the catalog's usual cosine for the clause moves up ([`Relative`], as meaning's
//! standing is read), and the best score stays the words' best, so the abstain threshold
//! means what it meant (docs/routing.md, "Static word vectors").

use waypoint_catalog::Catalog;
use waypoint_embed::dot;
use waypoint_wordvec::{Centre, WordVectors};

use crate::learned::entries;
use crate::meaning::{Relative, own_texts};

/// How standing is read: the band meaning reads it on. The standing is the whole of the
/// opinion, the cosine itself none of it.
const STANDING: Relative = Relative::DEFAULT;

/// The table entries and clauses are both read with: the one fitted to sentences, as a
/// description shares few words with the requests it answers.
fn table() -> &'static WordVectors {
    waypoint_wordvec::sentences()
}

/// Every entry's own-words vectors.
#[derive(Debug, Clone)]
pub(super) struct Gist {
    /// Per entry: its route-index id and its rows (name with description, and the name
    /// with the description's first sentence where that is read alone too).
    entries: Vec<(u32, std::ops::Range<usize>)>,
    rows: Vec<Vec<f32>>,
    /// The rows' mean, taken out of the rows; a clause loses its part along it.
    centre: Centre,
}

impl Gist {
    /// `None` where some entry has keywords or requests (its words were chosen for
    /// routing, and the words' own score is the better judge), where there are too few
    /// entries, or where the table knows none of their words.
    pub(super) fn build(catalog: &Catalog, doc_of: impl Fn(&str) -> Option<u32>) -> Option<Self> {
        let table = table();
        let mut compared = Vec::new();
        let mut rows = Vec::new();
        for e in entries(catalog) {
            if !e.examples.is_empty() || !e.keywords.is_empty() {
                return None;
            }
            let Some(doc) = doc_of(e.id) else { continue };
            let first = rows.len();
            rows.extend(
                own_texts(&e.name, e.about)
                    .iter()
                    .filter_map(|t| table.sentence(t)),
            );
            if rows.len() > first {
                compared.push((doc, first..rows.len()));
            }
        }
        // What every entry shares says nothing of which one a clause means.
        let centre = Centre::of(rows.iter().map(Vec::as_slice), table.dims());
        for r in &mut rows {
            centre.apply(r);
        }
        (compared.len() >= STANDING.min_entries).then_some(Self {
            centre,
            entries: compared,
            rows,
        })
    }

    /// Each entry's standing for the clause in [0, 1], for entries that stand out at all;
    /// empty where the table knows none of the clause's words.
    pub(super) fn standing(&self, text: &str) -> Vec<(u32, f32)> {
        let Some(mut q) = table().sentence(text) else {
            return Vec::new();
        };
        // A request is no description: it shares their common part only as far as it
        // points that way, and taking the whole mean out would push it away from it.
        self.centre.project_out(&mut q);
        let cosines: Vec<f32> = self
            .entries
            .iter()
            .map(|(_, rows)| {
                self.rows[rows.clone()]
                    .iter()
                    .map(|r| dot(&q, r))
                    .fold(f32::NEG_INFINITY, f32::max)
            })
            .collect();
        let Some(standing) = STANDING.standing(&cosines) else {
            return Vec::new();
        };
        let mut out: Vec<(u32, f32)> = self
            .entries
            .iter()
            .zip(standing)
            .map(|((doc, _), s)| (*doc, s))
            .filter(|(_, s)| *s > 0.0)
            .collect();
        out.sort_by_key(|(d, _)| *d);
        out
    }
}

#[cfg(test)]
mod tests {
    use waypoint_catalog::{Catalog, Source, load};

    use super::*;

    fn catalog(extra: &str) -> Catalog {
        let mut text = String::from("tools:\n");
        for (name, about) in [
            (
                "skyways",
                "Search airline fares and book the seat that fits your dates.",
            ),
            (
                "potluck",
                "Recipes for every taste, from weeknight dinners to feasts.",
            ),
            (
                "greenthumb",
                "Care guides for houseplants and vegetable gardens.",
            ),
            ("ledger", "Track your spending and set a monthly budget."),
            ("tunes", "Stream songs and discover artists you will love."),
            (
                "pawsome",
                "Training tips and health advice for dogs and cats.",
            ),
            (
                "headlines",
                "The day's top news stories from trusted outlets.",
            ),
            ("lingo", "Learn a new language with short daily lessons."),
        ] {
            text.push_str(&format!("  - name: {name}\n    description: {about}\n"));
        }
        text.push_str(extra);
        load(&[Source {
            name: "t.yaml".into(),
            text,
        }])
        .unwrap()
        .catalog
    }

    fn docs(c: &Catalog) -> impl Fn(&str) -> Option<u32> + '_ {
        |id| {
            c.tools()
                .iter()
                .position(|t| t.name == id)
                .and_then(|i| u32::try_from(i).ok())
        }
    }

    #[test]
    fn the_entry_a_clause_means_stands_out_of_the_catalog() {
        let c = catalog("");
        let gist = Gist::build(&c, docs(&c)).unwrap();
        let standing = gist.standing("my puppy keeps chewing the furniture");
        let best = standing.iter().max_by(|a, b| a.1.total_cmp(&b.1)).unwrap();
        assert_eq!(best.0, 5, "{standing:?}");
        assert!(standing.iter().all(|(_, s)| (0.0..=1.0).contains(s)));
        // A clause of numbers and marks alone has no vector to compare.
        assert!(gist.standing("12 + 30 = ?").is_empty());
    }

    #[test]
    fn a_catalog_with_words_chosen_for_routing_or_too_few_entries_has_none() {
        let taught = catalog("  - name: extra\n    description: x\n    keywords: [x]\n");
        assert!(Gist::build(&taught, docs(&taught)).is_none());
        let c = catalog("");
        let few = |id: &str| docs(&c)(id).filter(|&d| d < 3);
        assert!(Gist::build(&c, few).is_none());
    }
}
