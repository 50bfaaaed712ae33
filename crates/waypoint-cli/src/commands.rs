//! One function per command.

use std::io::{IsTerminal as _, Write as _};
use std::process::ExitCode;

use anyhow::{Context as _, Result, bail};
use waypoint_app::History;
use waypoint_catalog::{Catalog, CatalogError, Loaded};
use waypoint_core::render;
use waypoint_protocol::{EvalReport, Understanding};

use crate::cli::{
    CatalogCommand, Cli, Command, EvalArgs, ForgetArgs, Format, Global, HistoryArgs,
    HistoryCommand, PlanArgs, RequestArgs,
};
use crate::report;
use crate::running;
use crate::setup::{engine, open, runtime};

pub fn run(cli: &Cli) -> Result<ExitCode> {
    match &cli.command {
        Command::Plan(args) => plan(&cli.global, args),
        Command::Route(args) => route(&cli.global, args),
        Command::Understand(args) => understand(&cli.global, args),
        Command::Eval(args) => eval(&cli.global, args),
        Command::Train(args) => crate::training::train(&cli.global, args),
        Command::Calibrate(args) => crate::training::calibrate(&cli.global, args),
        Command::Catalog(CatalogCommand::Check { strict, json }) => {
            check(&cli.global, *strict, *json)
        }
        Command::Plans(crate::cli::PlansCommand::Check { json }) => check(&cli.global, true, *json),
        Command::Catalog(CatalogCommand::Show { json }) => show(&cli.global, *json),
        Command::History(args) => list_history(&cli.global, args),
        Command::Forget(args) => forget(&cli.global, args),
        Command::Run(args) => running::run(&cli.global, args),
        Command::Resume(args) => running::resume(&cli.global, args),
        Command::Runs(args) => running::runs(&cli.global, args),
        Command::Serve(args) => crate::serving::serve(&cli.global, args),
        Command::Plans(cmd) => running::plans(&cli.global, cmd),
        Command::Catalog(CatalogCommand::Import { mcp, out }) => {
            running::import(&cli.global, mcp, out.as_ref())
        }
        Command::Config(cmd) => crate::configuring::config(&cli.global, cmd),
    }
}

fn load_catalog(global: &Global) -> Result<Catalog> {
    let (catalog, _, notices) = crate::setup::setup(global)?.catalog()?;
    crate::setup::say(&notices);
    Ok(catalog)
}

pub(crate) fn request_text(raw: &str) -> Result<String> {
    if raw == "-" {
        let s = waypoint_catalog::limited::read_stream(
            std::io::stdin().lock(),
            waypoint_catalog::limited::MAX_INPUT_BYTES,
        )
        .context("cannot read the request from standard input")?;
        return Ok(s.trim().to_string());
    }
    Ok(raw.to_string())
}

pub(crate) fn context(raw: Option<&str>) -> Result<Option<serde_json::Value>> {
    let Some(raw) = raw else { return Ok(None) };
    let (text, origin) = match raw.strip_prefix('@') {
        Some(path) => (
            waypoint_catalog::limited::read_file(path, waypoint_catalog::limited::MAX_INPUT_BYTES)
                .with_context(|| format!("cannot read context file `{path}`"))?,
            format!("context file `{path}`"),
        ),
        None => (raw.to_string(), "`--context`".to_string()),
    };
    let value = serde_json::from_str(&text).with_context(|| {
        format!(
            "{origin} is not valid JSON; pass an object such as '{{\"paste\": \"…\"}}' or @FILE"
        )
    })?;
    Ok(Some(value))
}

pub(crate) fn print_json(value: &impl serde::Serialize) -> Result<()> {
    let mut out = std::io::stdout().lock();
    let written = serde_json::to_writer_pretty(&mut out, value)
        .map_err(std::io::Error::from)
        .and_then(|()| writeln!(out));
    match written {
        // A closed pipe (`| head`) is the reader's choice, not an error.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => Ok(other?),
    }
}

fn color_wanted() -> bool {
    // anstream strips styles when stdout is not a terminal or NO_COLOR is set.
    true
}

fn plan(global: &Global, args: &PlanArgs) -> Result<ExitCode> {
    let rt = runtime()?;
    let app = open(global, &rt, false)?;
    let request = request_text(&args.request.request)?;
    let ctx = context(args.request.context.as_deref())?;
    let plan = rt.block_on(async {
        let plan = app.plan(&global.caller, &request, ctx.as_ref()).await;
        app.close().await;
        plan
    })?;
    if args.specialists {
        let view = app.engine().specialist_plan(&request, &plan);
        if args.request.json || args.format == Some(Format::Json) {
            print_json(&view)?;
        } else {
            print_specialists(&view)?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    let format = match (args.format, args.request.json) {
        (Some(f), _) => f,
        (None, true) => Format::Json,
        (None, false) => Format::Text,
    };
    match format {
        Format::Json => print_json(&plan)?,
        Format::Text => {
            let mut out = anstream::stdout();
            write!(out, "{}", render::text(&plan, color_wanted()))?;
        }
        Format::Mermaid => print!("{}", render::mermaid(&plan)),
        Format::Dot => print!("{}", render::dot(&plan)),
    }
    Ok(ExitCode::SUCCESS)
}

fn list_history(global: &Global, args: &HistoryArgs) -> Result<ExitCode> {
    let rt = runtime()?;
    let app = open(global, &rt, false)?;
    let now = waypoint_store::now_unix();
    let (filter, json) = match &args.show {
        Some(HistoryCommand::Show { intent_sha, json }) => (
            waypoint_store::HistoryFilter {
                intent_sha: Some(intent_sha.clone()),
                ..waypoint_store::HistoryFilter::default()
            },
            *json,
        ),
        None => {
            let outcome = match &args.outcome {
                Some(o) => Some(waypoint_store::Outcome::parse(o).with_context(|| {
                    format!("unknown outcome `{o}`; use planned, ok, failed, limit or accepted")
                })?),
                None => None,
            };
            let since = match &args.since {
                Some(d) => Some(now - waypoint_app::limits::parse_age(d)?),
                None => None,
            };
            let limit = (!args.plans).then_some(args.limit);
            (
                waypoint_store::HistoryFilter {
                    intent_sha: None,
                    tool: args.tool.clone(),
                    outcome,
                    since,
                    limit,
                    after: waypoint_app::contract::cursor(args.cursor.as_deref())?,
                },
                args.json,
            )
        }
    };
    let grouped = args.plans && args.show.is_none();
    let history = rt.block_on(async {
        let h = app.history(&global.caller, &filter, grouped).await;
        app.close().await;
        h
    })?;
    match history {
        h if json => print_json(&h)?,
        History::Plans(p) => print_plans(&p.plans, &global.caller)?,
        History::Rows(page) => {
            print_rows(&page.rows, &global.caller)?;
            if let Some(next) = page.next_cursor {
                eprintln!("more: waypoint history --cursor {next}");
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// History grouped by request: counts, outcomes and each tool sequence, the learned
/// one marked.
fn print_plans(plans: &[waypoint_store::MyPlan], caller: &str) -> Result<()> {
    let mut out = anstream::stdout();
    for p in plans {
        let outcomes: Vec<String> = p.outcomes.iter().map(|(k, v)| format!("{k} {v}")).collect();
        writeln!(
            out,
            "\x1b[1m{}\x1b[0m  {} plans ({})",
            p.intent_sha,
            p.count,
            outcomes.join(", ")
        )?;
        for seq in &p.sequences {
            let mark = if p.stable.as_ref() == Some(&seq.tools) {
                "  ← learned"
            } else {
                ""
            };
            writeln!(
                out,
                "    {:>3}×  {}{mark}",
                seq.count,
                seq.tools.join(" → ")
            )?;
        }
    }
    if plans.is_empty() {
        writeln!(out, "no plan history for caller `{caller}`")?;
    }
    Ok(())
}

fn print_rows(rows: &[waypoint_store::HistoryRow], caller: &str) -> Result<()> {
    let mut out = anstream::stdout();
    for r in rows {
        let tools: Vec<&str> = r.steps.iter().map(|s| s.tool.as_str()).collect();
        writeln!(
            out,
            "{}  {:<7} {:<15} {:<13} {}",
            r.intent_sha,
            r.outcome.as_str(),
            r.complexity,
            r.planner,
            tools.join(" → ")
        )?;
    }
    if rows.is_empty() {
        writeln!(out, "no plan history for caller `{caller}`")?;
    }
    Ok(())
}

fn forget(global: &Global, args: &ForgetArgs) -> Result<ExitCode> {
    let what = if args.all {
        waypoint_store::Forget::All
    } else if let Some(d) = &args.older_than {
        waypoint_store::Forget::OlderThan(
            waypoint_store::now_unix() - waypoint_app::limits::parse_age(d)?,
        )
    } else if let Some(sha) = &args.intent {
        waypoint_store::Forget::Intent(sha.clone())
    } else {
        bail!("say what to forget: `--all`, `--older-than DURATION` or `--intent SHA`");
    };
    let rt = runtime()?;
    let app = open(global, &rt, false)?;
    let n = rt.block_on(async {
        let n = app.forget(&global.caller, &what).await;
        app.close().await;
        n
    })?;
    if args.json {
        print_json(&waypoint_app::contract::Forgotten { forgotten: n })?;
        return Ok(ExitCode::SUCCESS);
    }
    eprintln!(
        "forgot {n} plan{} of caller `{}`",
        if n == 1 { "" } else { "s" },
        global.caller
    );
    Ok(ExitCode::SUCCESS)
}

fn print_specialists(view: &waypoint_protocol::SpecialistPlan) -> Result<()> {
    let mut out = anstream::stdout();
    let order: Vec<String> = view
        .priority_order
        .iter()
        .map(|p| match p {
            waypoint_protocol::Priority::One(id) => id.clone(),
            waypoint_protocol::Priority::Parallel { parallel } => {
                format!("[{}]", parallel.join(" ∥ "))
            }
        })
        .collect();
    writeln!(out, "\x1b[1mpriority\x1b[0m  {}", order.join(" → "))?;
    writeln!(out, "\x1b[1mtask\x1b[0m      {}", view.refined_task)?;
    for (kind, values) in &view.extracted_context {
        writeln!(out, "\x1b[1mcontext\x1b[0m   {kind}: {}", values.join(", "))?;
    }
    for (id, text) in &view.instructions {
        writeln!(out, "\x1b[36m{id}\x1b[0m: {text}")?;
    }
    if view.fallback {
        writeln!(out, "\x1b[33m(no specialist fits; fell back)\x1b[0m")?;
    }
    Ok(())
}

fn route(global: &Global, args: &RequestArgs) -> Result<ExitCode> {
    let engine = engine(global)?;
    let request = request_text(&args.request)?;
    let ctx = context(args.context.as_deref())?;
    let reports = engine.route(&request, ctx.as_ref())?;
    if args.json {
        print_json(&waypoint_app::Routes { clauses: reports })?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut out = anstream::stdout();
    for r in &reports {
        writeln!(out, "\x1b[1m“{}”\x1b[0m", r.clause)?;
        match &r.recommendation {
            Some(c) => writeln!(
                out,
                "  → \x1b[36m{}\x1b[0m ({:?}, score {:.2}) — {}",
                c.id,
                c.kind,
                c.score,
                c.why.join(", ")
            )?,
            None => writeln!(
                out,
                "  \x1b[31m✗ gap\x1b[0m: {}",
                r.gap_warning.as_deref().unwrap_or_default()
            )?,
        }
        if !r.suggested_args.is_empty() {
            writeln!(
                out,
                "    args {}",
                serde_json::Value::Object(r.suggested_args.clone())
            )?;
        }
        for a in &r.alternatives {
            writeln!(
                out,
                "    \x1b[2m{:.2}  {} ({:?})\x1b[0m",
                a.score, a.id, a.kind
            )?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn understand(global: &Global, args: &RequestArgs) -> Result<ExitCode> {
    let engine = engine(global)?;
    let request = request_text(&args.request)?;
    let ctx = context(args.context.as_deref())?;
    let u = engine.understand(&request, ctx.as_ref())?;
    if args.json {
        print_json(&u)?;
    } else {
        print_understanding(&u)?;
    }
    Ok(ExitCode::SUCCESS)
}

fn print_understanding(u: &Understanding) -> Result<()> {
    let mut out = anstream::stdout();
    let mut goals = u.goals.iter();
    for c in &u.clauses {
        writeln!(
            out,
            "\x1b[1m{}. “{}”\x1b[0m  [{}..{}]",
            c.index + 1,
            c.text,
            c.span.start,
            c.span.end
        )?;
        match c.role {
            waypoint_protocol::ClauseRole::Context => {
                writeln!(out, "   context (material for the other clauses)")?;
                continue;
            }
            waypoint_protocol::ClauseRole::Declined => {
                writeln!(out, "   declined (says what not to do: no step)")?;
                continue;
            }
            waypoint_protocol::ClauseRole::Action => {}
        }
        if let Some(g) = goals.next() {
            writeln!(
                out,
                "   intent \x1b[36m{}\x1b[0m · entity {} · artifact {} · scope {} · confidence {:.2}",
                g.intent,
                g.entity.as_deref().unwrap_or("-"),
                g.artifact.as_deref().unwrap_or("-"),
                g.scope.as_deref().unwrap_or("-"),
                g.confidence
            )?;
            writeln!(out, "   \x1b[2m{}\x1b[0m", g.explanation)?;
            for a in &g.ambiguities {
                writeln!(
                    out,
                    "   \x1b[2mor {} / {} ({:.2})\x1b[0m",
                    a.intent,
                    a.entity.as_deref().unwrap_or("-"),
                    a.confidence
                )?;
            }
        }
    }
    let ex = &u.extracted;
    for kind in waypoint_protocol::ExtractedKind::ALL {
        let values = ex.get(kind);
        if !values.is_empty() {
            writeln!(out, "{:>9}: {}", kind.as_str(), values.join(", "))?;
        }
    }
    Ok(())
}

fn eval(global: &Global, args: &EvalArgs) -> Result<ExitCode> {
    let name = args.cases.display().to_string();
    let text = waypoint_catalog::limited::read_file(
        &args.cases,
        waypoint_catalog::limited::MAX_INPUT_BYTES,
    )
    .with_context(|| format!("cannot read cases file `{name}`"))?;
    let cases = waypoint_eval::read_cases(&text, &name)?;
    let rt = runtime()?;
    // Evaluation never touches history.
    let app = open(&no_store(global), &rt, false)?;
    drop(rt);
    let total = cases.len();
    let asks_model = app.snapshot().planner.asks_model();
    // A model takes seconds per case, so progress shows early; the engine alone is fast.
    let every = if asks_model { 1 } else { 250 };
    let show_progress =
        !args.json && std::io::stderr().is_terminal() && (every == 1 || total >= 500);
    let progress = |done: usize| {
        if show_progress && (done.is_multiple_of(every) || done == total) {
            eprint!("\rplanned {done}/{total}");
            if done == total {
                eprintln!();
            }
        }
    };
    let evaluation = app.evaluate(&cases, progress)?;
    if let Some(tally) = &evaluation.model {
        say_model(tally);
    }
    let report = evaluation.report;
    if args.json {
        print_json(&report)?;
    } else {
        print_table(&report)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// A global setup without a store, for commands that must not touch history.
pub(crate) fn no_store(global: &Global) -> Global {
    let mut g = global.clone();
    g.store = Some("none".into());
    g
}

/// What the model did over an evaluation, printed to stderr so `--json` stays the
/// report object of docs/contracts.md.
fn say_model(t: &waypoint_app::evaluate::ModelTally) {
    if t.asked == 0 {
        eprintln!("model: not asked (the deterministic planner was confident every time)");
        return;
    }
    eprintln!(
        "model: asked {} · answered {} · repairs {} · fallbacks {} · calls {} · tokens {} prompt + {} completion · latency p50 {} ms, max {} ms{}",
        t.asked,
        t.answered,
        t.repairs,
        t.fallbacks,
        t.calls,
        t.prompt_tokens,
        t.completion_tokens,
        t.latency_at(1, 2),
        t.latency_at(1, 1),
        t.cost_usd
            .map_or(String::new(), |c| format!(" · est. ${c:.4}"))
    );
}

/// Which planner answered how many cases and how well, and what asking the model did.
fn print_planner_split(out: &mut impl std::io::Write, r: &EvalReport) -> Result<()> {
    use waypoint_protocol::ModelEffect::{Broke, Changed, Fixed, Same};
    if r.by_planner.is_empty() {
        return Ok(());
    }
    let f = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.3}"));
    writeln!(out, "\n\x1b[1manswered by\x1b[0m")?;
    for (planner, m) in &r.by_planner {
        writeln!(
            out,
            "  {planner:<14} {:>5} cases · sequence {} · unknown {} · node F1 {}",
            m.cases,
            f(m.sequence_accuracy),
            f(m.unknown_accuracy),
            f(m.node_f1)
        )?;
    }
    if r.model_cases.is_empty() {
        return Ok(());
    }
    let count =
        |e: waypoint_protocol::ModelEffect| r.model_cases.iter().filter(|c| c.effect == e).count();
    writeln!(
        out,
        "\n\x1b[1mmodel asked\x1b[0m {} cases · fixed {} · broke {} · changed {} · same {}",
        r.model_cases.len(),
        count(Fixed),
        count(Broke),
        count(Changed),
        count(Same)
    )?;
    for c in r.model_cases.iter().filter(|c| c.effect != Same) {
        let effect = match c.effect {
            Fixed => "fixed",
            Broke => "broke",
            Changed | Same => "changed",
        };
        writeln!(
            out,
            "  {:<14} {effect:<8} [{}] → [{}] ({})",
            c.id,
            c.deterministic.join(", "),
            c.answered.join(", "),
            c.planner
        )?;
    }
    Ok(())
}

fn print_table(r: &EvalReport) -> Result<()> {
    let mut out = anstream::stdout();
    writeln!(out, "\x1b[1mcases\x1b[0m {}", r.cases)?;
    let rows = [
        ("goal_accuracy", r.goal_accuracy),
        ("sequence_accuracy", r.sequence_accuracy),
        ("set_accuracy", r.set_accuracy),
        ("node_f1", r.node_f1),
        ("edge_f1", r.edge_f1),
        ("complexity_accuracy", r.complexity_accuracy),
        ("unknown_accuracy", r.unknown_accuracy),
        ("in_scope_accuracy", r.in_scope_accuracy),
        ("oos_recall", r.oos_recall),
        ("ready_accuracy", r.ready_accuracy),
        ("extracted_recall", r.extracted_recall),
        ("arg_value_f1", r.arg_value_f1),
        ("order_accuracy", r.order_accuracy),
    ];
    for (name, value) in rows {
        match value {
            Some(v) => writeln!(out, "  {name:<20} {v:>6.3}")?,
            None => writeln!(out, "  {name:<20} {:>6}", "-")?,
        }
    }
    writeln!(
        out,
        "  {:<20} p50 {} µs · p99 {} µs",
        "latency", r.latency_us.p50, r.latency_us.p99
    )?;
    print_planner_split(&mut out, r)?;
    if !r.failures.is_empty() {
        writeln!(out, "\n\x1b[1mfailures\x1b[0m ({})", r.failures.len())?;
        for f in &r.failures {
            writeln!(
                out,
                "  {:<14} {:<20} expected {}  got {}",
                f.id, f.field, f.expected, f.got
            )?;
        }
    }
    Ok(())
}

/// `catalog check` and, `strict`, `plans check`: a plan document with a warning (a step
/// its safety level always refuses) loads, but cannot run as written.
fn check(global: &Global, strict: bool, json: bool) -> Result<ExitCode> {
    let (diagnostics, ok, summary) = match Catalog::from_paths(&global.catalog) {
        Ok(Loaded { warnings, .. }) if strict && !warnings.is_empty() => {
            let n = warnings.len();
            (
                warnings,
                false,
                format!("{n} warning{} found", if n == 1 { "" } else { "s" }),
            )
        }
        Ok(Loaded { catalog, warnings }) => {
            let mut summary = format!(
                "catalog ok: {} tools, {} pipelines, {} specialists, {} servers, {} evidence rules",
                catalog.tools().len(),
                catalog.pipelines().len(),
                catalog.specialists().len(),
                catalog.servers().len(),
                catalog.evidence().len()
            );
            if !catalog.plans().is_empty() {
                summary.push_str(&format!(", {} plan documents", catalog.plans().len()));
            }
            (warnings, true, summary)
        }
        Err(CatalogError::Invalid { diagnostics }) => {
            let n = diagnostics.iter().filter(|d| d.is_error()).count();
            (
                diagnostics,
                false,
                format!("{n} error{} found", if n == 1 { "" } else { "s" }),
            )
        }
        Err(other) => bail!(other),
    };
    if json {
        print_json(&serde_json::json!({"ok": ok, "diagnostics": diagnostics}))?;
    } else {
        for d in &diagnostics {
            report::diagnostic(d);
        }
        let mut err = anstream::stderr();
        if ok {
            writeln!(err, "\x1b[32m{summary}\x1b[0m")?;
        } else {
            writeln!(
                err,
                "\x1b[31m{summary}\x1b[0m; fix them and run `waypoint {}` again",
                if strict {
                    "plans check"
                } else {
                    "catalog check"
                }
            )?;
        }
    }
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn show(global: &Global, json: bool) -> Result<ExitCode> {
    let catalog = load_catalog(global)?;
    if json {
        print_json(&serde_json::json!({
            "tools": catalog.tools(),
            "pipelines": catalog.pipelines(),
            "specialists": catalog.specialists(),
            "servers": catalog.servers(),
            "evidence": catalog.evidence(),
            "lexicon": catalog.lexicon(),
        }))?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut out = anstream::stdout();
    writeln!(out, "\x1b[1mtools\x1b[0m ({})", catalog.tools().len())?;
    for t in catalog.tools() {
        writeln!(
            out,
            "  \x1b[36m{:<24}\x1b[0m {:<11} {}",
            t.name,
            format!("{:?}", t.effects).to_lowercase(),
            t.description
        )?;
    }
    writeln!(
        out,
        "\x1b[1mpipelines\x1b[0m ({})",
        catalog.pipelines().len()
    )?;
    for p in catalog.pipelines() {
        writeln!(
            out,
            "  \x1b[36m{:<30}\x1b[0m {} — {}",
            p.id,
            p.steps.join(" → "),
            p.description
        )?;
    }
    if !catalog.specialists().is_empty() {
        writeln!(
            out,
            "\x1b[1mspecialists\x1b[0m ({})",
            catalog.specialists().len()
        )?;
        for s in catalog.specialists() {
            writeln!(
                out,
                "  \x1b[36m{:<16}\x1b[0m {} [{}]",
                s.id,
                s.description,
                s.tools.join(", ")
            )?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
