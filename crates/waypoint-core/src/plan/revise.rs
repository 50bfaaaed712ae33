//! Edits to the list of drafts once every clause has one: a need said twice, steps the
//! taught plans take first, lookups by a finder, restated requests, and the phases a
//! request orders.

use waypoint_catalog::Catalog;
use waypoint_protocol::{ExtractedKind, StepKind};

use crate::args;
use crate::understand::Analysis;

use super::{Draft, Planner};

/// A tool that at least this share of the taught plans using a step run before it is
/// added before the step when the request does not ask for it: just over half, so the
/// added step is more often right than not.
const PREREQUISITE_SHARE: f64 = 0.55;
/// Taught plans using a step needed before its prerequisites are trusted: fewer say more
/// about who wrote them than about the tools.
const PREREQUISITE_SUPPORT: u32 = 10;

/// A tool the taught plans run before another, as planning uses it: `first` is added
/// before `step` when a request asks for `step` and not `first`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TakenFirst {
    pub step: String,
    pub first: String,
    /// Taught plans that use `step` and run `first` before it.
    pub before: u32,
    /// Taught plans that use `step`.
    pub of: u32,
}

/// Every prerequisite the catalog's taught sequences give, by tool in catalog order
/// (docs/routing.md, "Prerequisites"): what `waypoint train` reports.
pub fn taken_first(catalog: &Catalog) -> Vec<TakenFirst> {
    let taught = catalog.precedence();
    catalog
        .tools()
        .iter()
        .flat_map(|t| {
            taught
                .prerequisites(&t.name, PREREQUISITE_SHARE, PREREQUISITE_SUPPORT)
                .into_iter()
                .map(|p| TakenFirst {
                    step: t.name.clone(),
                    first: p.tool.to_string(),
                    before: p.before,
                    of: p.of,
                })
        })
        .collect()
}

impl Planner<'_> {
    /// A later step for a tool an earlier step already uses is the same request said
    /// again, dropped, with what followed it following the first (docs/routing.md,
    /// "Prerequisites"): anywhere in the request where the catalog's taught plans use each
    /// tool once per request (fewer than 2% repeat one: "change my hotel booking …, and
    /// change the check-in date to …"), and right after it where the tool declares no
    /// arguments and the two clauses say the need in other words ("what concerts are on
    /// next month? I'd like two tickets to something good", to a ticket tool described
    /// in prose). The same verb twice ("look up the rates of the euro, then look up the
    /// rates of the yen") asks for two calls, as do values a schema tells apart.
    pub(super) fn merge_repeats(&self, analysis: &Analysis, drafts: &mut Vec<Draft>) {
        let once = self.catalog.precedence().once_per_request();
        let takes_nothing = |tool: &str| {
            self.catalog
                .tool(tool)
                .is_some_and(|t| t.properties().next().is_none())
        };
        let verb = |clause: usize| {
            let c = analysis.clause(clause)?;
            Some(c.tokens().get(c.head_verb?)?.stem.as_str())
        };
        let mut j = 1;
        while j < drafts.len() {
            let this = &drafts[j];
            let first = if this.kind != StepKind::Tool {
                None
            } else if once {
                (0..j).find(|&i| drafts[i].tool == this.tool)
            } else {
                let before = &drafts[j - 1];
                (before.tool == this.tool
                    && before.inputs == this.inputs
                    && before.clause != this.clause
                    && (verb(before.clause)).is_none_or(|v| verb(this.clause) != Some(v))
                    && takes_nothing(&this.tool))
                .then_some(j - 1)
            };
            match first {
                Some(i) => {
                    let said = drafts[j].clause;
                    remove_draft(drafts, j, i);
                    let kept = &mut drafts[i];
                    let why = if once {
                        "taught plans use each tool once per request"
                    } else {
                        "the tool declares no arguments to tell the calls apart"
                    };
                    kept.rationale = format!(
                        "{}; asked again in clause {}: {why}",
                        kept.rationale,
                        said + 1
                    );
                }
                None => j += 1,
            }
        }
    }

    /// Adds before each step the tools that taught plans almost always run before it
    /// (`account_login` before a balance query, a search before a booking) when the
    /// request asks for none of them: labelled requests know steps a request takes for
    /// granted (docs/routing.md, "Prerequisites"). The added step belongs to the same
    /// clause, so its arguments come from it, and the step follows it.
    pub(super) fn add_prerequisites(&self, drafts: &mut Vec<Draft>) {
        let taught = self.catalog.precedence();
        if taught.is_empty() {
            return;
        }
        let mut j = 0;
        while j < drafts.len() {
            if drafts[j].kind != StepKind::Tool {
                j += 1;
                continue;
            }
            let missing = taught
                .prerequisites(&drafts[j].tool, PREREQUISITE_SHARE, PREREQUISITE_SUPPORT)
                .into_iter()
                .find(|p| !drafts.iter().any(|d| d.tool == p.tool));
            let Some(first) = missing else {
                j += 1;
                continue;
            };
            // One at a time: the added step is looked at next, for its own prerequisites.
            let why = format!(
                "taught plans take it first: {} of {} that use {} run {} before it",
                first.before, first.of, drafts[j].tool, first.tool
            );
            let mut added = self.new_draft(first.tool, drafts[j].clause, drafts[j].score, why);
            make_room(drafts, j, 1);
            added.after = std::mem::replace(&mut drafts[j].after, vec![j]);
            drafts.insert(j, added);
        }
    }

    /// "show me the logo of Walt Disney": a tool that takes a thing by its id
    /// (`get_company_logo`, "… based on its ID"), asked where the request names the thing
    /// instead, runs after the catalog's finder for that kind of thing (`search_company`),
    /// and takes its id from it — unless an earlier step already gives one of the kind
    /// ("the top-rated movie") or taught plans say what runs first (docs/routing.md,
    /// "Prerequisites").
    pub(super) fn add_lookups(&self, analysis: &Analysis, drafts: &mut Vec<Draft>) {
        if !self.catalog.precedence().is_empty() {
            return;
        }
        let mut j = 0;
        while j < drafts.len() {
            let Some((finder, kind)) = self.finder_for(analysis, drafts, j) else {
                j += 1;
                continue;
            };
            let why = format!(
                "{} takes the {kind} by its id and the request names it: {finder} finds it",
                drafts[j].tool
            );
            let added = self.new_draft(&finder, drafts[j].clause, drafts[j].score, why);
            make_room(drafts, j, 1);
            let step = &mut drafts[j];
            let after = std::mem::replace(&mut step.after, vec![j]);
            step.inputs.push(j);
            drafts.insert(j, Draft { after, ..added });
            j += 2;
        }
    }

    /// The finder [`Self::add_lookups`] adds before draft `j`, with the word for the kind.
    fn finder_for(
        &self,
        analysis: &Analysis,
        drafts: &[Draft],
        j: usize,
    ) -> Option<(String, String)> {
        let d = &drafts[j];
        // The index knows this of the catalog's tools alone.
        if d.kind != StepKind::Tool || !self.index.takes_by_id(&d.tool) {
            return None;
        }
        // An id the clause gives, or speaks of ("transaction ID T12345"), is the one to use.
        let clause = analysis.clause(d.clause)?;
        if clause.values.iter().any(|v| v.kind == ExtractedKind::Ids)
            || clause
                .tokens()
                .iter()
                .any(|t| t.form.eq_ignore_ascii_case("id"))
        {
            return None;
        }
        let name_keys = |name: &str| args::name_keys(name, self.lex);
        let earlier: Vec<Vec<String>> = drafts[..j].iter().map(|e| name_keys(&e.tool)).collect();
        for kind in name_keys(&d.tool) {
            if self.lex.lookup_verbs.contains(&kind) || self.lex.stopwords.contains(&kind) {
                continue;
            }
            if earlier.iter().any(|keys| keys.contains(&kind)) {
                return None;
            }
            if let Some(f) = self.index.finder(&kind).filter(|f| f.tool != d.tool) {
                return Some((f.tool.clone(), f.word.clone()));
            }
        }
        None
    }

    /// "I need to make a voice call to my friend. Please call this number 555-0100 for
    /// me": a clause that names no value, followed (not ordered after with "then") by
    /// the next action clause, which gives exactly the typed values the first one's tool
    /// needs and routes to that tool too, is one request said twice. The first
    /// clause chose the tool; the second gives what it lacked. One step remains: the
    /// first clause's tool, filled from the second clause.
    pub(super) fn complete_restated(&self, analysis: &Analysis, drafts: &mut Vec<Draft>) {
        let mut j = 1;
        while j < drafts.len() {
            if self.restated_with_values(analysis, &drafts[j - 1], &drafts[j], j - 1) {
                let e = drafts[j - 1].clone();
                let d = &mut drafts[j];
                d.rationale = format!(
                    "{} (the request before, “{}”, given the value it lacked)",
                    e.rationale,
                    analysis
                        .clause(e.clause)
                        .map_or("", |c| c.segment.clause.text.as_str())
                );
                d.tool = e.tool;
                d.kind = e.kind;
                d.score = e.score;
                d.inputs.retain(|&i| i != j - 1);
                d.after.retain(|&i| i != j - 1);
                d.inputs.extend(e.inputs);
                d.after.extend(e.after);
                remove_draft(drafts, j - 1, j - 1);
            } else {
                j += 1;
            }
        }
    }

    /// Whether draft `d` restates draft `e` (at index `at`) and gives the typed values
    /// it lacks (see [`Planner::complete_restated`]).
    fn restated_with_values(&self, analysis: &Analysis, e: &Draft, d: &Draft, at: usize) -> bool {
        let (Some(first), Some(second)) = (analysis.clause(e.clause), analysis.clause(d.clause))
        else {
            return false;
        };
        let next_action = analysis
            .clauses
            .iter()
            .find(|c| c.is_action() && c.segment.clause.index > e.clause)
            .map(|c| c.segment.clause.index);
        if e.kind != StepKind::Tool
            || e.clause == d.clause
            || next_action != Some(d.clause)
            || second.segment.follows
            // Taking the first one's output by type is a step of its own; a link by the
            // words alone ("call *this* number") may be a restatement.
            || d.inputs.contains(&at) && self.feeds(&e.tool, &d.tool)
            || !first.values.is_empty()
            || second.values.is_empty()
        {
            return false;
        }
        let Some(specs) = self.index.arg_specs(&e.tool) else {
            return false;
        };
        // Every value the second clause gives is one the tool takes, and one of them
        // fills an argument the tool cannot run without.
        let all_taken = second
            .values
            .iter()
            .all(|v| specs.iter().any(|s| s.takes_value(v.kind)));
        let needed = second
            .values
            .iter()
            .any(|v| specs.iter().any(|s| s.required() && s.takes_value(v.kind)));
        if !all_taken || !needed {
            return false;
        }
        // And the second clause's words fit the tool on their own.
        let hints = self.hints(second, None);
        self.index
            .rank(second.tokens(), &hints, self.lex)
            .iter()
            .any(|c| c.id == e.tool && c.score >= self.threshold)
    }
}

/// Drops a step that asks again for the step before it: "estimate the depth of objects
/// in my image. Please help me analyze this image to understand the depth" routes both
/// sentences to one tool, and the second, pointing back at "this image", would take the
/// first one's output. A clause that names no value of its own, is not ordered after the
/// one before ("then"), and whose only input is the same tool's step for the action
/// clause just before it restates that request; its step would run the tool on its own
/// result. So does one whose only input is that of the same tool's step for that clause
/// ("find `CommandRouter` and read it": the symbol's file is read already). Later steps
/// that took from it take from the step it restated.
pub(super) fn drop_restatements(analysis: &Analysis, drafts: &mut Vec<Draft>) {
    let mut j = 1;
    while j < drafts.len() {
        let d = &drafts[j];
        let previous_action = analysis
            .clauses
            .iter()
            .filter(|c| c.is_action() && c.segment.clause.index < d.clause)
            .map(|c| c.segment.clause.index)
            .next_back();
        let restating = |e: &Draft| {
            e.tool == d.tool
                && e.kind == d.kind
                && previous_action == Some(e.clause)
                && analysis
                    .clause(d.clause)
                    .is_some_and(|c| !c.segment.follows && c.values.is_empty())
        };
        let restates = match d.inputs.as_slice() {
            [i] if restating(&drafts[*i]) => Some(*i),
            // "find CommandRouter and read it": the clause before already reads what
            // this step would read, with the same tool.
            [_] => (0..j).find(|&k| drafts[k].inputs == d.inputs && restating(&drafts[k])),
            _ => None,
        };
        let Some(i) = restates else {
            j += 1;
            continue;
        };
        remove_draft(drafts, j, i);
    }
}

/// Removes draft `at`; the drafts after it that took from or followed it take from or
/// follow draft `to` (an index after the removal) instead.
fn remove_draft(drafts: &mut Vec<Draft>, at: usize, to: usize) {
    drafts.remove(at);
    for later in drafts.iter_mut().skip(at) {
        for list in [&mut later.inputs, &mut later.after] {
            for r in list.iter_mut() {
                if *r == at {
                    *r = to;
                } else if *r > at {
                    *r -= 1;
                }
            }
            list.sort_unstable();
            list.dedup();
        }
    }
}

/// Points the `inputs` and `after` of `drafts` that name a draft at `from` or later `n`
/// further on, for `n` drafts about to be inserted at `from`.
pub(super) fn make_room(drafts: &mut [Draft], from: usize, n: usize) {
    for d in drafts {
        for list in [&mut d.inputs, &mut d.after] {
            list.iter_mut()
                .filter(|r| **r >= from)
                .for_each(|r| *r += n);
        }
    }
}

/// Orders the steps the request orders: a clause a sequencer opened ("then build")
/// starts a phase, and each step of a phase follows the steps of the phase before it
/// that it does not already consume. Steps within a phase ("… and …") stay unordered.
pub(super) fn order_phases(analysis: &Analysis, drafts: &mut [Draft]) {
    let mut phase_of_clause = std::collections::HashMap::new();
    let mut phase = 0usize;
    for c in &analysis.clauses {
        if c.segment.follows {
            phase += 1;
        }
        phase_of_clause.insert(c.segment.clause.index, phase);
    }
    let phase = |d: &Draft| phase_of_clause.get(&d.clause).copied().unwrap_or(0);
    // The steps that run, by phase, among the drafts before this one.
    let mut running: std::collections::BTreeMap<usize, Vec<usize>> =
        std::collections::BTreeMap::new();
    for (j, draft) in drafts.iter_mut().enumerate() {
        let mine = phase(draft);
        // The latest earlier phase that has a step that runs.
        if let Some((_, steps)) = running.range(..mine).next_back() {
            draft.after = steps
                .iter()
                .copied()
                .filter(|i| !draft.inputs.contains(i))
                .collect();
        }
        if draft.kind != StepKind::Unknown {
            running.entry(mine).or_default().push(j);
        }
    }
}
