//! Which steps taught plans run before which: learned from labelled requests whose tools
//! are a sequence (`expect.tools`), so a planner can add the step such plans almost
//! always take first ("check the balance of my card" is preceded by `account_login` in
//! the taught plans of a banking catalog) even when the request does not say it.
//!
//! Only sequences teach order; a label set (`expect.tool_set`) says nothing about it.

use std::collections::HashMap;

/// Counts over taught sequences: how many use each tool, and how many of those run
/// another tool before it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Precedence {
    /// Sequences that use the tool (once per sequence).
    uses: HashMap<String, u32>,
    /// By `later`, then `earlier`: sequences in which `earlier` runs before the first
    /// `later`. Keyed by the later tool so a plan step looks up its own row only.
    before: HashMap<String, HashMap<String, u32>>,
    sequences: u32,
    /// Sequences that use some tool twice or more.
    repeating: u32,
}

/// Taught sequences say a request uses each tool once when, with one repeating sequence
/// added as a prior, fewer than this share repeat a tool.
const FEW_REPEAT: f64 = 0.02;

/// A tool that taught plans run before another, with how often they do.
#[derive(Debug, Clone, PartialEq)]
pub struct Prerequisite<'a> {
    pub tool: &'a str,
    /// Sequences that run `tool` before the later one.
    pub before: u32,
    /// Sequences that use the later one.
    pub of: u32,
}

impl Prerequisite<'_> {
    pub fn share(&self) -> f64 {
        f64::from(self.before) / f64::from(self.of.max(1))
    }
}

impl Precedence {
    /// Counts one taught sequence of tool names.
    pub fn add(&mut self, tools: &[&str]) {
        self.sequences += 1;
        if (1..tools.len()).any(|i| tools[..i].contains(&tools[i])) {
            self.repeating += 1;
        }
        for (i, later) in tools.iter().enumerate() {
            if tools[..i].contains(later) {
                continue;
            }
            *self.uses.entry((*later).to_owned()).or_default() += 1;
            let mut earlier: Vec<&str> = tools[..i].to_vec();
            earlier.sort_unstable();
            earlier.dedup();
            let row = self.before.entry((*later).to_owned()).or_default();
            for e in earlier {
                *row.entry(e.to_owned()).or_default() += 1;
            }
        }
    }

    pub fn is_empty(&self) -> bool {
        self.uses.is_empty()
    }

    /// Whether the taught sequences say a request uses each tool once: two clauses that
    /// route to one tool then say one request twice ("change my booking …, and change the
    /// check-in date to …"). A few sequences say nothing either way.
    pub fn once_per_request(&self) -> bool {
        (f64::from(self.repeating) + 1.0) / (f64::from(self.sequences) + 1.0) < FEW_REPEAT
    }

    /// The tools that at least `share` of the (at least `support`) taught sequences using
    /// `later` run before it, in the order those sequences run them.
    pub fn prerequisites(&self, later: &str, share: f64, support: u32) -> Vec<Prerequisite<'_>> {
        let of = self.uses.get(later).copied().unwrap_or(0);
        if of < support.max(1) {
            return Vec::new();
        }
        let mut out: Vec<Prerequisite<'_>> = self
            .before
            .get(later)
            .into_iter()
            .flatten()
            .map(|(e, &n)| Prerequisite {
                tool: e.as_str(),
                before: n,
                of,
            })
            .filter(|p| p.share() >= share)
            .collect();
        // Name order first, so ties in the run order below come out the same every time.
        out.sort_by(|a, b| a.tool.cmp(b.tool));
        out.sort_by(|a, b| self.count(b.tool, a.tool).cmp(&self.count(a.tool, b.tool)));
        out
    }

    fn count(&self, earlier: &str, later: &str) -> u32 {
        self.before
            .get(later)
            .and_then(|row| row.get(earlier))
            .copied()
            .unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn taught(sequences: &[&[&str]]) -> Precedence {
        let mut p = Precedence::default();
        for s in sequences {
            p.add(s);
        }
        p
    }

    #[test]
    fn a_tool_most_sequences_run_first_is_a_prerequisite() {
        let p = taught(&[
            &["login", "balance"],
            &["login", "balance", "transfer"],
            &["balance"],
            &["login", "rates", "balance"],
        ]);
        let pre = p.prerequisites("balance", 0.55, 2);
        assert_eq!(pre.len(), 1);
        assert_eq!((pre[0].tool, pre[0].before, pre[0].of), ("login", 3, 4));
        // `rates` runs first in one of four: not enough.
        assert!(
            p.prerequisites("balance", 0.25, 2)
                .iter()
                .any(|x| x.tool == "rates")
        );
        assert!(
            p.prerequisites("balance", 0.55, 5).is_empty(),
            "too few sequences"
        );
        assert!(
            p.prerequisites("login", 0.1, 1).is_empty(),
            "nothing runs first"
        );
    }

    #[test]
    fn prerequisites_come_in_the_order_sequences_run_them() {
        let p = taught(&[
            &["login", "quote", "buy"],
            &["login", "quote", "buy"],
            &["quote", "login", "buy"],
        ]);
        let tools: Vec<&str> = p
            .prerequisites("buy", 0.5, 1)
            .iter()
            .map(|x| x.tool)
            .collect();
        assert_eq!(tools, ["login", "quote"]);
    }

    #[test]
    fn sequences_that_seldom_repeat_a_tool_say_each_is_used_once() {
        let mut p = Precedence::default();
        assert!(!p.once_per_request(), "nothing taught says nothing");
        for _ in 0..60 {
            p.add(&["search", "book"]);
        }
        assert!(p.once_per_request());
        p.add(&["book", "book"]);
        // 2 of 62 repeat (the prior counts one): 3.2%.
        assert!(!p.once_per_request());
    }

    #[test]
    fn a_tool_repeated_in_a_sequence_counts_once() {
        let p = taught(&[&["search", "book", "search", "book"]]);
        let pre = p.prerequisites("book", 0.5, 1);
        assert_eq!((pre[0].before, pre[0].of), (1, 1));
        assert!(p.prerequisites("search", 0.5, 1).is_empty());
    }
}
