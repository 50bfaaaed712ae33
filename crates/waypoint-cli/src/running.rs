//! `waypoint run`, `resume`, `runs`, `plans` and `catalog import --mcp`: the run
//! operations of the application, with their flags parsed and their reports rendered.

use std::fmt::Write as _;
use std::io::{IsTerminal as _, Write as _};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anstyle::{AnsiColor, Style};
use anyhow::{Context as _, Result, bail};
use waypoint_app::{App, RunOptions};
use waypoint_protocol::{Plan, RunEvent, RunReport, RunStatus, StepStatus};
use waypoint_run::{Approvals, Asking, Decisions, EventSink};

use crate::cli::{EventsFormat, Global, PlansCommand, ResumeArgs, RunArgs, RunOutput, RunsArgs};
use crate::setup::{limit_overrides, open, runtime};

const OK: Style = AnsiColor::Green.on_default().bold();
const BAD: Style = AnsiColor::Red.on_default().bold();
const WAIT: Style = AnsiColor::Yellow.on_default().bold();
const DIM: Style = Style::new().dimmed();

/// The exit status of a run's final status.
pub fn exit_code(status: RunStatus) -> ExitCode {
    ExitCode::from(match status {
        RunStatus::Ok => 0,
        RunStatus::Failed | RunStatus::Running | RunStatus::Queued | RunStatus::Cancelled => 1,
        RunStatus::Limit => 3,
        RunStatus::NeedsInput => 4,
        RunStatus::NeedsHuman => 5,
        RunStatus::NeedsApproval => 6,
    })
}

/// How a run goes from the command line: `--workdir`, the limit flags, events on the
/// terminal or as JSON lines, and a person to ask when both ends are a terminal.
fn run_options(output: &RunOutput, flags: &crate::cli::LimitArgs) -> Result<RunOptions> {
    let asking = if std::io::stdin().is_terminal() && std::io::stderr().is_terminal() {
        Asking::Terminal
    } else {
        Asking::Nobody
    };
    let approved = if output.approve.yes {
        Approvals::all()
    } else {
        Approvals {
            all: false,
            steps: output
                .approve
                .approve
                .iter()
                .map(|s| s.trim().to_string())
                .collect(),
        }
    };
    Ok(RunOptions {
        workdir: output.workdir.clone(),
        limits: limit_overrides(flags)?,
        events: sink(output),
        asking: Some(asking),
        approved,
    })
}

/// Prints events as they come: JSON lines, or progress on a terminal.
fn sink(output: &RunOutput) -> Option<EventSink> {
    if output.events == Some(EventsFormat::Jsonl) {
        return Some(Arc::new(|e: &RunEvent| {
            if let Ok(line) = serde_json::to_string(e) {
                let mut out = std::io::stdout().lock();
                let _ = writeln!(out, "{line}");
                let _ = out.flush();
            }
        }));
    }
    if !std::io::stderr().is_terminal() || output.json {
        return None;
    }
    Some(Arc::new(|e: &RunEvent| {
        let mut err = anstream::stderr();
        match e {
            RunEvent::RunStarted {
                run_id,
                steps,
                resumed,
                ..
            } => {
                let verb = if *resumed { "resuming" } else { "running" };
                let _ = writeln!(err, "{DIM}{verb} {run_id}: {steps} steps{DIM:#}");
            }
            RunEvent::StepStarted { key, tool, .. } => {
                let _ = writeln!(err, "{DIM}  … {key} {tool}{DIM:#}");
            }
            RunEvent::StepFinished { step, .. } => {
                let _ = writeln!(err, "  {}", step_line(step));
            }
            RunEvent::Replanned { attempt, .. } => {
                let _ = writeln!(err, "{WAIT}  replanning{WAIT:#}: {}", attempt.digest);
            }
            RunEvent::RunFinished { .. } => {}
        }
    }))
}

fn step_line(s: &waypoint_protocol::StepRun) -> String {
    let (style, mark) = match s.status {
        StepStatus::Ok => (OK, "ok"),
        StepStatus::Skipped => (DIM, "skipped"),
        StepStatus::Running => (WAIT, "running"),
        StepStatus::Interrupted => (WAIT, "interrupted"),
        StepStatus::Failed => (BAD, "failed"),
    };
    let mut line = format!(
        "{style}{mark:>11}{style:#} {} {} {DIM}{} ms{}{DIM:#}",
        s.key,
        s.tool,
        s.latency_ms,
        if s.replayed { ", from the journal" } else { "" }
    );
    if let Some(e) = &s.error {
        let _ = write!(line, "\n              {e}");
    }
    line
}

fn print_report(r: &RunReport, json: bool) -> Result<()> {
    if json {
        return crate::commands::print_json(r);
    }
    let style = match r.status {
        RunStatus::Ok => OK,
        RunStatus::NeedsInput
        | RunStatus::NeedsApproval
        | RunStatus::NeedsHuman
        | RunStatus::Running
        | RunStatus::Queued => WAIT,
        RunStatus::Failed | RunStatus::Limit | RunStatus::Cancelled => BAD,
    };
    let mut out = anstream::stdout();
    writeln!(
        out,
        "{style}{}{style:#} {} — {}",
        r.status.as_str(),
        r.run_id,
        r.message
    )?;
    for s in &r.steps {
        writeln!(out, "{}", step_line(s))?;
        if s.status == StepStatus::Ok
            && let Some(o) = &s.output
        {
            let text = waypoint_run::refs::text_of(o);
            let short: String = text.chars().take(300).collect();
            let more = if text.chars().count() > 300 {
                " …"
            } else {
                ""
            };
            for l in short.lines().take(6) {
                writeln!(out, "              {DIM}│{DIM:#} {l}")?;
            }
            if !more.is_empty() {
                writeln!(out, "              {DIM}│ …{DIM:#}")?;
            }
        }
    }
    for q in &r.questions {
        writeln!(out, "{WAIT}question{WAIT:#} {}: {}", q.step_id, q.text)?;
        let how = match q.expects.as_str() {
            "answer" => format!("waypoint resume {} --answer {}=VALUE", r.run_id, q.key),
            "retry_or_done" => format!(
                "waypoint resume {id} --retry {k}   (or --done {k})",
                id = r.run_id,
                k = q.key
            ),
            "approve" => format!("waypoint resume {} --approve {}", r.run_id, q.key),
            _ => continue,
        };
        writeln!(out, "{DIM}  answer with: {how}{DIM:#}")?;
    }
    for a in &r.attempts {
        writeln!(
            out,
            "{DIM}tried plan {} ({}): {}{DIM:#}",
            a.generation,
            a.tools.join(" → "),
            a.digest
        )?;
    }
    let t = &r.totals;
    writeln!(
        out,
        "{DIM}{} steps, {} tool calls, ${:.4}, {} ms, {} replans{}{DIM:#}",
        t.steps,
        t.tool_calls,
        t.cost_usd,
        t.wall_ms,
        t.replans,
        if t.prompt_tokens + t.completion_tokens > 0 {
            format!(", {}+{} tokens", t.prompt_tokens, t.completion_tokens)
        } else {
            String::new()
        }
    )?;
    Ok(())
}

fn read_plan(path: &PathBuf) -> Result<Plan> {
    let text =
        waypoint_catalog::limited::read_file(path, waypoint_catalog::limited::MAX_INPUT_BYTES)
            .with_context(|| format!("cannot read plan `{}`", path.display()))?;
    waypoint_protocol::parse_plan(&text).map_err(|e| {
        anyhow::anyhow!(
            "plan `{}` {e}; a plan is the JSON `waypoint plan --json` prints (docs/contracts.md, Plan JSON)",
            path.display(),
        )
    })
}

pub fn run(global: &Global, args: &RunArgs) -> Result<ExitCode> {
    let ctx = crate::commands::context(args.context.as_deref())?;
    let options = run_options(&args.output, &args.limits)?;
    let rt = runtime()?;
    if args.dry_run {
        return dry_run(global, args, &rt, ctx.as_ref(), &options);
    }
    let app = open(global, &rt, true)?;
    let caller = &global.caller;
    let report = match (&args.plan, &args.request) {
        (Some(path), _) => {
            let plan = read_plan(path)?;
            let request = plan
                .understanding()
                .clauses
                .iter()
                .map(|c| c.text.as_str())
                .collect::<Vec<_>>()
                .join(" ");
            finished(
                &rt,
                &app,
                app.run_plan(caller, plan, Some(request), ctx, &options),
            )
        }
        (None, Some(raw)) => {
            let request = crate::commands::request_text(raw)?;
            if args.specialists {
                finished(
                    &rt,
                    &app,
                    app.run_specialists(caller, &request, ctx, &options),
                )
            } else {
                finished(&rt, &app, app.run_request(caller, &request, ctx, &options))
            }
        }
        (None, None) => bail!("give a request or --plan FILE"),
    }?;
    finish(&report, &args.output)
}

/// `run --dry-run`: the plan as it would run, and nothing called.
fn dry_run(
    global: &Global,
    args: &RunArgs,
    rt: &tokio::runtime::Runtime,
    ctx: Option<&serde_json::Value>,
    options: &RunOptions,
) -> Result<ExitCode> {
    let app = open(global, rt, false)?;
    let dry = rt.block_on(async {
        let plan = match (&args.plan, &args.request) {
            (Some(path), _) => read_plan(path),
            (None, Some(raw)) => {
                let request = crate::commands::request_text(raw)?;
                app.plan(&global.caller, &request, ctx)
                    .await
                    .map_err(anyhow::Error::from)
            }
            (None, None) => Err(anyhow::anyhow!("give a request or --plan FILE")),
        };
        let dry = plan.map(|p| app.dry_run(p, &options.approved));
        app.close().await;
        dry
    })?;
    if args.output.json {
        crate::commands::print_json(&dry)?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut out = anstream::stdout();
    writeln!(
        out,
        "{DIM}dry run of {} (approval bar: {}); nothing was called{DIM:#}",
        dry.plan.plan_id(),
        dry.bar.as_str()
    )?;
    for s in &dry.steps {
        let wait = if s.waits_for_approval {
            format!("  {WAIT}waits for approval{WAIT:#}")
        } else {
            String::new()
        };
        writeln!(
            out,
            "{:>4} {} {DIM}({}){DIM:#}{wait}\n       args: {}",
            s.step_id, s.tool, s.effects, s.args
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Drives one of the application's run operations to its end and closes the store.
fn finished(
    rt: &tokio::runtime::Runtime,
    app: &App,
    work: impl Future<Output = Result<RunReport, waypoint_app::AppError>>,
) -> Result<RunReport> {
    Ok(rt.block_on(async {
        let r = work.await;
        app.close().await;
        r
    })?)
}

fn finish(report: &RunReport, output: &RunOutput) -> Result<ExitCode> {
    // With --events the final report is the last event already.
    if output.events.is_none() {
        print_report(report, output.json)?;
    }
    Ok(exit_code(report.status))
}

pub fn resume(global: &Global, args: &ResumeArgs) -> Result<ExitCode> {
    let mut decisions = Decisions::default();
    for a in &args.answer {
        let (k, v) = a
            .split_once('=')
            .with_context(|| format!("--answer `{a}` is not STEP=TEXT or STEP.ARG=VALUE"))?;
        decisions
            .answers
            .insert(k.trim().to_string(), v.to_string());
    }
    decisions.retry = args.retry.iter().cloned().collect();
    decisions.done = args.done.iter().cloned().collect();
    if let Some(both) = decisions.retry.intersection(&decisions.done).next() {
        bail!("`{both}` is given to both --retry and --done; it either happened or it did not");
    }
    let raise = limit_overrides(&args.limits)?;
    // The limits the run started with stay; the flags only raise them.
    let options = RunOptions {
        limits: waypoint_app::LimitOverrides::default(),
        ..run_options(&args.output, &args.limits)?
    };
    let rt = runtime()?;
    let app = open(global, &rt, true)?;
    let report = finished(
        &rt,
        &app,
        app.resume(&global.caller, &args.run_id, decisions, &raise, &options),
    )?;
    finish(&report, &args.output)
}

pub fn runs(global: &Global, args: &RunsArgs) -> Result<ExitCode> {
    let rt = runtime()?;
    let app = open(global, &rt, false)?;
    if let Some(crate::cli::RunsCommand::Show { run_id, json }) = &args.show {
        if *json {
            // The same answer as GET /v1/runs/{run_id}: the run and its report.
            let summary = rt.block_on(app.run_status(&global.caller, run_id))?;
            crate::commands::print_json(&summary)?;
        } else {
            let report = rt.block_on(app.run_report(&global.caller, run_id))?;
            print_report(&report, false)?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(crate::cli::RunsCommand::Cancel { run_id, json }) = &args.show {
        let summary = rt.block_on(app.cancel(&global.caller, run_id))?;
        if *json {
            crate::commands::print_json(&summary)?;
        } else {
            println!("cancelled {run_id}");
        }
        return Ok(ExitCode::SUCCESS);
    }
    let after = waypoint_app::contract::cursor(args.cursor.as_deref())?;
    let page = rt.block_on(async {
        let r = app.runs(&global.caller, after.as_ref(), args.limit).await;
        app.close().await;
        r
    })?;
    if args.json {
        crate::commands::print_json(&page)?;
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(next) = &page.next_cursor {
        eprintln!("more: waypoint runs --cursor {next}");
    }
    let runs = page.runs;
    let mut out = anstream::stdout();
    if runs.is_empty() {
        writeln!(out, "no runs yet for caller `{}`", global.caller)?;
    }
    for r in &runs {
        writeln!(
            out,
            "{:<22} {:<12} {}",
            r.run_id,
            r.status,
            r.report.as_ref().map_or("", |x| x.message.as_str())
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Writes a catalog of an MCP server's tools.
pub fn import(global: &Global, server: &str, out: Option<&PathBuf>) -> Result<ExitCode> {
    let rt = runtime()?;
    let app = open(&crate::commands::no_store(global), &rt, false)?;
    let cwd = std::env::current_dir()?;
    let (count, yaml) = rt.block_on(app.import_mcp(server, &cwd))?;
    match out {
        Some(path) => {
            std::fs::write(path, &yaml)
                .with_context(|| format!("cannot write `{}`", path.display()))?;
            eprintln!("wrote {count} tools of `{server}` to {}", path.display());
        }
        None => print!("{yaml}"),
    }
    Ok(ExitCode::SUCCESS)
}

pub fn plans(global: &Global, cmd: &PlansCommand) -> Result<ExitCode> {
    if let PlansCommand::Run {
        id,
        context,
        output,
        limits: flags,
    } = cmd
    {
        let ctx = crate::commands::context(context.as_deref())?;
        let options = run_options(output, flags)?;
        let rt = runtime()?;
        let app = open(global, &rt, true)?;
        let report = finished(
            &rt,
            &app,
            app.run_document(&global.caller, id, ctx, &options),
        )?;
        return finish(&report, output);
    }
    if let PlansCommand::Accept {
        request,
        plan,
        json,
    } = cmd
    {
        return accept(global, request, plan.as_ref(), *json);
    }
    let engine = crate::setup::engine(global)?;
    let catalog = engine.catalog();
    match cmd {
        PlansCommand::List { json } => {
            if *json {
                let rows: Vec<serde_json::Value> = catalog
                    .plans()
                    .iter()
                    .map(|p| {
                        serde_json::json!({
                            "id": p.uri, "intent": p.intent, "steps": p.steps.len(),
                            "ready": p.intent_clarity.ready(), "at": p.at.to_string(),
                        })
                    })
                    .collect();
                crate::commands::print_json(&rows)?;
                return Ok(ExitCode::SUCCESS);
            }
            let mut out = anstream::stdout();
            if catalog.plans().is_empty() {
                writeln!(
                    out,
                    "no plan documents loaded; put them under a catalog's plans/ folder"
                )?;
            }
            for p in catalog.plans() {
                let gate = if p.intent_clarity.ready() {
                    String::new()
                } else {
                    format!("  {WAIT}needs clarity{WAIT:#}")
                };
                writeln!(
                    out,
                    "{:<36} {} {DIM}({} steps, {}){DIM:#}{gate}",
                    p.uri,
                    p.intent,
                    p.steps.len(),
                    p.at
                )?;
            }
            Ok(ExitCode::SUCCESS)
        }
        PlansCommand::Show { id, json } => show_document(catalog, id, *json),
        PlansCommand::Check { .. } | PlansCommand::Run { .. } | PlansCommand::Accept { .. } => {
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// `waypoint plans show`: one plan document, as JSON or for a person.
fn show_document(catalog: &waypoint_catalog::Catalog, id: &str, json: bool) -> Result<ExitCode> {
    let doc = catalog
        .plan_doc(&waypoint_app::app::plan_ref(id)?)
        .map_err(|e| anyhow::anyhow!("{e}; `waypoint plans list` shows what is loaded"))?;
    if json {
        crate::commands::print_json(doc)?;
    } else {
        let mut out = anstream::stdout();
        writeln!(out, "{}  {DIM}{}{DIM:#}", doc.uri, doc.at)?;
        writeln!(out, "intent    {}", doc.intent)?;
        let c = &doc.intent_clarity;
        writeln!(
            out,
            "clarity   ambiguity {:.2}{}",
            c.ambiguity_score,
            if c.ready() { ", ready" } else { ", NOT ready" }
        )?;
        for q in &c.missing_criteria {
            writeln!(out, "          ? {q}")?;
        }
        writeln!(out, "steps")?;
        for (i, s) in doc.steps.iter().enumerate() {
            let line = serde_json::to_string(&s.step).unwrap_or_default();
            writeln!(out, "  {:>2}. {line}", i + 1)?;
        }
        for sc in &doc.success_criteria {
            writeln!(out, "success   {sc}")?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `waypoint plans accept`: the request's learned plan from now on.
fn accept(global: &Global, request: &str, plan: Option<&PathBuf>, json: bool) -> Result<ExitCode> {
    let plan = plan.map(read_plan).transpose()?;
    let rt = runtime()?;
    let app = open(global, &rt, false)?;
    let plan = rt.block_on(app.accept(&global.caller, request, plan))?;
    if json {
        crate::commands::print_json(&plan)?;
    } else {
        let tools: Vec<&str> = plan.steps().iter().map(|s| s.tool.as_str()).collect();
        let mut out = anstream::stdout();
        writeln!(
            out,
            "accepted {} for this request; `waypoint plan` serves it as learned until a run of it fails",
            tools.join(" → ")
        )?;
    }
    Ok(ExitCode::SUCCESS)
}
