//! Catalog compaction: the catalog as the model sees it, cut to a token budget.
//!
//! Entries are rendered at five levels of detail. Cuts happen in a fixed order, so the
//! same request and budget always give the same prompt:
//!
//! 1. every entry loses its keywords and examples;
//! 2. every entry loses its argument descriptions;
//! 3. entries outside the protected set keep only their first sentence;
//! 4. entries outside the protected set are dropped, least relevant first;
//! 5. protected entries keep only their first sentence, then only name and args;
//! 6. protected entries are dropped, least relevant first.
//!
//! The protected set is the request's best-ranked entries (by the same router the
//! deterministic planner uses) plus every tool their pipelines run or supersede, so a
//! pipeline never survives without the tools it stands for.

use std::collections::{HashMap, HashSet};

use waypoint_catalog::{Catalog, Tool};
use waypoint_llm::TokenCounter;
use waypoint_protocol::Compaction;

/// Detail levels, most first.
const LEVELS: usize = 5;

/// How many best-ranked entries are protected from the early cuts.
pub const PROTECTED_TOP: usize = 12;

struct Card {
    id: String,
    /// Tools a pipeline runs or supersedes (empty for tools).
    covers: Vec<String>,
    lines: [String; LEVELS],
    tokens: [u32; LEVELS],
}

/// A catalog rendered once at every level, with token counts.
pub struct Compactor {
    cards: Vec<Card>,
    index: HashMap<String, usize>,
}

/// The catalog text a model is shown, and what it cost.
#[derive(Debug, Clone)]
pub struct Compacted {
    pub text: String,
    /// Ids shown to the model, in catalog order.
    pub kept: Vec<String>,
    pub report: Compaction,
}

impl Compactor {
    pub fn new(catalog: &Catalog) -> Self {
        let counter = TokenCounter;
        let mut cards = Vec::new();
        for t in catalog.tools() {
            let lines = tool_lines(t);
            cards.push(card(t.name.clone(), Vec::new(), lines, counter));
        }
        for p in catalog.pipelines() {
            let chain = p.steps.join(" → ");
            let first = first_sentence(&p.description);
            let full = format!("- {} (pipeline: {chain}): {}", p.id, p.description.trim());
            let keywords = if p.intent_keywords.is_empty() {
                String::new()
            } else {
                format!(" Keywords: {}.", p.intent_keywords.join(", "))
            };
            let lines = [
                format!("{full}{keywords}{}", examples(&p.examples)),
                full.clone(),
                full,
                format!("- {} (pipeline: {chain}): {first}", p.id),
                format!("- {} (pipeline: {chain})", p.id),
            ];
            let mut covers = p.steps.clone();
            covers.extend(p.supersedes.iter().cloned());
            cards.push(card(p.id.clone(), covers, lines, counter));
        }
        let index = cards
            .iter()
            .enumerate()
            .map(|(i, c)| (c.id.clone(), i))
            .collect();
        Self { cards, index }
    }

    /// Tokens of the whole catalog at full detail.
    pub fn full_tokens(&self) -> u32 {
        self.cards.iter().map(|c| c.tokens[0] + 1).sum()
    }

    /// Fits the catalog into `budget` tokens. `ranking` is the router's order for the
    /// request (best first); entries it does not name rank after it, in catalog order.
    pub fn compact(&self, ranking: &[(String, f64)], budget: u32) -> Compacted {
        let order = self.order(ranking);
        let protected = self.protected(ranking);
        let mut level = vec![0usize; self.cards.len()];
        let mut alive = vec![true; self.cards.len()];
        let total = |level: &[usize], alive: &[bool]| -> u32 {
            self.cards
                .iter()
                .enumerate()
                .filter(|(i, _)| alive[*i])
                .map(|(i, c)| c.tokens[level[i]] + 1)
                .sum()
        };
        let before = total(&level, &alive);
        let fits = |level: &[usize], alive: &[bool]| total(level, alive) <= budget;

        'cut: {
            for stage in [1, 2] {
                if fits(&level, &alive) {
                    break 'cut;
                }
                for l in &mut level {
                    *l = (*l).max(stage);
                }
            }
            if fits(&level, &alive) {
                break 'cut;
            }
            for &i in &order {
                if !protected.contains(&i) {
                    level[i] = level[i].max(3);
                }
            }
            for &i in order.iter().rev() {
                if fits(&level, &alive) {
                    break 'cut;
                }
                if !protected.contains(&i) {
                    alive[i] = false;
                }
            }
            for stage in [3, 4] {
                for &i in order.iter().rev() {
                    if fits(&level, &alive) {
                        break 'cut;
                    }
                    if protected.contains(&i) {
                        level[i] = level[i].max(stage);
                    }
                }
            }
            for &i in order.iter().rev() {
                if fits(&level, &alive) {
                    break 'cut;
                }
                alive[i] = false;
            }
        }

        // Shown in catalog order, not rank order: the prompt's catalog part is then the
        // same for every request that drops nothing, and servers that cache prompt
        // prefixes (llama.cpp, OpenAI) skip re-reading it.
        let kept_idx: Vec<usize> = (0..self.cards.len()).filter(|&i| alive[i]).collect();
        let text = kept_idx
            .iter()
            .map(|&i| self.cards[i].lines[level[i]].as_str())
            .collect::<Vec<_>>()
            .join("\n");
        let dropped = self
            .cards
            .iter()
            .enumerate()
            .filter(|(i, _)| !alive[*i])
            .map(|(_, c)| c.id.clone())
            .collect();
        Compacted {
            kept: kept_idx.iter().map(|&i| self.cards[i].id.clone()).collect(),
            report: Compaction {
                before_tokens: before,
                after_tokens: TokenCounter.count(&text),
                dropped,
            },
            text,
        }
    }

    /// Card indexes, best-ranked first, then the rest in catalog order.
    fn order(&self, ranking: &[(String, f64)]) -> Vec<usize> {
        let mut seen = HashSet::new();
        let mut order: Vec<usize> = ranking
            .iter()
            .filter_map(|(id, _)| self.index.get(id).copied())
            .filter(|i| seen.insert(*i))
            .collect();
        order.extend((0..self.cards.len()).filter(|i| seen.insert(*i)));
        order
    }

    fn protected(&self, ranking: &[(String, f64)]) -> HashSet<usize> {
        let mut out = HashSet::new();
        for (id, score) in ranking.iter().take(PROTECTED_TOP) {
            if *score <= 0.0 {
                continue;
            }
            let Some(&i) = self.index.get(id) else {
                continue;
            };
            out.insert(i);
            for covered in &self.cards[i].covers {
                if let Some(&j) = self.index.get(covered) {
                    out.insert(j);
                }
            }
        }
        out
    }
}

fn card(id: String, covers: Vec<String>, lines: [String; LEVELS], counter: TokenCounter) -> Card {
    let tokens = std::array::from_fn(|l| counter.count(&lines[l]));
    Card {
        id,
        covers,
        lines,
        tokens,
    }
}

fn tool_lines(t: &Tool) -> [String; LEVELS] {
    let required: HashSet<&str> = t.required().collect();
    let described: Vec<String> = t
        .properties()
        .map(|(name, schema)| {
            let ty = schema.get("type").and_then(|v| v.as_str()).unwrap_or("any");
            let star = if required.contains(name) { "*" } else { "" };
            match schema.get("description").and_then(|v| v.as_str()) {
                Some(d) => format!("{name}{star} ({ty}): {}", d.trim()),
                None => format!("{name}{star} ({ty})"),
            }
        })
        .collect();
    let bare: Vec<String> = t
        .properties()
        .map(|(name, schema)| {
            let ty = schema.get("type").and_then(|v| v.as_str()).unwrap_or("any");
            let star = if required.contains(name) { "*" } else { "" };
            format!("{name}{star} ({ty})")
        })
        .collect();
    let names: Vec<&str> = t.properties().map(|(n, _)| n).collect();
    let args = |list: &[String]| {
        if list.is_empty() {
            String::new()
        } else {
            format!(" Args: {}.", list.join("; "))
        }
    };
    let desc = t.description.trim();
    let first = first_sentence(desc);
    let keywords = if t.keywords.is_empty() {
        String::new()
    } else {
        format!(" Keywords: {}.", t.keywords.join(", "))
    };
    [
        format!(
            "- {}: {desc}{}{keywords}{}",
            t.name,
            args(&described),
            examples(&t.examples)
        ),
        format!("- {}: {desc}{}", t.name, args(&described)),
        format!("- {}: {desc}{}", t.name, args(&bare)),
        format!("- {}: {first}{}", t.name, args(&bare)),
        format!("- {}({})", t.name, names.join(", ")),
    ]
}

fn examples(list: &[String]) -> String {
    if list.is_empty() {
        return String::new();
    }
    let shown: Vec<String> = list.iter().take(3).map(|e| format!("“{e}”")).collect();
    format!(" E.g. {}.", shown.join(", "))
}

/// The first sentence, at most 120 characters.
fn first_sentence(text: &str) -> String {
    let text = text.trim();
    let end = text
        .char_indices()
        .find(|&(i, c)| c == '.' && text[i + 1..].chars().next().is_none_or(char::is_whitespace))
        .map_or(text.len(), |(i, _)| i + 1);
    let s = &text[..end];
    if s.chars().count() > 120 {
        let cut: String = s.chars().take(117).collect();
        format!("{}…", cut.trim_end())
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_sentence_stops_at_a_period_followed_by_space() {
        assert_eq!(first_sentence("Reads a file. Then more."), "Reads a file.");
        assert_eq!(
            first_sentence("Fetch v1.2 of a page"),
            "Fetch v1.2 of a page"
        );
        assert!(first_sentence(&"x".repeat(300)).ends_with('…'));
    }

    #[test]
    fn a_generous_budget_changes_nothing() {
        let catalog = waypoint_catalog::builtin().unwrap().catalog;
        let c = Compactor::new(&catalog);
        let out = c.compact(&[], u32::MAX);
        assert!(out.report.dropped.is_empty());
        assert_eq!(
            out.kept.len(),
            catalog.tools().len() + catalog.pipelines().len()
        );
        assert!(out.report.after_tokens <= out.report.before_tokens + 8);
    }

    #[test]
    fn cuts_keep_the_ranked_entries_and_what_their_pipelines_cover() {
        let catalog = waypoint_catalog::builtin().unwrap().catalog;
        let c = Compactor::new(&catalog);
        let pipeline = catalog.pipelines().first().unwrap();
        let ranking = vec![(pipeline.id.clone(), 0.9)];
        let out = c.compact(&ranking, c.full_tokens() / 10);
        assert!(out.report.after_tokens <= c.full_tokens() / 10 + 16);
        assert!(out.kept.contains(&pipeline.id));
        for tool in &pipeline.steps {
            assert!(out.kept.contains(tool), "{tool} was dropped");
        }
        assert!(!out.report.dropped.is_empty());
    }

    #[test]
    fn a_zero_budget_drops_everything_without_panicking() {
        let catalog = waypoint_catalog::builtin().unwrap().catalog;
        let out = Compactor::new(&catalog).compact(&[("nope".into(), 1.0)], 0);
        assert!(out.kept.is_empty());
        assert_eq!(out.report.after_tokens, 0);
    }
}
