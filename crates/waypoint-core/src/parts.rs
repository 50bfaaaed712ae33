//! A labelled request that asks for several entries ("list flights to Denver and what
//! does fare code f mean") cut into one part per entry, so the trained router also learns
//! from texts shaped like the clauses it will score.
//!
//! The planner routes a clause at a time, but such a request labels its whole text with
//! every entry: the words of one part teach the other part's entry too, and a calibration
//! fitted on whole requests rates an entry that is in most of them likely on any clause.
//! The segmenter proposes where a request can be cut (its clause boundaries and the
//! "and"/comma joints inside clauses); a first model, taught the whole requests, says
//! which cut and which order of the labels fit best. Nothing here reads an entry's name:
//! the cut is the one the taught model finds most likely. The cuts are cached beside the
//! trained router, keyed by what the first model learned from.

use std::path::Path;

use waypoint_classify::{Model, Settings, TrainingSet, cache};

use crate::hash::HashMap;
use crate::lexicon::Lexicon;
use crate::segment::segment;

/// Most labels a request may carry to be cut (k labels try k! orders).
const MOST_LABELS: usize = 4;
/// Most ways to cut one request that are weighed; a request with more is left whole.
const MOST_CUTS: usize = 64;
/// A part counts as much as a request.
const PART_WEIGHT: f32 = 1.0;
/// What cut the cached parts: bumped when how requests are cut changes, and the crate's
/// version (its segmenter) beside it, so cached cuts of another build are not reused.
const CUT_FORMAT: u32 = 1;
const CUT_BY: &str = env!("CARGO_PKG_VERSION");

/// One part: the example it is cut from, its class, and its byte range in that text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Part {
    whole: u32,
    class: u32,
    start: u32,
    end: u32,
}

/// Adds to `set` the parts of each request labelled with two to [`MOST_LABELS`] entries
/// (see the module docs), read from `cache_dir` when an earlier run cut the same set.
pub fn add_parts(set: &mut TrainingSet, lex: &Lexicon, cache_dir: Option<&Path>) {
    if !set.examples().iter().any(is_multi) {
        return;
    }
    let settings = Settings {
        folds: 0,
        ..Settings::default()
    };
    let key = set.key(&settings);
    let file = cache_dir.map(|dir| cache::file_for(dir, "cuts", &key));
    let cached = file
        .as_deref()
        .and_then(|f| std::fs::read(f).ok())
        .and_then(|bytes| decode(&bytes, &key, set));
    let parts = cached.unwrap_or_else(|| {
        let parts = cut(set, lex, &settings);
        if let (Some(dir), Some(f)) = (cache_dir, &file) {
            // An unwritable cache only means the next start cuts again.
            let _ = cache::write_atomically(dir, f, &encode(&parts, &key));
        }
        parts
    });
    for p in parts {
        let whole = p.whole as usize;
        let text = set.examples()[whole]
            .text
            .get(p.start as usize..p.end as usize);
        let label = set.classes().get(p.class as usize);
        if let (Some(text), Some(label)) = (text, label) {
            let (text, label) = (text.to_string(), label.clone());
            set.add_part(&text, &label, PART_WEIGHT, whole);
        }
    }
}

fn is_multi(e: &waypoint_classify::Example) -> bool {
    e.held_out && e.part_of.is_none() && (2..=MOST_LABELS).contains(&e.labels.len())
}

/// The file's header: the first model's key, [`CUT_FORMAT`] and [`CUT_BY`].
fn header(key: &[u8; 32]) -> Vec<u8> {
    let mut out = key.to_vec();
    out.extend_from_slice(&CUT_FORMAT.to_le_bytes());
    out.extend_from_slice(CUT_BY.as_bytes());
    out.push(0);
    out
}

fn encode(parts: &[Part], key: &[u8; 32]) -> Vec<u8> {
    let mut out = header(key);
    out.reserve(4 + parts.len() * 16);
    out.extend_from_slice(&u32::try_from(parts.len()).unwrap_or(0).to_le_bytes());
    for p in parts {
        for v in [p.whole, p.class, p.start, p.end] {
            out.extend_from_slice(&v.to_le_bytes());
        }
    }
    out
}

/// The parts a cache file holds, when it is whole, belongs to this key and fits the set.
fn decode(bytes: &[u8], key: &[u8; 32], set: &TrainingSet) -> Option<Vec<Part>> {
    let header = header(key);
    let rest = bytes.strip_prefix(header.as_slice())?;
    let (count, rest) = rest.split_at_checked(4)?;
    let count = u32::from_le_bytes(count.try_into().ok()?) as usize;
    if rest.len() != count.checked_mul(16)? {
        return None;
    }
    let word = |c: &[u8]| u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
    rest.chunks_exact(16)
        .map(|c| {
            let p = Part {
                whole: word(&c[0..4]),
                class: word(&c[4..8]),
                start: word(&c[8..12]),
                end: word(&c[12..16]),
            };
            let e = set.examples().get(p.whole as usize)?;
            e.text.get(p.start as usize..p.end as usize)?;
            ((p.class as usize) < set.classes().len() && p.start < p.end).then_some(p)
        })
        .collect()
}

/// Byte ranges of the smallest pieces a request may be cut into: the segmenter's clauses,
/// each split at its joints.
fn atoms(request: &str, lex: &Lexicon) -> Vec<(usize, usize)> {
    let tokens = lex.tokenize(request, &[]);
    let mut out = Vec::new();
    for seg in segment(request, &tokens, lex, false) {
        let toks = &seg.tokens;
        // Each joint ends the piece before it; the clause's last token ends the last one.
        let ends = seg
            .joints
            .iter()
            .map(|&(left_end, right_start)| (left_end.checked_sub(1), right_start))
            .chain(std::iter::once((toks.len().checked_sub(1), toks.len())));
        let mut first = 0;
        for (last, next) in ends {
            let (Some(a), Some(b)) = (toks.get(first), last.and_then(|i| toks.get(i))) else {
                first = next;
                continue;
            };
            if b.end > a.start {
                out.push((a.start, b.end));
            }
            first = next;
        }
    }
    out
}

/// Every way to choose `k` of `0..n` in ascending order, stopping past `most`.
fn choose(n: usize, k: usize, most: usize) -> Option<Vec<Vec<usize>>> {
    let mut out = Vec::new();
    let mut pick: Vec<usize> = (0..k).collect();
    if k > n {
        return Some(out);
    }
    loop {
        out.push(pick.clone());
        if out.len() > most {
            return None;
        }
        // Advance the rightmost index that can still move.
        let Some(i) = (0..k).rev().find(|&i| pick[i] < n - k + i) else {
            return Some(out);
        };
        pick[i] += 1;
        for j in i + 1..k {
            pick[j] = pick[j - 1] + 1;
        }
    }
}

/// Every order of `0..k`.
fn orders(k: usize) -> Vec<Vec<usize>> {
    if k == 0 {
        return vec![Vec::new()];
    }
    let mut out = Vec::new();
    for rest in orders(k - 1) {
        for at in 0..=rest.len() {
            let mut o = rest.clone();
            o.insert(at, k - 1);
            out.push(o);
        }
    }
    out
}

/// Cuts each request labelled with two to [`MOST_LABELS`] entries into one part per
/// label, as a model taught the whole requests reads them best. Requests the segmenter
/// finds too few pieces in, or too many ways to cut, are left whole.
fn cut(set: &TrainingSet, lex: &Lexicon, settings: &Settings) -> Vec<Part> {
    let whole = Model::train(set, settings);
    let mut out = Vec::new();
    for (i, e) in set.examples().iter().enumerate() {
        if !is_multi(e) {
            continue;
        }
        let Some(best) = best_cut(&e.text, &e.labels, lex, &whole) else {
            continue;
        };
        for (start, end, class) in best {
            if let (Ok(whole), Ok(start), Ok(end)) =
                (u32::try_from(i), u32::try_from(start), u32::try_from(end))
            {
                out.push(Part {
                    whole,
                    class,
                    start,
                    end,
                });
            }
        }
    }
    out
}

/// A cut's log-likelihood, its runs of pieces and the label order over them.
type Fit<'o> = (f32, Vec<(usize, usize)>, &'o [usize]);

/// The cut of `text` into one part per label, and the label of each part, that the model
/// finds likeliest: `(start, end, label)` per part.
fn best_cut(
    text: &str,
    labels: &[u32],
    lex: &Lexicon,
    model: &Model,
) -> Option<Vec<(usize, usize, u32)>> {
    let pieces = atoms(text, lex);
    let k = labels.len();
    if pieces.len() < k {
        return None;
    }
    let cuts = choose(pieces.len() - 1, k - 1, MOST_CUTS)?;
    let label_orders = orders(k);
    // Probabilities of each run of pieces, `(first, last)`, computed once.
    let mut scored: HashMap<(usize, usize), Vec<f32>> = HashMap::default();
    // The best fit so far: its log-likelihood, runs, and order of the labels.
    let mut best: Option<Fit<'_>> = None;
    for c in cuts {
        let mut runs = Vec::with_capacity(k);
        let mut from = 0;
        for &at in &c {
            runs.push((from, at));
            from = at + 1;
        }
        runs.push((from, pieces.len() - 1));
        for r in &runs {
            scored.entry(*r).or_insert_with(|| {
                model.probabilities(text.get(pieces[r.0].0..pieces[r.1].1).unwrap_or_default())
            });
        }
        for o in &label_orders {
            let fit: f32 = runs
                .iter()
                .zip(o)
                .map(|(r, &l)| {
                    let p = scored[r].get(labels[l] as usize).copied().unwrap_or(0.0);
                    p.max(1e-6).ln()
                })
                .sum();
            if best.as_ref().is_none_or(|(f, ..)| fit > *f) {
                best = Some((fit, runs.clone(), o));
            }
        }
    }
    let (_, runs, order) = best?;
    Some(
        runs.iter()
            .zip(order)
            .map(|(r, &l)| (pieces[r.0].0, pieces[r.1].1, labels[l]))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use waypoint_catalog::Catalog;

    fn lexicon() -> Lexicon {
        Lexicon::for_catalog(&Catalog::default()).unwrap()
    }

    /// Three classes taught by single requests, and requests asking for two of them.
    fn set() -> TrainingSet {
        let mut set = TrainingSet::default();
        let taught = [
            (
                "weather",
                [
                    "what is the weather in paris",
                    "will it rain tomorrow in oslo",
                    "weather forecast for rome",
                    "is it sunny in lima today",
                ],
            ),
            (
                "music",
                [
                    "play some jazz",
                    "put on the new album by adele",
                    "play my running playlist",
                    "i want to hear rock music",
                ],
            ),
            (
                "booking",
                [
                    "book a table for two tonight",
                    "reserve a restaurant in soho",
                    "get me a table at a pizza place",
                    "book dinner for four at eight",
                ],
            ),
        ];
        for (class, requests) in taught {
            for r in requests {
                set.add(r, &[class], 1.0, true);
            }
        }
        set.add(
            "will it rain in oslo and play some jazz",
            &["weather", "music"],
            1.0,
            true,
        );
        set.add(
            "book a table for two tonight, then play my running playlist",
            &["booking", "music"],
            1.0,
            true,
        );
        set
    }

    fn parts(set: &TrainingSet) -> Vec<(String, String)> {
        set.examples()
            .iter()
            .filter(|e| e.part_of.is_some())
            .map(|e| (e.text.clone(), set.classes()[e.labels[0] as usize].clone()))
            .collect()
    }

    #[test]
    fn a_request_asking_for_two_is_cut_into_one_part_each() {
        let mut set = set();
        add_parts(&mut set, &lexicon(), None);
        let p = |t: &str, c: &str| (t.to_string(), c.to_string());
        assert_eq!(
            parts(&set),
            vec![
                p("will it rain in oslo", "weather"),
                p("play some jazz", "music"),
                p("book a table for two tonight", "booking"),
                p("play my running playlist", "music"),
            ]
        );
        // Each part is held out with the request it was cut from.
        assert!(
            set.examples()
                .iter()
                .filter_map(|e| e.part_of)
                .all(|w| w >= 12)
        );
    }

    #[test]
    fn cuts_are_cached_and_a_damaged_cache_is_cut_again() {
        let dir = tempfile::tempdir().unwrap();
        let mut first = set();
        add_parts(&mut first, &lexicon(), Some(dir.path()));
        let files: Vec<_> = std::fs::read_dir(dir.path()).unwrap().flatten().collect();
        assert_eq!(files.len(), 1);
        let file = files[0].path();
        assert!(
            file.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("cuts-")
        );
        // A cached cut is read, not recomputed: what the file says is what is added.
        let mut bytes = std::fs::read(&file).unwrap();
        let at = bytes.len() - 8;
        bytes[at..at + 4].copy_from_slice(&0_u32.to_le_bytes());
        bytes[at + 4..].copy_from_slice(&4_u32.to_le_bytes());
        std::fs::write(&file, &bytes).unwrap();
        let mut again = set();
        add_parts(&mut again, &lexicon(), Some(dir.path()));
        let last = parts(&again).pop().unwrap();
        assert_eq!(last.0, "book");
        // A file that does not decode is cut again.
        std::fs::write(&file, b"garbage").unwrap();
        let mut fresh = set();
        add_parts(&mut fresh, &lexicon(), Some(dir.path()));
        assert_eq!(parts(&fresh), parts(&first));
    }

    #[test]
    fn a_request_with_fewer_pieces_than_labels_stays_whole() {
        let mut set = set();
        set.add("weather music", &["weather", "music", "booking"], 1.0, true);
        let before = set.examples().len();
        let lex = lexicon();
        let model = Model::train(
            &set,
            &Settings {
                folds: 0,
                ..Settings::default()
            },
        );
        assert!(best_cut("weather music", &[0, 1, 2], &lex, &model).is_none());
        add_parts(&mut set, &lex, None);
        assert!(
            set.examples()[before..]
                .iter()
                .all(|e| e.part_of != Some(before - 1))
        );
    }

    #[test]
    fn choose_lists_every_combination_in_order() {
        assert_eq!(
            choose(4, 2, 100),
            Some(vec![
                vec![0, 1],
                vec![0, 2],
                vec![0, 3],
                vec![1, 2],
                vec![1, 3],
                vec![2, 3]
            ])
        );
        assert_eq!(choose(2, 3, 100), Some(vec![]));
        assert_eq!(choose(10, 5, 20), None);
    }

    #[test]
    fn orders_are_every_permutation() {
        let mut o = orders(3);
        o.sort();
        assert_eq!(o.len(), 6);
        assert_eq!(o[0], vec![0, 1, 2]);
        assert_eq!(o[5], vec![2, 1, 0]);
    }
}
