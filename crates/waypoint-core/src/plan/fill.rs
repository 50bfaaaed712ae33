//! Arguments: each step's args from its clause, the facts stated beside it, the
//! lookups a missing id asks for, and one step per value where a schema takes one.

use waypoint_catalog::{Entry, Tool};
use waypoint_protocol::StepKind;

use crate::args::{self, Inputs};
use crate::understand::Analysis;

use super::revise::make_room;
use super::{Draft, Drafted, Planner};

impl Planner<'_> {
    /// The tool whose input schema a step's args follow (a pipeline's first tool).
    pub fn schema_tool(&self, id: &str) -> Option<&Tool> {
        match self.catalog.entry(id)? {
            Entry::Tool(t) => Some(t),
            Entry::Pipeline(p) => p.steps.first().and_then(|s| self.schema_tool(s)),
            // A plan document takes no args: its placeholders are resolved when it runs.
            Entry::Plan(_) => None,
        }
    }

    /// Fills every draft's args; returns the questions raised by what is missing. A
    /// draft given several values where its schema takes one becomes one draft per value.
    pub fn fill_args(
        &self,
        request: &str,
        analysis: &Analysis,
        payload: Option<&serde_json::Value>,
        out: &mut Drafted,
    ) {
        let names_artifact = |key: &str| self.index.names_artifact(key);
        // What each earlier step produces, grown as the loop goes (copies included).
        let mut outputs: Vec<args::Made> = Vec::new();
        let mut j = 0;
        while j < out.drafts.len() {
            let next = self.fill_one(
                request,
                analysis,
                payload,
                out,
                j,
                &outputs,
                &names_artifact,
            );
            for k in j..next {
                if out.drafts[k].kind != StepKind::Unknown {
                    let tool = &out.drafts[k].tool;
                    outputs.push(self.index.made(tool, k).unwrap_or_else(|| {
                        args::Made::new(k, tool, self.produces(tool), self.lex)
                    }));
                }
            }
            j = next;
        }
    }

    /// Fills draft `j`; returns the index after it and the copies its values made.
    #[expect(
        clippy::too_many_arguments,
        reason = "one draft of the loop in fill_args"
    )]
    fn fill_one(
        &self,
        request: &str,
        analysis: &Analysis,
        payload: Option<&serde_json::Value>,
        out: &mut Drafted,
        j: usize,
        outputs: &[args::Made],
        names_artifact: &dyn Fn(&str) -> bool,
    ) -> usize {
        let d = &out.drafts[j];
        let (Some(tool), Some(clause)) = (
            self.schema_tool(&d.tool)
                .filter(|_| d.kind != StepKind::Unknown),
            analysis.clause(d.clause),
        ) else {
            return j + 1;
        };
        let from = d.inputs.last().map(|&i| args::step_id(i));
        let before = analysis
            .clauses
            .iter()
            .position(|c| c.segment.clause.index >= d.clause)
            .unwrap_or(analysis.clauses.len());
        let (earlier, from_here) = analysis.clauses.split_at(before);
        let later = from_here.get(1..).unwrap_or_default();
        // "look up and cancel booking BK-2231": the lookup takes the booking too.
        let sharing = later
            .first()
            .filter(|next| next.is_action() && self.shared_object(clause, next).is_some());
        // The object of the nearest earlier action clause, when it names something of its own.
        let antecedent = earlier.iter().rfind(|c| c.is_action()).and_then(|c| {
            let words = c.object_text(request)?;
            let own = c
                .tokens()
                .iter()
                .skip(c.head_verb.map_or(0, |h| h + 1))
                .any(|t| self.lex.is_content(t) && !self.lex.anaphora.contains(&t.form));
            (own && c.values.is_empty()).then_some(words)
        });
        let carried: Vec<(String, serde_json::Value)> = out.drafts[..j]
            .iter()
            .rev()
            .flat_map(|e| &e.args)
            .filter(|(_, v)| !args::is_symbolic(v))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let inputs = Inputs {
            request,
            clause,
            payload,
            from_step: from.as_deref(),
            vague: clause.vague_object.is_some(),
            names_artifact,
            earlier,
            later,
            antecedent: antecedent.as_deref(),
            own_words: self.index.own_words(&tool.name),
            own_name: self.index.name_stems(&tool.name),
            outputs,
            carried: &carried,
            sharing,
        };
        let mut filled = args::fill(tool, self.index.arg_specs(&tool.name), &inputs, self.lex);
        self.fill_from_facts(tool, &inputs, analysis, &out.told, d.clause, &mut filled);
        let lookups = self.lookups(tool, &inputs, &filled, &out.drafts[j]);
        let j = j + lookups.len();
        if !lookups.is_empty() {
            let answered = take_lookups(&mut out.drafts, j - lookups.len(), lookups, &mut filled);
            out.questions.extend(answered);
        }
        let args::Filled {
            args,
            open,
            fan_out: fan,
            linked,
        } = filled;
        if clause.vague_object.is_none() {
            out.questions.extend(open.into_iter().map(|o| o.question));
        }
        let draft = &mut out.drafts[j];
        draft.args = args;
        for i in linked {
            if !draft.inputs.contains(&i) {
                draft.inputs.push(i);
            }
            draft.after.retain(|a| *a != i);
        }
        let Some((name, values)) = fan else {
            return j + 1;
        };
        let draft = &mut out.drafts[j];
        if draft.tool == tool.name
            && draft.args.keys().all(|k| *k == name)
            && let Some((twin, list)) = self.batch_twin(tool, &name, &values)
        {
            let all = match values.len() {
                2 => "both".to_string(),
                n => format!("all {n}"),
            };
            draft
                .rationale
                .push_str(&format!("; `{twin}` takes {all} `{list}` in one call"));
            draft.tool = twin.to_string();
            draft.args =
                serde_json::Map::from_iter([(list.to_string(), serde_json::Value::Array(values))]);
            return j + 1;
        }
        fan_out(&mut out.drafts, j, &name, &values);
        let copies = values.len().saturating_sub(1);
        j + 1 + copies
    }

    /// Fills what the step's own clause leaves open from the facts stated beside it
    /// ("Add Sarah Lee as a contact. Her number is 123-456-7890"), each read as the step's
    /// clause would be.
    fn fill_from_facts(
        &self,
        tool: &Tool,
        inputs: &Inputs<'_>,
        analysis: &Analysis,
        told: &[(usize, usize)],
        host: usize,
        filled: &mut args::Filled,
    ) {
        let facts = told
            .iter()
            .filter(|(_, h)| *h == host)
            .filter_map(|(f, _)| analysis.clause(*f));
        for fact in facts {
            let stated = Inputs {
                clause: fact,
                vague: false,
                ..*inputs
            };
            let from_fact = args::fill(tool, self.index.arg_specs(&tool.name), &stated, self.lex);
            for (arg, value) in from_fact.args {
                if args::is_symbolic(&value) {
                    continue;
                }
                if filled.open.iter().any(|o| o.arg == arg) {
                    filled.answer(&arg, value);
                } else if !filled.args.contains_key(&arg) {
                    filled.args.insert(arg, value);
                }
            }
        }
    }

    /// The one tool that does what `tool` does to several values at once, where a clause
    /// gives several values for `tool`'s argument `name` ("read a.txt and b.txt" with
    /// `read_multiple_files` beside `read_text_file`): a tool whose name starts with the
    /// same verb, that does as much harm, and whose one required argument is a list of
    /// what `name` takes, every value fitting it. Returns it and that argument.
    fn batch_twin<'c>(
        &'c self,
        tool: &Tool,
        name: &str,
        values: &[serde_json::Value],
    ) -> Option<(&'c str, &'c str)> {
        // The stem of the first word past a server prefix: `fs.read_text_file` and
        // `fs.get_file_info` share their server, not what they do, and a synonym ("open"
        // for "read") is another tool's way of saying something else.
        let verb = |t: &Tool| {
            args::name_stems(crate::text::without_server(&t.name), self.lex)
                .into_iter()
                .next()
        };
        let item = tool.properties().find(|(n, _)| *n == name)?.1.get("type")?;
        let mine = verb(tool)?;
        let mut twins = self
            .catalog
            .tools()
            .iter()
            .filter(|t| {
                t.name != tool.name && t.effects == tool.effects && verb(t).as_ref() == Some(&mine)
            })
            .filter_map(|t| {
                let mut required = t.required();
                let list = required.next().filter(|_| required.next().is_none())?;
                let schema = t.properties().find(|(n, _)| *n == list)?.1;
                let items = schema.get("items")?;
                let takes_all = schema.get("type")?.as_str() == Some("array")
                    && items.get("type") == Some(item)
                    && values.iter().all(|v| args::fits(v, items));
                takes_all.then_some((t.name.as_str(), list))
            });
        let found = twins.next()?;
        // Two such tools: which one is meant is not the planner's to guess.
        twins.next().is_none().then_some(found)
    }
}

/// A step that looks up what another needs, before it is placed: the draft (args filled),
/// the consumer's arguments it answers, and the questions its own gaps raise.
struct Lookup {
    draft: Draft,
    answers: Vec<String>,
    questions: Vec<String>,
}

impl Planner<'_> {
    /// The lookups a step needs: a required id the request leaves open (`artistId`,
    /// `originSkyId`) that exactly one other catalog tool names among what it makes
    /// (`artist_id`, `skyId`) is that tool's output, looked up in a step of its own from
    /// the same clause. Arguments that differ only by the words before the product
    /// (`originSkyId` and `originEntityId` against `destinationSkyId`) share one lookup
    /// per prefix, and the prefix picks the words the lookup takes ("from New York");
    /// without one it takes the clause's first proper name ("restaurants in Rome"). A
    /// required name (`restaurant_name`: the lexicon's `looked_up_args`) the request
    /// leaves open is looked up the same way, by a tool that makes it under its whole
    /// name, and the lookup reads its own arguments from the clause ("a *Chinese*
    /// restaurant *in Boston*").
    fn lookups(
        &self,
        tool: &Tool,
        inputs: &Inputs<'_>,
        filled: &args::Filled,
        consumer: &Draft,
    ) -> Vec<Lookup> {
        // (maker, prefix, whether an id asked for it, the arguments it answers)
        let mut groups: Vec<(&Tool, String, bool, Vec<String>)> = Vec::new();
        for arg in filled.open.iter().map(|o| &o.arg) {
            let id = args::names_an_id(arg, self.lex);
            if !id && !self.lex.looked_up_args.contains(&args::last_name_word(arg)) {
                continue;
            }
            // A name is looked up only by a tool that makes it under its whole name.
            let Some((maker, prefix)) = self
                .maker_of(arg, &tool.name)
                .filter(|(_, prefix)| id || prefix.is_empty())
            else {
                continue;
            };
            match groups
                .iter_mut()
                .find(|(m, p, ..)| m.name == maker.name && *p == prefix)
            {
                Some((.., args)) => args.push(arg.clone()),
                None => groups.push((maker, prefix, id, vec![arg.clone()])),
            }
        }
        groups
            .into_iter()
            .map(|(maker, prefix, id, answers)| {
                let own = Inputs {
                    from_step: None,
                    own_words: self.index.own_words(&maker.name),
                    own_name: self.index.name_stems(&maker.name),
                    ..*inputs
                };
                let specs = self.index.arg_specs(&maker.name);
                let mut lf = args::fill(maker, specs, &own, self.lex);
                let focus = if prefix.is_empty() {
                    args::proper_run(inputs.clause, inputs.request)
                } else {
                    args::words_for(&prefix, tool, inputs, self.lex)
                };
                // An id is looked up by the name the clause gives; a name by what the
                // clause says of it, as the lookup's own arguments read it.
                let text_arg = specs
                    .and_then(|specs| args::free_text_arg(maker, specs))
                    .filter(|a| id || lf.open.iter().any(|o| o.arg == *a));
                if let (Some(focus), Some(name)) = (focus, text_arg) {
                    lf.answer(name, serde_json::Value::String(focus));
                }
                let mut draft = self.new_draft(
                    &maker.name,
                    consumer.clause,
                    consumer.score,
                    format!(
                        "looks up {} for {}: the request does not give it and only {} makes it",
                        answers.join(", "),
                        consumer.tool,
                        maker.name
                    ),
                );
                draft.args = std::mem::take(&mut lf.args);
                draft.after.clone_from(&consumer.after);
                Lookup {
                    draft,
                    answers,
                    questions: lf.questions().collect(),
                }
            })
            .collect()
    }

    /// The one tool (not `consumer`) that makes what `arg` is named after, by the closest
    /// naming any tool has (see [`args::made_for`]), with the words before the product.
    fn maker_of(&self, arg: &str, consumer: &str) -> Option<(&Tool, String)> {
        let mut best: Vec<(u8, &Tool, String)> = Vec::new();
        for t in self.catalog.tools().iter().filter(|t| t.name != consumer) {
            let Some((level, prefix)) = t
                .produces
                .iter()
                .filter_map(|k| args::made_for(arg, k))
                .max()
            else {
                continue;
            };
            if best.first().is_none_or(|b| level > b.0) {
                best.clear();
            }
            if best.first().is_none_or(|b| level == b.0) {
                best.push((level, t, prefix));
            }
        }
        match best.as_slice() {
            [(_, t, prefix)] => Some((t, prefix.clone())),
            _ => None,
        }
    }
}

/// Places `lookups` before the draft at `at`, which becomes their consumer: its open
/// arguments they answer take their outputs and lose their questions. Returns the
/// lookups' own questions.
fn take_lookups(
    drafts: &mut Vec<Draft>,
    at: usize,
    lookups: Vec<Lookup>,
    filled: &mut args::Filled,
) -> Vec<String> {
    make_room(drafts, at, lookups.len());
    let mut questions = Vec::new();
    let mut placed = Vec::new();
    for (i, l) in lookups.into_iter().enumerate() {
        for arg in &l.answers {
            filled.answer(arg, args::reference(&args::step_id(at + i)));
        }
        filled.linked.push(at + i);
        questions.extend(l.questions);
        placed.push(l.draft);
    }
    drafts.splice(at..at, placed);
    questions
}

/// Makes draft `j` one draft per value of `name`; later drafts that consumed or
/// followed it consume or follow every copy.
fn fan_out(drafts: &mut Vec<Draft>, j: usize, name: &str, values: &[serde_json::Value]) {
    let extra = values.len().saturating_sub(1);
    if extra == 0 {
        return;
    }
    make_room(&mut drafts[j + 1..], j + 1, extra);
    for later in drafts.iter_mut().skip(j + 1) {
        for list in [&mut later.inputs, &mut later.after] {
            if list.contains(&j) {
                list.extend(j + 1..=j + extra);
            }
        }
    }
    let base = drafts[j].clone();
    let copies = values.iter().map(|v| {
        let mut d = base.clone();
        d.args.insert(name.to_string(), v.clone());
        d
    });
    drafts.splice(j..=j, copies);
}
