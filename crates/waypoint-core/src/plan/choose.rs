//! Which entry each clause asks for: routing with the clause's hints, the evidence a
//! goal needs, stored plans and pipelines that fit, margins for harmful tools, and the
//! several entries one clause may ask for.

use waypoint_catalog::{Entry, Pipeline};
use waypoint_protocol::{Candidate, ExtractedKind};

use crate::hash::HashMap;
use crate::lexicon::Lexicon;
use crate::route::Hints;
use crate::text::Token;
use crate::understand::{Analysis, ClauseAnalysis};

use super::{Draft, Harm, Planner, Routed, deterministic, supplied_kinds};

/// How far below the best candidate one that takes an earlier step's output may score
/// and still be chosen for a clause that points back ("fix it").
const LINK_MARGIN: f64 = 0.1;

/// An entry with its probability from the trained router.
type Choice<'a> = (&'a str, f64);

/// Joints past which a clause is not read as several requests: each way of splitting is
/// a model call, and a clause with this many "and"s and commas is a list, not requests.
const MAX_JOINTS: usize = 6;

impl Planner<'_> {
    /// Each action clause with its goal and ranking, in order.
    pub(super) fn route_actions<'g>(&self, analysis: &'g Analysis) -> Vec<Routed<'g>> {
        let mut goal_iter = analysis.understanding.goals.iter();
        // What the clauses routed so far make, by the key of each product's last word.
        let mut products: Vec<String> = Vec::new();
        analysis
            .clauses
            .iter()
            .filter(|c| c.is_action())
            .take(self.max_clauses)
            .map(|clause| {
                let goal = goal_iter.next();
                let mut hints = self.hints_in(analysis, clause, goal);
                hints.earlier_products.clone_from(&products);
                let ranking = self.index.rank(clause.tokens(), &hints, self.lex);
                if let Some(top) = ranking.first() {
                    for key in self.index.product_keys(&top.id) {
                        if !products.contains(key) {
                            products.push(key.clone());
                        }
                    }
                }
                Routed {
                    clause,
                    goal,
                    ranking,
                }
            })
            .collect()
    }

    /// What routing should know about a clause of `analysis`: its own hints, what the
    /// clauses before it talk about and what the request sets out before it.
    pub(crate) fn hints_in<'g>(
        &'g self,
        analysis: &'g Analysis,
        clause: &'g ClauseAnalysis,
        goal: Option<&'g waypoint_protocol::Goal>,
    ) -> Hints<'g> {
        let mut hints = self.hints(clause, goal);
        hints.context = self.context_of(analysis, clause);
        self.file_it_names(analysis, clause, &mut hints);
        if self.index.reads_meaning() {
            hints.setting = analysis.setting_of(clause);
        }
        hints
    }

    /// "check how large data.csv is and then *read it*": a clause whose object is only a
    /// pronoun, after an action clause that names files, and that names none, acts
    /// on those files as routing sees it (an entry that takes a path, one for the file's
    /// family).
    fn file_it_names<'g>(
        &'g self,
        analysis: &'g Analysis,
        clause: &ClauseAnalysis,
        hints: &mut Hints<'g>,
    ) {
        let toks = clause.tokens();
        let after_verb = clause.head_verb.map_or(0, |h| h + 1);
        let mut rest =
            (toks.iter().skip(after_verb)).filter(|t| !self.lex.words.articles.contains(&t.form));
        let pronoun = rest
            .next()
            .is_some_and(|t| self.lex.anaphora.contains(&t.form))
            && rest.next().is_none_or(|t| !self.lex.is_content(t));
        if !pronoun || !hints.supplied.is_empty() {
            return;
        }
        let own = clause.segment.clause.index;
        let Some(before) =
            (analysis.clauses.iter()).rfind(|c| c.segment.clause.index < own && c.is_action())
        else {
            return;
        };
        let mut files = (before.values.iter())
            .filter(|v| v.kind == ExtractedKind::Paths)
            .peekable();
        if files.peek().is_some() {
            hints.supplied.push(ExtractedKind::Paths);
        }
        hints
            .file_types
            .extend(files.flat_map(|f| self.lex.file_families(&f.value)));
    }

    /// What the clauses before `clause` talk about: their content words but their head
    /// verbs, each once. A later clause's words are not yet said, and a verb says what
    /// another step does, not what this one acts on ("find a house …, reserve the house"
    /// books it).
    fn context_of<'g>(&self, analysis: &'g Analysis, clause: &ClauseAnalysis) -> Vec<&'g Token> {
        let own = clause.segment.clause.index;
        let mut words: Vec<&Token> = Vec::new();
        for other in analysis
            .clauses
            .iter()
            .filter(|c| c.segment.clause.index < own)
        {
            for (i, tok) in other.tokens().iter().enumerate() {
                let said = |w: &&Token| w.key == tok.key;
                if Some(i) != other.head_verb && self.lex.is_content(tok) && !words.iter().any(said)
                {
                    words.push(tok);
                }
            }
        }
        words
    }

    /// Why `pick` may not be chosen: it writes or destroys, and a less harmful candidate
    /// fits almost as well, so the words do not say clearly enough that the harm is
    /// wanted.
    pub(super) fn too_close_to_harm(
        &self,
        pick: &Candidate,
        ranking: &[Candidate],
        clause: &ClauseAnalysis,
    ) -> Option<String> {
        let harm = |id: &str| self.catalog.tool(id).map(|t| Harm::of(t.effects));
        let mine = harm(&pick.id)?;
        let margin = match mine {
            Harm::None => return None,
            Harm::Changes => self.write_margin,
            Harm::Destroys => self.destructive_margin,
        };
        // A rival just under the threshold counts too: a pick that barely clears it, with
        // a less harmful reading close behind, is no clear ask for the harm either —
        // unless the clause's verb is a word of the pick's name ("cancel booking BK-2231"
        // for `cancel_booking`), which asks for it by name.
        let by_name = clause
            .head_verb
            .and_then(|h| clause.tokens().get(h))
            .is_some_and(|verb| crate::route::names(verb, self.index.name_stems(&pick.id)));
        let rival = ranking
            .iter()
            .take_while(|c| !by_name || c.score >= self.threshold)
            .filter(|c| c.id != pick.id)
            .find(|c| harm(&c.id).is_some_and(|h| h < mine))?;
        (pick.score - rival.score < margin).then(|| {
            let effects = |id: &str| self.catalog.tool(id).map_or("read", |t| t.effects.as_str());
            format!(
                "gap: `{}` ({}, {:.2}) and `{}` ({}, {:.2}) fit almost equally; a step that {} \
                 needs a clearer lead — say which one is meant",
                pick.id,
                effects(&pick.id),
                pick.score,
                rival.id,
                effects(&rival.id),
                rival.score,
                if mine == Harm::Changes {
                    "changes things"
                } else {
                    "destroys things"
                }
            )
        })
    }

    /// Adds the other entries of a clause that asks for several (see [`Self::requests_in`])
    /// beside `pick`, in the order the clause names them — each unless another clause of
    /// the request routes to it or the plan has it already.
    pub(super) fn other_requests(
        &self,
        clause: &ClauseAnalysis,
        pick: &str,
        tops: &[String],
        drafts: &mut Vec<Draft>,
    ) {
        // Requests taught one entry at a time give no reason to read two in one clause.
        if self.index.one_at_a_time() {
            return;
        }
        let Some(asked) = self.requests_in(clause) else {
            return;
        };
        let Some(at) = asked.iter().position(|(id, _)| *id == pick) else {
            return;
        };
        // The pick's draft is the last one; the others go before or after it, in the
        // order the clause asks for them.
        let mut before = drafts.len().saturating_sub(1);
        for (k, (id, p)) in asked.into_iter().enumerate() {
            if k == at || tops.iter().any(|t| t == id) || drafts.iter().any(|d| d.tool == id) {
                continue;
            }
            let why = format!("asked too, after “and” or a comma ({p:.2}, learned from requests)");
            let draft = self.new_draft(id, clause.segment.clause.index, p, why);
            if k < at {
                drafts.insert(before, draft);
                before += 1;
            } else {
                drafts.push(draft);
            }
        }
    }

    /// "create an agent that checks my inbox every morning": the clause's pick (a
    /// workflow, for "every morning") takes a kind of thing the clause asks to be made
    /// ("*an* agent") and nothing before makes; a candidate that makes that kind and
    /// clears the threshold too comes first, and feeds the pick.
    pub(super) fn make_what_it_takes(
        &self,
        clause: &ClauseAnalysis,
        ranking: &[Candidate],
        drafts: &mut Vec<Draft>,
    ) {
        let Some(at) = drafts.len().checked_sub(1) else {
            return;
        };
        let accepts = self.accepts(&drafts[at].tool);
        let made_before = drafts[..at]
            .iter()
            .any(|d| self.produces(&d.tool).iter().any(|k| accepts.contains(k)));
        let toks = clause.tokens();
        let asks_new =
            self.lex.article_after(toks, clause.head_verb) == Some(crate::lexicon::Article::New);
        if made_before || !asks_new {
            return;
        }
        // The kind is what the verb acts on, not any word of the clause ("a restaurant in
        // New York *City*").
        let Some(object) = clause
            .head_verb
            .and_then(|h| crate::route::object_noun(toks, h, self.lex))
        else {
            return;
        };
        let Some(kind) = accepts
            .iter()
            .find(|k| k.as_str() != "text" && self.lex.synonyms.key(k) == toks[object].key)
        else {
            return;
        };
        // The maker comes first, so it must start from what the request gives: not from
        // one of the kind itself (an image stitcher), nor from a kind the clause does not
        // supply (audio to turn into an image).
        let supplied = supplied_kinds(clause);
        let starts_here = |id: &str| {
            self.accepts(id)
                .iter()
                .all(|k| k.as_str() == "text" || supplied.contains(k.as_str()))
        };
        let Some(maker) = ranking
            .iter()
            .take_while(|c| c.score >= self.threshold)
            .filter(|c| c.id != drafts[at].tool && starts_here(&c.id))
            .find(|c| self.produces(&c.id).contains(kind))
        else {
            return;
        };
        let why = format!("makes the {kind} `{}` runs", drafts[at].tool);
        let draft = self.candidate_draft(maker, clause.segment.clause.index, &why);
        drafts.insert(at, draft);
        drafts[at + 1].inputs.push(at);
    }

    /// "translate notes.txt into French": the step just chosen takes text and no path,
    /// and the clause's verb acts on a file of a kind the step accepts. The catalog's
    /// reader (a tool that takes a path, changes nothing and says it reads) runs first
    /// and the step takes what it read, so the file's name is not taken as the text.
    pub(super) fn read_what_it_names(&self, clause: &ClauseAnalysis, drafts: &mut Vec<Draft>) {
        let Some(at) = drafts.len().checked_sub(1) else {
            return;
        };
        let step = &drafts[at];
        let takes_paths = |id: &str| self.index.takers(ExtractedKind::Paths).any(|t| t == id);
        if step.kind != waypoint_protocol::StepKind::Tool
            || !step.inputs.is_empty()
            || takes_paths(&step.tool)
        {
            return;
        }
        let Some(file) = self.object_file(clause) else {
            return;
        };
        let accepts = self.accepts(&step.tool);
        let of_accepted_kind =
            (self.lex.file_families(&file.value)).any(|f| accepts.iter().any(|k| k == f));
        if !of_accepted_kind {
            return;
        }
        let Some(reader) = self.file_reader() else {
            return;
        };
        let why = format!("reads {} for `{}`", file.value, step.tool);
        let draft = self.new_draft(&reader.name, step.clause, step.score, why);
        drafts.insert(at, draft);
        drafts[at + 1].inputs.push(at);
    }

    /// The catalog's reader of files: a tool that takes a path, changes nothing, needs
    /// nothing more and says it reads ("Read a file's contents").
    fn file_reader(&self) -> Option<&waypoint_catalog::Tool> {
        let reads = |id: &str| {
            (self.index.own_words(id).iter())
                .any(|w| self.lex.reading_verbs.contains(&self.lex.synonyms.key(w)))
        };
        self.index
            .takers(ExtractedKind::Paths)
            .filter_map(|id| self.catalog.tool(id))
            .find(|t| {
                Harm::of(t.effects) == Harm::None && t.required().count() <= 1 && reads(&t.name)
            })
    }

    /// The file the clause's verb acts on, where it names one ("audit *src/auth.rs*").
    fn object_file<'c>(&self, clause: &'c ClauseAnalysis) -> Option<&'c crate::extract::Found> {
        let toks = clause.tokens();
        clause
            .head_verb
            .and_then(|h| crate::route::object_value(toks, h, self.lex))
            .and_then(|i| clause.values.iter().find(|v| v.start == toks[i].start))
            .filter(|v| v.kind == ExtractedKind::Paths)
    }

    /// The entries a clause asks for, in its order, when the trained router, splitting it
    /// at its joints, routes every part confidently to a different entry ("a table for
    /// two, how humid is it here and put on some jazz"). Of the ways to split, the one
    /// whose least sure part is surest wins; the whole clause must speak for every entry.
    fn requests_in<'i>(&'i self, clause: &ClauseAnalysis) -> Option<Vec<Choice<'i>>> {
        let joints = &clause.segment.joints;
        if joints.is_empty() || joints.len() > MAX_JOINTS {
            return None;
        }
        let mut memo = HashMap::default();
        let asked = self
            .split_requests(clause, 0, clause.tokens().len(), &mut memo)
            .filter(|parts| parts.len() > 1)?;
        let ids: Vec<&str> = asked.iter().map(|(id, _)| *id).collect();
        self.index
            .supports_all(&clause.segment.clause.text, &ids)
            .then_some(asked)
    }

    /// The best way to read the clause's tokens `lo..hi` as confident requests for
    /// different entries: split at a joint when both sides can be so read, else the
    /// whole when the router is confident of it. Memoised by range.
    fn split_requests<'i>(
        &'i self,
        clause: &ClauseAnalysis,
        lo: usize,
        hi: usize,
        memo: &mut HashMap<(usize, usize), Option<Vec<Choice<'i>>>>,
    ) -> Option<Vec<Choice<'i>>> {
        if let Some(known) = memo.get(&(lo, hi)) {
            return known.clone();
        }
        let weakest = |parts: &[Choice<'_>]| parts.iter().map(|c| c.1).fold(f64::MAX, f64::min);
        let mut best: Option<Vec<Choice<'i>>> = None;
        for &(left_end, right_start) in &clause.segment.joints {
            if left_end <= lo || right_start >= hi {
                continue;
            }
            let Some(left) = self.split_requests(clause, lo, left_end, memo) else {
                continue;
            };
            let Some(right) = self.split_requests(clause, right_start, hi, memo) else {
                continue;
            };
            if right
                .iter()
                .any(|(id, _)| left.iter().any(|(l, _)| l == id))
            {
                continue;
            }
            if best
                .as_ref()
                .is_none_or(|b| weakest(&left).min(weakest(&right)) > weakest(b))
            {
                best = Some(left.into_iter().chain(right).collect());
            }
        }
        let found = best.or_else(|| {
            let part = clause.text_of(lo, hi)?;
            self.index.confident(part).map(|c| vec![c])
        });
        memo.insert((lo, hi), found.clone());
        found
    }

    /// What routing should know about a clause beyond its words.
    pub fn hints<'g>(
        &'g self,
        clause: &'g ClauseAnalysis,
        goal: Option<&'g waypoint_protocol::Goal>,
    ) -> Hints<'g> {
        // The evidence the goal's rule asks for, when the parser is sure enough.
        let needs = goal
            .filter(|g| g.confidence >= 0.3)
            .and_then(|g| {
                let rules = self.catalog.evidence();
                rules
                    .iter()
                    .find(|r| r.intent == g.intent && r.entity.is_some() && r.entity == g.entity)
                    .or_else(|| {
                        rules
                            .iter()
                            .find(|r| r.intent == g.intent && r.entity.is_none())
                    })
            })
            .map(|r| r.needs.iter().map(String::as_str).collect())
            .unwrap_or_default();
        // Values inside a relative clause describe the object; they are not this step's input.
        let mut supplied: Vec<ExtractedKind> = clause
            .values
            .iter()
            .filter(|v| clause.describing_from.is_none_or(|from| v.start < from))
            .map(|v| v.kind)
            .collect();
        supplied.dedup();
        let file_types = (clause.values.iter())
            .filter(|v| v.kind == ExtractedKind::Paths)
            .filter(|v| clause.describing_from.is_none_or(|from| v.start < from))
            .flat_map(|v| self.lex.file_families(&v.value))
            .collect();
        let intent = goal
            .filter(|g| g.confidence >= 0.3)
            .map(|g| g.intent.as_str());
        Hints {
            head_verb: clause.head_verb,
            intent,
            reread: intent.and_then(|i| self.lex.reread_as(clause.tokens(), i)),
            article: self.lex.article_after(clause.tokens(), clause.head_verb),
            destructive: clause
                .head_verb
                .and_then(|h| clause.tokens().get(h))
                .is_some_and(|t| self.lex.destroys(t)),
            supplied,
            file_types,
            needs,
            text: &clause.segment.clause.text,
            earlier_products: Vec::new(),
            context: Vec::new(),
            setting: None,
        }
    }

    /// A plan document whose intent fits the clause as well as the best tool does (seed
    /// 000's pipeline rule, applied to stored plans): the plan its authors proved wins.
    /// A document that is not clear enough to run still wins — running it asks its
    /// questions (the clarity gate).
    pub(super) fn stored_plan<'r>(&self, ranking: &'r [Candidate]) -> Option<&'r Candidate> {
        let top = ranking.first()?;
        ranking
            .iter()
            .take_while(|c| c.score >= self.threshold)
            .find(|c| c.kind == waypoint_protocol::CandidateKind::Plan)
            .filter(|c| c.score >= top.score * self.stored_plan_ratio)
    }

    /// Tools for the evidence the goal needs, or `None` to fall back to routing.
    pub(super) fn by_evidence(
        &self,
        goal: &waypoint_protocol::Goal,
        clause: &ClauseAnalysis,
        ranking: &[Candidate],
        earlier: &[Draft],
    ) -> Option<Vec<(String, f64, String)>> {
        if goal.confidence < 0.3 {
            return None;
        }
        let rules = self.catalog.evidence();
        let exact = rules
            .iter()
            .find(|r| r.intent == goal.intent && r.entity.is_some() && r.entity == goal.entity);
        // A rule for any entity applies only when the clause's own verb says the intent
        // ("review my changes"), not when the word is a noun ("look up reviews"); after
        // a support verb, the noun of the act says it ("give my work *a* code *review*").
        let verb_says_it = || {
            let toks = clause.tokens();
            clause.head_verb.is_some_and(|h| {
                let act = self.lex.act_noun(toks, h).unwrap_or(h);
                self.lex.intent_phrase_at(&goal.intent, toks, act)
            })
        };
        let rule = exact.or_else(|| {
            rules
                .iter()
                .find(|r| r.intent == goal.intent && r.entity.is_none())
                .filter(|_| verb_says_it())
        })?;
        let score_of = |id: &str| ranking.iter().find(|c| c.id == id).map_or(0.0, |c| c.score);
        let mut chosen: Vec<(String, f64, String)> = Vec::new();
        for need in &rule.needs {
            let producers = self
                .index
                .producers(need)
                .filter_map(|id| self.catalog.tool(id));
            // Deterministic tools before broad ones: the best-ranked producer, then one that runs
            // without a model, then catalog order.
            let best = producers
                .enumerate()
                .max_by(|(ia, a), (ib, b)| {
                    score_of(&a.name)
                        .total_cmp(&score_of(&b.name))
                        .then_with(|| deterministic(a).cmp(&deterministic(b)))
                        .then_with(|| ib.cmp(ia))
                })
                .map(|(_, t)| t)?;
            if !chosen.iter().any(|(n, ..)| *n == best.name) {
                let what = match &rule.entity {
                    Some(e) => format!("`{}` on `{e}` needs evidence `{need}`", rule.intent),
                    None => format!("`{}` needs evidence `{need}`", rule.intent),
                };
                chosen.push((best.name.clone(), score_of(&best.name), what));
            }
        }
        // Evidence the request already gathers: when the clause refers back ("review it")
        // and an earlier step makes what the last tool accepts, the earlier needs are met.
        if chosen.len() > 1
            && let Some((last, ..)) = chosen.last()
        {
            let accepts = self.accepts(last);
            let refers_back = clause
                .tokens()
                .iter()
                .any(|t| self.lex.anaphora.contains(&t.form));
            if refers_back
                && earlier
                    .iter()
                    .any(|d| self.produces(&d.tool).iter().any(|k| accepts.contains(k)))
            {
                chosen.drain(..chosen.len() - 1);
            }
        }
        let best_chosen = chosen.iter().map(|(_, s, _)| *s).fold(0.0, f64::max);
        // Evidence the clause gives: its verb acts on a file it names ("audit
        // src/auth.rs") and the rule's last tool is the catalog's reader or takes what
        // the reader makes. The file is the material; "review" gathers no diff for it.
        // (After `best_chosen`: the rule's tools still say how well the rule fits.)
        if chosen.len() > 1
            && let Some((last, ..)) = chosen.last()
            && self.object_file(clause).is_some()
            && let Some(reader) = self.file_reader()
        {
            let accepts = self.accepts(last);
            let reads_it = reader.name == *last
                || self
                    .produces(&reader.name)
                    .iter()
                    .any(|k| accepts.contains(k));
            if reads_it {
                chosen.drain(..chosen.len() - 1);
            }
        }
        // A rule matched on an assumed entity is as weak as a rule for any entity.
        if exact.is_none() || clause.entity_assumed {
            // A rule for any entity is a weak prior: a clearly better direct match wins,
            // and a rule whose tools share no word with the clause does not apply.
            let top = ranking.first();
            let beaten = top.is_some_and(|t| {
                t.score >= self.threshold
                    && t.score > best_chosen
                    && !chosen.iter().any(|(n, ..)| *n == t.id)
            });
            // A rule for any entity also needs its tools to share a word with the clause;
            // an assumed entity under a stated intent does not.
            if beaten || (exact.is_none() && best_chosen == 0.0) {
                return None;
            }
        }
        Some(chosen)
    }

    /// Whether the request can feed a candidate: a pipeline that accepts only specific
    /// kinds (a URL, slides) needs the clause to supply or name one, or an earlier step
    /// to make one.
    pub(super) fn fits(&self, c: &Candidate, clause: &ClauseAnalysis, earlier: &[Draft]) -> bool {
        let Some(Entry::Pipeline(p)) = self.catalog.entry(&c.id) else {
            return true;
        };
        let supplied = supplied_kinds(clause);
        let before = self.before_target(clause);
        let named = |kind: &str| self.names_kind(before, clause.head_verb, kind);
        // The clause names something the chain makes midway ("post this *draft*"): start
        // there with the member tool, not at the pipeline's beginning.
        let midway = p
            .steps
            .iter()
            .chain(&p.supersedes)
            .filter_map(|t| self.catalog.tool(t))
            .flat_map(|t| t.accepts.iter())
            .any(|k| k != "text" && !p.accepts.contains(k) && named(k));
        if midway {
            return false;
        }
        p.accepts.is_empty()
            || p.accepts
                .iter()
                .any(|a| a == "text" || supplied.contains(a.as_str()) || named(a))
            || earlier
                .iter()
                .any(|d| self.produces(&d.tool).iter().any(|k| p.accepts.contains(k)))
    }

    /// Whether a clause asks only for the chain's last step, `tool`, on a thing that
    /// exists already ("publish *this* post", "post *them* on the blog"): no step that
    /// makes the thing is asked for, unless the clause turns it into something ("turn
    /// it *into* a blog post"), supplies what the chain starts from, or names its object
    /// in an earlier step's words ("publish this *announcement*").
    fn finished_chain(&self, p: &Pipeline, tool: &str, clause: &ClauseAnalysis) -> bool {
        let Some((last, before_it)) = p.steps.split_last() else {
            return false;
        };
        let before = self.before_target(clause);
        if last != tool || before.len() < clause.tokens().len() || !self.acts_on_existing(clause) {
            return false;
        }
        let supplied = supplied_kinds(clause);
        if p.accepts.iter().any(|a| supplied.contains(a.as_str())) {
            return false;
        }
        let object: Vec<&String> = before
            .iter()
            .skip(clause.head_verb.map_or(0, |h| h + 1))
            .filter(|t| !t.value && self.lex.is_content(t))
            .map(|t| &t.stem)
            .collect();
        !before_it.iter().any(|step| {
            let own = self.index.own_words(step);
            object.iter().any(|&w| own.contains(w))
        })
    }

    /// Whether the clause's verb acts on something that exists already: its object's
    /// article says so ("publish *this* post") or its object is a pronoun ("post *them*").
    fn acts_on_existing(&self, clause: &ClauseAnalysis) -> bool {
        let toks = clause.tokens();
        let pronoun = clause
            .head_verb
            .and_then(|h| toks.get(h + 1))
            .is_some_and(|t| self.lex.anaphora.contains(&t.form));
        pronoun
            || self.lex.article_after(toks, clause.head_verb)
                == Some(crate::lexicon::Article::Existing)
    }

    /// The chain's last step alone, when the clause's best candidate is a pipeline whose
    /// chain is finished but for that step (`finished_chain`) and the step itself clears
    /// the threshold.
    pub(super) fn last_step_only(
        &self,
        pick: &Candidate,
        ranking: &[Candidate],
        clause: &ClauseAnalysis,
    ) -> Option<Candidate> {
        let p = self.catalog.pipeline(&pick.id)?;
        let last = p.steps.last()?;
        if !self.finished_chain(p, last, clause) {
            return None;
        }
        ranking
            .iter()
            .take_while(|c| c.score >= self.threshold)
            .find(|c| c.id == *last)
            .map(|c| {
                let mut c = c.clone();
                c.why.insert(0, format!("the rest of `{}` is done", p.id));
                c
            })
    }

    /// The clause's words before its target ("this *draft* to…"): an artifact kind named
    /// there is what the clause acts on.
    fn before_target<'c>(&self, clause: &'c ClauseAnalysis) -> &'c [Token] {
        let toks = clause.tokens();
        let end = Lexicon::after_marker(&self.lex.target_markers, toks).unwrap_or(toks.len());
        &toks[..end.min(toks.len())]
    }

    /// Whether a clause's words before its target (see `before_target`) name an artifact
    /// kind other than with its verb ("*draft* a post").
    fn names_kind(&self, before: &[Token], head_verb: Option<usize>, kind: &str) -> bool {
        let key = self.lex.synonyms.key(kind);
        (before.iter().enumerate()).any(|(i, t)| t.key == key && Some(i) != head_verb)
    }

    /// The best candidate at or above the threshold that the request can feed.
    pub(super) fn first_fitting<'r>(
        &self,
        ranking: &'r [Candidate],
        clause: &ClauseAnalysis,
        earlier: &[Draft],
    ) -> Option<&'r Candidate> {
        let mut fitting = ranking
            .iter()
            .take_while(|c| c.score >= self.threshold)
            .filter(|c| self.fits(c, clause, earlier));
        let top = fitting.next()?;
        // "fix it" after "read the file": the clause acts on something made earlier, so of
        // candidates the words support almost equally, the one that can take it is meant.
        let takes_earlier = |id: &str| earlier.iter().any(|d| self.feeds(&d.tool, id));
        let points_back = clause
            .tokens()
            .iter()
            .any(|t| self.lex.anaphora.contains(&t.form));
        if points_back && !takes_earlier(&top.id) {
            let linked = fitting
                .take_while(|c| top.score - c.score <= LINK_MARGIN)
                .find(|c| takes_earlier(&c.id));
            if linked.is_some() {
                return linked;
            }
        }
        Some(top)
    }

    /// Seed 000's first rule: when the chosen tool is one a fitting pipeline supersedes or
    /// runs, and the pipeline makes what the tool makes, the pipeline covers the request
    /// and wins — it is the chain maintainers proved works.
    pub(super) fn covering_pipeline(
        &self,
        pick: &Candidate,
        ranking: &[Candidate],
        clause: &ClauseAnalysis,
        earlier: &[Draft],
    ) -> Option<Candidate> {
        let Some(Entry::Tool(tool)) = self.catalog.entry(&pick.id) else {
            return None;
        };
        let before = self.before_target(clause);
        ranking
            .iter()
            .take_while(|c| c.score >= self.threshold)
            .filter(|c| {
                c.kind == waypoint_protocol::CandidateKind::Pipeline
                    && self.fits(c, clause, earlier)
            })
            .find(|c| {
                self.catalog.pipeline(&c.id).is_some_and(|p| {
                    !self.finished_chain(p, &tool.name, clause)
                    && (p.supersedes.contains(&tool.name) || p.steps.contains(&tool.name))
                        && p.produces.iter().any(|k| tool.produces.contains(k))
                        // "post this draft": the tool takes the named input, the pipeline does not.
                        && !tool.accepts.iter().any(|k| {
                            self.names_kind(before, clause.head_verb, k) && !p.accepts.contains(k)
                        })
                })
            })
            .map(|c| {
                let mut c = c.clone();
                c.why
                    .insert(0, format!("covers `{}` and the chain around it", tool.name));
                c
            })
    }

    /// A pipeline that takes what the clause supplies and makes what its top tool makes.
    pub(super) fn prefer_pipeline(
        &self,
        top: &Candidate,
        clause: &ClauseAnalysis,
    ) -> Option<Candidate> {
        let Some(Entry::Tool(tool)) = self.catalog.entry(&top.id) else {
            return None;
        };
        let supplied = supplied_kinds(clause);
        if supplied.is_empty() || tool.accepts.iter().any(|a| supplied.contains(a.as_str())) {
            return None;
        }
        self.catalog
            .pipelines()
            .iter()
            .find(|p| {
                p.produces.iter().any(|k| tool.produces.contains(k))
                    && p.accepts.iter().any(|a| supplied.contains(a.as_str()))
            })
            .map(|p| Candidate {
                id: p.id.clone(),
                kind: waypoint_protocol::CandidateKind::Pipeline,
                score: top.score,
                why: vec![format!(
                    "takes the {} given and produces what `{}` would",
                    supplied.iter().copied().collect::<Vec<_>>().join(", "),
                    tool.name
                )],
            })
    }
}
