//! The engine: one catalog's compiled indexes and the request flow over them.

use std::collections::HashSet;

use waypoint_catalog::Catalog;
use waypoint_protocol::{
    Clarity, Plan, PlanParts, PlannerKind, RouteReport, Step, StepKind, Understanding,
};

use crate::error::CoreError;
use crate::extract::Extractor;
use crate::lexicon::Lexicon;
use crate::plan::{Drafted, Planner};
use crate::route::RouteIndex;
use crate::understand::{Analysis, understand};
use crate::validate::{Guards, validate};

/// One action clause and the entries the router sees in it.
#[derive(Debug, Clone, PartialEq)]
pub struct ClauseEvidence {
    /// The clause's index, as in a step's `clause`.
    pub clause: usize,
    pub text: String,
    /// (entry id, score 0–1), unordered.
    pub scores: Vec<(String, f64)>,
}

impl ClauseEvidence {
    /// The router's score for `id` in this clause (0 when it does not rank it).
    pub fn score(&self, id: &str) -> f64 {
        self.scores
            .iter()
            .find(|(i, _)| i == id)
            .map_or(0.0, |(_, s)| *s)
    }

    /// Every entry any clause ranks, with its best score over the clauses, best first.
    pub fn ranking(clauses: &[ClauseEvidence]) -> Vec<(String, f64)> {
        let mut best: Vec<(String, f64)> = Vec::new();
        for (id, score) in clauses.iter().flat_map(|c| &c.scores) {
            match best.iter_mut().find(|(i, _)| i == id) {
                Some(slot) => slot.1 = slot.1.max(*score),
                None => best.push((id.clone(), *score)),
            }
        }
        best.sort_by(|a, b| b.1.total_cmp(&a.1));
        best
    }

    /// The best score of any entry.
    pub fn best(&self) -> f64 {
        self.scores.iter().map(|(_, s)| *s).fold(0.0, f64::max)
    }
}

impl Engine {
    /// The plan for a specialist runner, validated against the catalog's
    /// specialists with a fallback to `general`.
    pub fn specialist_plan(&self, request: &str, plan: &Plan) -> waypoint_protocol::SpecialistPlan {
        crate::specialists::project(plan, request, &self.catalog, &self.lexicon)
    }
}

/// Knobs of the deterministic planner; every one has a bounded default.
#[derive(Debug, Clone)]
pub struct Options {
    /// Route score at or above which a candidate is taken; below it a clause is a gap.
    pub threshold: f64,
    /// Most steps a plan may have.
    pub max_steps: usize,
    /// When set, only these tools and pipelines may appear in a plan.
    pub allowlist: Option<HashSet<String>>,
    /// Largest request accepted, in bytes.
    pub max_request_bytes: usize,
    /// How many alternatives `route` reports.
    pub alternatives: usize,
    /// A plan document wins a clause when its route score is at least this share of the
    /// best candidate's (and above the threshold).
    pub stored_plan_ratio: f64,
    /// How far a tool that writes must lead the best less harmful
    /// candidate to be chosen; closer, the clause is a gap that names both. A read tool
    /// needs no lead: choosing it wrongly changes nothing.
    pub write_margin: f64,
    /// The same for a destructive tool.
    pub destructive_margin: f64,
    /// Whether, and from where, the trained router is built.
    pub router: crate::learned::RouterModel,
    /// Meaning-level matching with a sentence encoder; `None` routes by words (and the
    /// trained router) alone.
    pub meaning: Option<crate::meaning::MeaningSettings>,
    /// Without an encoder, read the built-in static word vectors: they order a catalog
    /// known by names and descriptions alone, and the trained router's network and
    /// nearest-request vote read them where requests ask for one entry each
    /// (docs/routing.md, "Static word vectors").
    pub word_vectors: bool,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            threshold: 0.35,
            max_steps: 32,
            allowlist: None,
            max_request_bytes: 64 * 1024,
            alternatives: 5,
            stored_plan_ratio: 0.9,
            write_margin: 0.05,
            destructive_margin: 0.15,
            router: crate::learned::RouterModel::default(),
            meaning: None,
            word_vectors: true,
        }
    }
}

/// A catalog compiled for planning. Build once, plan many times (it is `Sync`).
pub struct Engine {
    catalog: Catalog,
    lexicon: Lexicon,
    extractor: Extractor,
    index: RouteIndex,
    options: Options,
    /// A hash of the catalog's names, computed once, so plan ids differ across catalogs.
    fingerprint: u64,
}

impl Engine {
    pub fn new(catalog: Catalog, options: Options) -> Result<Self, CoreError> {
        let lexicon = Lexicon::for_catalog(&catalog)?;
        let extractor = Extractor::new(&lexicon)?;
        let index = RouteIndex::build(
            &catalog,
            &lexicon,
            &options.router,
            options.meaning.as_ref(),
            options.word_vectors,
        );
        let mut h = Fnv::default();
        for t in catalog.tools() {
            h.write(t.name.as_bytes());
        }
        for p in catalog.pipelines() {
            h.write(p.id.as_bytes());
        }
        let fingerprint = h.0;
        Ok(Self {
            catalog,
            lexicon,
            extractor,
            index,
            options,
            fingerprint,
        })
    }

    pub fn catalog(&self) -> &Catalog {
        &self.catalog
    }

    pub fn options(&self) -> &Options {
        &self.options
    }

    /// The trained router, when the catalog has one.
    pub fn learned(&self) -> Option<&crate::learned::Learned> {
        self.index.learned()
    }

    /// Meaning-level matching: off, on, or configured but failed (with why).
    pub fn meaning(&self) -> &crate::meaning::MeaningState {
        self.index.meaning()
    }

    fn analyse(
        &self,
        request: &str,
        context: Option<&serde_json::Value>,
    ) -> Result<Analysis, CoreError> {
        if request.trim().is_empty() {
            return Err(CoreError::EmptyRequest);
        }
        if request.len() > self.options.max_request_bytes {
            return Err(CoreError::RequestTooLarge {
                len: request.len(),
                max: self.options.max_request_bytes,
            });
        }
        let analysis = {
            let _span = tracing::info_span!("understand").entered();
            // Where labelled requests lead routing, they say what a request that only
            // rules something out means.
            let taught_leads = self
                .index
                .learned()
                .is_some_and(crate::learned::Learned::leads);
            understand(
                request,
                context,
                &self.lexicon,
                &self.extractor,
                self.catalog.evidence(),
                !taught_leads,
            )
        };
        // With a sentence encoder, every action clause is encoded in one batch up front,
        // with what the request sets out before it where it does: cheaper than one pass
        // per text as routing reaches each.
        if self.index.meaning().is_on() {
            let actions = || analysis.clauses.iter().filter(|c| c.is_action());
            let settings: Vec<String> = actions().filter_map(|c| analysis.setting_of(c)).collect();
            self.index.prefetch(
                actions()
                    .map(|c| c.segment.clause.text.as_str())
                    .chain(settings.iter().map(String::as_str)),
            );
        }
        Ok(analysis)
    }

    /// Clauses, goals and extracted values of a request.
    pub fn understand(
        &self,
        request: &str,
        context: Option<&serde_json::Value>,
    ) -> Result<Understanding, CoreError> {
        Ok(self.analyse(request, context)?.understanding)
    }

    /// Most action clauses one plan routes and drafts: twice `max_steps`, so a request
    /// whose pipelines fold several clauses into one step still fills its plan.
    fn max_clauses(&self) -> usize {
        self.options.max_steps.saturating_mul(2)
    }

    fn planner(&self) -> Planner<'_> {
        Planner {
            catalog: &self.catalog,
            lex: &self.lexicon,
            index: &self.index,
            threshold: self.options.threshold,
            stored_plan_ratio: self.options.stored_plan_ratio,
            write_margin: self.options.write_margin,
            destructive_margin: self.options.destructive_margin,
            max_clauses: self.max_clauses(),
        }
    }

    /// Ranked candidates for each action clause of the request.
    pub fn route(
        &self,
        request: &str,
        context: Option<&serde_json::Value>,
    ) -> Result<Vec<RouteReport>, CoreError> {
        let analysis = self.analyse(request, context)?;
        let planner = self.planner();
        let mut reports = Vec::new();
        for (span, clause, ranking) in planner.rankings(&analysis) {
            let text = request
                .get(span.start..span.end)
                .map_or_else(|| clause.segment.clause.text.clone(), str::to_string);
            let recommendation = ranking
                .first()
                .filter(|c| c.score >= self.options.threshold)
                .cloned();
            let gap_warning = recommendation.is_none().then(|| {
                format!(
                    "no catalog entry can “{}”; add a tool whose description or keywords cover it{}",
                    text,
                    ranking.first().map_or(String::new(), |c| format!(" (closest: `{}` at {:.2})", c.id, c.score))
                )
            });
            let suggested_args = recommendation
                .as_ref()
                .and_then(|r| planner.schema_tool(&r.id))
                .map(|tool| {
                    let inputs = crate::args::Inputs {
                        request,
                        clause,
                        payload: context,
                        from_step: None,
                        vague: clause.vague_object.is_some(),
                        names_artifact: &|key| self.index.names_artifact(key),
                        earlier: &[],
                        later: &[],
                        antecedent: None,
                        own_words: self.index.own_words(&tool.name),
                        own_name: self.index.name_stems(&tool.name),
                        outputs: &[],
                        carried: &[],
                        sharing: None,
                    };
                    crate::args::fill(
                        tool,
                        self.index.arg_specs(&tool.name),
                        &inputs,
                        &self.lexicon,
                    )
                    .args
                })
                .unwrap_or_default();
            reports.push(RouteReport {
                clause: text,
                alternatives: ranking
                    .into_iter()
                    .skip(usize::from(recommendation.is_some()))
                    .take(self.options.alternatives)
                    .collect(),
                recommendation,
                threshold: self.options.threshold,
                gap_warning,
                suggested_args,
            });
        }
        Ok(reports)
    }

    /// Plans a request deterministically.
    pub fn plan(
        &self,
        request: &str,
        context: Option<&serde_json::Value>,
    ) -> Result<Plan, CoreError> {
        self.plan_with(request, context, None)
    }

    /// Plans a request along a learned tool sequence (the cascade's first stage): the
    /// tools are given, everything else — args, references, guards — is derived anew.
    pub fn plan_learned(
        &self,
        request: &str,
        context: Option<&serde_json::Value>,
        tools: &[String],
    ) -> Result<Plan, CoreError> {
        self.plan_with(request, context, Some(tools))
    }

    fn plan_with(
        &self,
        request: &str,
        context: Option<&serde_json::Value>,
        learned: Option<&[String]>,
    ) -> Result<Plan, CoreError> {
        // What the trained router remembers serves one request: the next asks anew.
        crate::learned::new_request();
        let analysis = self.analyse(request, context)?;
        let planner = self.planner();
        let mut drafted = {
            let _span = tracing::info_span!("route", clauses = analysis.clauses.len()).entered();
            match learned {
                Some(tools) => planner.draft_sequence(&analysis, tools),
                None => planner.draft(&analysis),
            }
        };
        {
            let _span = tracing::info_span!("fill_args").entered();
            planner.fill_args(request, &analysis, context, &mut drafted);
        }
        let steps = to_steps(&drafted);
        let kind = if learned.is_some() {
            PlannerKind::Learned
        } else {
            PlannerKind::Deterministic
        };
        Ok(self.finish(request, context, analysis, &drafted, steps, kind))
    }

    /// Adopts steps another planner wrote (a model): they pass the same guards as the
    /// deterministic planner's, and the request's understanding and clarity are derived
    /// here, so no planner can claim more certainty than the request allows.
    pub fn adopt(
        &self,
        request: &str,
        context: Option<&serde_json::Value>,
        steps: Vec<Step>,
        planner: PlannerKind,
        note: &str,
    ) -> Result<Plan, CoreError> {
        let analysis = self.analyse(request, context)?;
        let mut drafted = self.planner().draft(&analysis);
        // The deterministic planner's notes explain its own steps, not these.
        drafted.notes.clear();
        let note = note.trim().trim_end_matches('.');
        if !note.is_empty() {
            drafted.notes.push(note.to_string());
        }
        Ok(self.finish(request, context, analysis, &drafted, steps, planner))
    }

    /// Every catalog entry that any action clause of the request routes to or whose
    /// goal's evidence it produces, best first, with its best score over the clauses
    /// (what compaction keeps first).
    pub fn rank_catalog(
        &self,
        request: &str,
        context: Option<&serde_json::Value>,
    ) -> Result<Vec<(String, f64)>, CoreError> {
        Ok(ClauseEvidence::ranking(
            &self.clause_evidence(request, context)?,
        ))
    }

    /// What the router sees in each action clause: every entry it ranks, and every
    /// producer of the evidence the clause's goal needs at the goal's
    /// confidence — the evidence a model's choice is checked against.
    pub fn clause_evidence(
        &self,
        request: &str,
        context: Option<&serde_json::Value>,
    ) -> Result<Vec<ClauseEvidence>, CoreError> {
        let analysis = self.analyse(request, context)?;
        let planner = self.planner();
        let mut goals = analysis.understanding.goals.iter();
        let mut out = Vec::new();
        for clause in analysis.clauses.iter().filter(|c| c.is_action()) {
            let goal = goals.next();
            let hints = planner.hints_in(&analysis, clause, goal);
            let mut scores: Vec<(String, f64)> = self
                .index
                .rank(clause.tokens(), &hints, &self.lexicon)
                .into_iter()
                .map(|c| (c.id, c.score))
                .collect();
            // "How is this designed" needs discovery though its words may not name it.
            let confidence = goal.map_or(0.0, |g| g.confidence);
            for need in &hints.needs {
                for id in self.index.producers(need) {
                    match scores.iter_mut().find(|(i, _)| i == id) {
                        Some(slot) => slot.1 = slot.1.max(confidence),
                        None => scores.push((id.to_string(), confidence)),
                    }
                }
            }
            out.push(ClauseEvidence {
                clause: clause.segment.clause.index,
                text: clause.segment.clause.text.clone(),
                scores,
            });
        }
        Ok(out)
    }

    fn finish(
        &self,
        request: &str,
        context: Option<&serde_json::Value>,
        analysis: Analysis,
        drafted: &Drafted,
        mut steps: Vec<Step>,
        planner: PlannerKind,
    ) -> Plan {
        let verdict = {
            let _span = tracing::info_span!("validate", steps = steps.len()).entered();
            validate(
                &mut steps,
                &Guards {
                    catalog: &self.catalog,
                    allowlist: self.options.allowlist.as_ref(),
                    max_steps: self.options.max_steps,
                },
            )
        };
        let mut warnings = verdict.warnings;
        if drafted.unplanned > 0 {
            warnings.insert(
                0,
                format!(
                    "the request has {} more action clauses than the {} planned (twice `max_steps`); they are left out",
                    drafted.unplanned,
                    self.max_clauses()
                ),
            );
        }
        let mut questions = drafted.questions.clone();
        questions.extend(verdict.questions);
        let clarity = clarity(
            &analysis,
            drafted,
            questions,
            self.options.threshold,
            &self.lexicon,
        );
        let reasoning = reasoning(&analysis, &steps, drafted);
        Plan::new(PlanParts {
            plan_id: plan_id(request, context, self.fingerprint),
            request: request.to_string(),
            steps,
            reasoning,
            understanding: analysis.understanding,
            clarity,
            planner,
            model: None,
            compaction: None,
            usage: None,
            warnings,
        })
    }
}

fn to_steps(drafted: &Drafted) -> Vec<Step> {
    drafted
        .drafts
        .iter()
        .enumerate()
        .map(|(i, d)| Step {
            id: crate::args::step_id(i),
            order: u32::try_from(i + 1).unwrap_or(u32::MAX),
            kind: d.kind,
            tool: d.tool.clone(),
            args: d.args.clone(),
            input_refs: d.inputs.iter().map(|&r| crate::args::step_id(r)).collect(),
            after: d.after.iter().map(|&r| crate::args::step_id(r)).collect(),
            group: 0,
            rationale: d.rationale.clone(),
            clause: Some(d.clause),
        })
        .collect()
}

/// Seed 003's clarity: how sure we are of each clause, and what must be asked.
fn clarity(
    analysis: &Analysis,
    drafted: &Drafted,
    mut questions: Vec<String>,
    threshold: f64,
    lex: &Lexicon,
) -> Clarity {
    let mut score: f64 = 0.0;
    let mut goals = analysis.understanding.goals.iter();
    for (i, clause) in analysis.clauses.iter().enumerate() {
        if !clause.is_action() {
            continue;
        }
        let goal_conf = goals.next().map_or(0.0, |g| g.confidence);
        let route = drafted.clause_scores.get(i).copied().unwrap_or(0.0);
        // A verb with a concrete object is clear even when the catalog cannot do it
        // ("order me a pizza" is a gap, not an ambiguity).
        let asks = clause.head_verb.is_some()
            || clause
                .tokens()
                .first()
                .is_some_and(|t| lex.question_words.contains(&t.form));
        let structural = if asks && clause.vague_object.is_none() && clause.back_reference.is_none()
        {
            0.7
        } else {
            0.0
        };
        let mut a = 0.5 * (1.0 - goal_conf.max(route.min(1.0)).max(structural));
        if goal_conf == 0.0 && route < threshold && structural == 0.0 {
            a = a.max(0.5);
        }
        if let Some(word) = &clause.vague_object {
            a += 0.4;
            questions.push(format!(
                "What does “{word}” refer to in “{}”? Name the file, text or item to act on.",
                clause.segment.clause.text
            ));
        }
        if let Some(phrase) = &clause.back_reference {
            a += 0.4;
            questions.push(format!(
                "Which earlier request or result is “{phrase}”? Waypoint cannot see past conversations; describe or paste it."
            ));
        }
        score = score.max(a);
    }
    let mut seen = HashSet::new();
    questions.retain(|q| seen.insert(q.clone()));
    Clarity::new(score, questions)
}

fn reasoning(analysis: &Analysis, steps: &[Step], drafted: &Drafted) -> String {
    let actions = analysis.clauses.iter().filter(|c| c.is_action()).count();
    let known = steps.iter().filter(|s| s.is_known()).count();
    let gaps = steps.len() - known;
    let mut s = format!(
        "{actions} action clause{} → {} step{}",
        if actions == 1 { "" } else { "s" },
        steps.len(),
        if steps.len() == 1 { "" } else { "s" }
    );
    if gaps > 0 {
        s.push_str(&format!(
            " ({gaps} gap{})",
            if gaps == 1 { "" } else { "s" }
        ));
    }
    s.push('.');
    for note in &drafted.notes {
        s.push_str(&format!(" {note}."));
    }
    if steps.iter().any(|s| s.kind == StepKind::Pipeline) && drafted.notes.is_empty() {
        s.push_str(" A pipeline covers part of the request, so its chain is not re-derived.");
    }
    s
}

/// A stable id: the same request, context and catalog give the same id.
fn plan_id(request: &str, context: Option<&serde_json::Value>, catalog: u64) -> String {
    let mut h = Fnv::default();
    h.write(request.as_bytes());
    if let Some(c) = context {
        h.write(c.to_string().as_bytes());
    }
    h.write(&catalog.to_le_bytes());
    format!("pl_{:016x}", h.0)
}

/// FNV-1a, 64 bits: stable across platforms and releases, unlike `DefaultHasher`.
struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Self {
        Self(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv {
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 ^= u64::from(*b);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
        self.0 ^= 0xff;
        self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
    }
}
