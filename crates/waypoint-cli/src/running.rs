//! `waypoint run`, `resume`, `runs` and `catalog import --mcp`: the executor behind the
//! command line. Limits come from flags over `[run]` in waypoint.toml over defaults.

use std::fmt::Write as _;
use std::io::{IsTerminal as _, Write as _};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anstyle::{AnsiColor, Style};
use anyhow::{Context as _, Result, bail};
use waypoint_protocol::{Plan, RunEvent, RunReport, RunStatus, StepStatus};
use waypoint_run::{
    Asking, Decisions, EventSink, Limits, Recovery, Runner, Settings, Toolbox, specialists,
};
use waypoint_store::RunStore as _;

use crate::cli::{
    EventsFormat, Global, LimitArgs, PlansCommand, ResumeArgs, RunArgs, RunOutput, RunsArgs,
};
use crate::history::{self, Store};
use crate::planning::{Planning, RunSection};
use waypoint_catalog::plans::PlanRef;

const OK: Style = AnsiColor::Green.on_default().bold();
const BAD: Style = AnsiColor::Red.on_default().bold();
const WAIT: Style = AnsiColor::Yellow.on_default().bold();
const DIM: Style = Style::new().dimmed();

/// The exit status of a run's final status.
pub fn exit_code(status: RunStatus) -> ExitCode {
    ExitCode::from(match status {
        RunStatus::Ok => 0,
        RunStatus::Failed | RunStatus::Running | RunStatus::Queued => 1,
        RunStatus::Limit => 3,
        RunStatus::NeedsInput => 4,
        RunStatus::NeedsHuman => 5,
    })
}

/// Parses `30s`, `10m`, `500ms`, `2h` or a bare number of seconds into milliseconds.
pub fn parse_millis(text: &str, what: &str) -> Result<u64> {
    let t = text.trim();
    let (num, unit) = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .map_or((t, "s"), |i| t.split_at(i));
    let n: f64 = num.parse().with_context(|| {
        format!("{what} `{text}` is not a duration; write e.g. 30s, 10m, 500ms")
    })?;
    let factor = match unit {
        "ms" => 1.0,
        "s" => 1000.0,
        "m" => 60_000.0,
        "h" => 3_600_000.0,
        _ => bail!("{what} `{text}` has an unknown unit `{unit}`; use ms, s, m or h"),
    };
    let ms = n * factor;
    if !(1.0..1e12).contains(&ms) {
        bail!("{what} `{text}` is out of range");
    }
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "checked to lie in 1..1e12 above"
    )]
    Ok(ms.round() as u64)
}

/// `base` with the flags that were given; `None` when none were.
fn limits_over(base: &Limits, flags: &LimitArgs) -> Result<Option<Limits>> {
    let mut l = base.clone();
    let mut any = false;
    if let Some(v) = flags.max_steps {
        l.max_steps = v;
        any = true;
    }
    if let Some(v) = flags.max_tool_calls {
        l.max_tool_calls = v;
        any = true;
    }
    if let Some(v) = &flags.max_wall {
        l.max_wall_ms = parse_millis(v, "max_wall")?;
        any = true;
    }
    if let Some(v) = flags.max_usd {
        l.max_usd = v;
        any = true;
    }
    if let Some(v) = flags.max_replans {
        l.max_replans = v;
        any = true;
    }
    if let Some(v) = &flags.tool_timeout {
        l.tool_timeout_ms = parse_millis(v, "tool_timeout")?;
        any = true;
    }
    if let Some(v) = flags.concurrency {
        l.concurrency = v;
        any = true;
    }
    if !any {
        return Ok(None);
    }
    l.check().map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(Some(l))
}

/// Limits from defaults, then `[run]`, then flags.
fn limits(file: &RunSection, flags: &LimitArgs) -> Result<Limits> {
    // `[run]` has the flags' keys (and one more), so both layers go through one merge.
    let as_flags = LimitArgs {
        max_steps: file.max_steps,
        max_tool_calls: file.max_tool_calls,
        max_wall: file.max_wall.clone(),
        max_usd: file.max_usd,
        max_replans: file.max_replans,
        tool_timeout: file.tool_timeout.clone(),
        concurrency: file.concurrency,
    };
    let mut l = Limits::default();
    if let Some(v) = file.max_output_bytes {
        l.max_output_bytes = v;
    }
    let l = limits_over(&l, &as_flags)?.unwrap_or(l);
    let l = limits_over(&l, flags)?.unwrap_or(l);
    l.check().map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(l)
}

/// The limits a server's runs get: defaults, then `[run]` in waypoint.toml.
pub fn configured_limits(planning: &Planning) -> Result<Limits> {
    limits(&planning.run, &LimitArgs::default())
}

fn open_store(global: &Global, rt: &tokio::runtime::Runtime) -> Result<Arc<Store>> {
    match crate::commands::open_configured(global, rt)?? {
        Some(s) => Ok(Arc::new(s)),
        None => bail!(
            "runs are journaled in the store, and `--store none` turns it off; name one with `--store sqlite:PATH` or `--store postgres://…`"
        ),
    }
}

fn toolbox(
    planning: &Planning,
    store: &Arc<Store>,
    output: &RunOutput,
    limits: &Limits,
) -> Result<Toolbox<Store>> {
    let workdir = match &output.workdir {
        Some(d) => d.clone(),
        None => std::env::current_dir().context("cannot read the current directory")?,
    };
    let asking = if std::io::stdin().is_terminal() && std::io::stderr().is_terminal() {
        Asking::Terminal
    } else {
        Asking::Nobody
    };
    Ok(Toolbox::new(
        &workdir,
        planning.engine.catalog().servers(),
        store.clone(),
        limits.max_output_bytes,
    )
    .with_context(|| format!("cannot set up tools in {}", workdir.display()))?
    .with_model(planning.model())
    .with_asking(asking))
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
        StepStatus::Running | StepStatus::Interrupted => (WAIT, "interrupted"),
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
        RunStatus::NeedsInput | RunStatus::NeedsHuman | RunStatus::Running | RunStatus::Queued => {
            WAIT
        }
        RunStatus::Failed | RunStatus::Limit => BAD,
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
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read plan `{}`", path.display()))?;
    serde_json::from_str(&text).map_err(|e| {
        anyhow::anyhow!(
            "plan `{}` line {} column {}: {e}; a plan is the JSON `waypoint plan --json` prints (docs/contracts.md, Plan JSON)",
            path.display(),
            e.line(),
            e.column()
        )
    })
}

pub fn run(global: &Global, args: &RunArgs, planning: &Planning) -> Result<ExitCode> {
    let limits = limits(&planning.run, &args.limits)?;
    let ctx = crate::commands::context(args.context.as_deref())?;
    let (plan, request) = match (&args.plan, &args.request) {
        (Some(path), _) => {
            let plan = read_plan(path)?;
            let request = plan
                .understanding()
                .clauses
                .iter()
                .map(|c| c.text.as_str())
                .collect::<Vec<_>>()
                .join(" ");
            (plan, request)
        }
        (None, Some(raw)) => {
            let request = crate::commands::request_text(raw)?;
            let plan = crate::commands::plan_request(global, planning, &request, ctx.as_ref())?;
            (plan, request)
        }
        (None, None) => bail!("give a request or --plan FILE"),
    };
    let mut settings = Settings {
        limits: limits.clone(),
        request: (!request.trim().is_empty()).then(|| request.clone()),
        context: ctx,
        ..Settings::default()
    };
    let plan = if args.specialists {
        let view = planning.engine.specialist_plan(&request, &plan);
        let (scheduled, briefs) = specialists::schedule(&view, &plan, planning.engine.catalog());
        settings.briefs = briefs;
        scheduled
    } else {
        plan
    };
    execute(global, planning, plan, settings, &args.output)
}

/// Runs a plan with a fresh journal entry and prints the outcome.
fn execute(
    global: &Global,
    planning: &Planning,
    plan: Plan,
    settings: Settings,
    output: &RunOutput,
) -> Result<ExitCode> {
    let rt = history::runtime()?;
    let store = open_store(global, &rt)?;
    let toolbox = toolbox(planning, &store, output, &settings.limits)?;
    let recovery = Recovery {
        catalog: planning.engine.catalog(),
        options: planning.engine.options().clone(),
    };
    let runner = Runner {
        catalog: planning.engine.catalog(),
        store: store.clone(),
        toolbox: &toolbox,
        replanner: &recovery,
        caller: global.caller.clone(),
        events: sink(output),
    };
    let report = rt.block_on(async {
        let r = runner.run(plan, settings).await;
        toolbox.close().await;
        r
    })?;
    finish(&report, output)
}

fn finish(report: &RunReport, output: &RunOutput) -> Result<ExitCode> {
    // With --events the final report is the last event already.
    if output.events.is_none() {
        print_report(report, output.json)?;
    }
    Ok(exit_code(report.status))
}

pub fn resume(global: &Global, args: &ResumeArgs, planning: &Planning) -> Result<ExitCode> {
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
    let rt = history::runtime()?;
    let store = open_store(global, &rt)?;
    let stored = rt
        .block_on(store.run(&global.caller, &args.run_id))?
        .and_then(|row| serde_json::from_str::<Settings>(&row.settings).ok())
        .map(|s| s.limits)
        .unwrap_or_default();
    let raised = limits_over(&stored, &args.limits)?;
    let limits = raised.clone().unwrap_or(stored);
    decisions.limits = raised;
    let toolbox = toolbox(planning, &store, &args.output, &limits)?;
    let recovery = Recovery {
        catalog: planning.engine.catalog(),
        options: planning.engine.options().clone(),
    };
    let runner = Runner {
        catalog: planning.engine.catalog(),
        store: store.clone(),
        toolbox: &toolbox,
        replanner: &recovery,
        caller: global.caller.clone(),
        events: sink(&args.output),
    };
    let report = rt.block_on(async {
        let r = runner.resume(&args.run_id, decisions).await;
        toolbox.close().await;
        r
    })?;
    finish(&report, &args.output)
}

pub fn runs(global: &Global, args: &RunsArgs) -> Result<ExitCode> {
    let rt = history::runtime()?;
    let store = open_store(global, &rt)?;
    if let Some(crate::cli::RunsCommand::Show { run_id, json }) = &args.show {
        let Some(row) = rt.block_on(store.run(&global.caller, run_id))? else {
            bail!(
                "no run `{run_id}` for caller `{}`; `waypoint runs` lists them",
                global.caller
            );
        };
        let report: RunReport = serde_json::from_str(&row.report)
            .with_context(|| format!("run `{run_id}` has no report yet (status {})", row.status))?;
        print_report(&report, *json)?;
        return Ok(ExitCode::SUCCESS);
    }
    let rows = rt.block_on(store.runs(&global.caller, args.limit))?;
    let listed: Vec<serde_json::Value> = rows
        .iter()
        .map(|r| {
            let report: Option<RunReport> = serde_json::from_str(&r.report).ok();
            serde_json::json!({
                "run_id": r.run_id,
                "status": r.status,
                "created_at": r.created_at,
                "updated_at": r.updated_at,
                "generation": r.generation,
                "message": report.as_ref().map(|x| x.message.clone()),
                "tool_calls": report.as_ref().map(|x| x.totals.tool_calls),
                "cost_usd": report.as_ref().map(|x| x.totals.cost_usd),
                "wall_ms": report.as_ref().map(|x| x.totals.wall_ms),
            })
        })
        .collect();
    if args.json {
        crate::commands::print_json(&listed)?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut out = anstream::stdout();
    if listed.is_empty() {
        writeln!(out, "no runs yet for caller `{}`", global.caller)?;
    }
    for (row, item) in rows.iter().zip(&listed) {
        writeln!(
            out,
            "{:<22} {:<12} {}",
            row.run_id,
            row.status,
            item["message"].as_str().unwrap_or("")
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Writes a catalog of an MCP server's tools.
pub fn import(planning: &Planning, server: &str, out: Option<&PathBuf>) -> Result<ExitCode> {
    let catalog = planning.engine.catalog();
    if !catalog.servers().iter().any(|s| s.name == server) {
        let known: Vec<&str> = catalog.servers().iter().map(|s| s.name.as_str()).collect();
        bail!(
            "no MCP server `{server}` under `servers:` in the loaded catalog{}; declare it, e.g.\n  servers:\n    - name: {server}\n      command: [npx, -y, \"@modelcontextprotocol/server-filesystem\", \".\"]",
            if known.is_empty() {
                String::new()
            } else {
                format!(" (it has: {})", known.join(", "))
            }
        );
    }
    let rt = history::runtime()?;
    let cwd = std::env::current_dir()?;
    let pool = waypoint_run::adapters::McpPool::new(catalog.servers(), &cwd);
    let tools = rt.block_on(async {
        let t = pool.list_tools(server).await;
        pool.close().await;
        t
    })?;
    let yaml = waypoint_run::adapters::mcp::catalog_yaml(server, &tools);
    match out {
        Some(path) => {
            std::fs::write(path, &yaml)
                .with_context(|| format!("cannot write `{}`", path.display()))?;
            eprintln!(
                "wrote {} tools of `{server}` to {}",
                tools.len(),
                path.display()
            );
        }
        None => print!("{yaml}"),
    }
    Ok(ExitCode::SUCCESS)
}

/// Reads `plan://ns/name@req`, `bullet://…` or `ns/name@req`.
fn plan_ref(id: &str) -> Result<PlanRef> {
    let full = if id.contains("://") {
        id.to_string()
    } else {
        format!("plan://{id}")
    };
    PlanRef::parse(&full).map_err(|e| anyhow::anyhow!(e))
}

pub fn plans(global: &Global, cmd: &PlansCommand, planning: &Planning) -> Result<ExitCode> {
    let catalog = planning.engine.catalog();
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
        PlansCommand::Show { id, json } => {
            let doc = catalog
                .plan_doc(&plan_ref(id)?)
                .map_err(|e| anyhow::anyhow!("{e}; `waypoint plans list` shows what is loaded"))?;
            if *json {
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
        PlansCommand::Check { .. } => Ok(ExitCode::SUCCESS),
        PlansCommand::Run {
            id,
            context,
            output,
            limits: flags,
        } => {
            let doc = catalog
                .plan_doc(&plan_ref(id)?)
                .map_err(|e| anyhow::anyhow!("{e}; `waypoint plans list` shows what is loaded"))?;
            let plan: Plan = serde_json::from_value(serde_json::json!({
                "plan_id": format!("pl_{}", doc.id.key().replace('/', "_")),
                "steps": [{"id": "s1", "order": 1, "kind": "plan", "tool": doc.uri, "group": 1,
                           "rationale": doc.intent}],
            }))?;
            let settings = Settings {
                limits: limits(&planning.run, flags)?,
                request: Some(doc.intent.clone()),
                context: crate::commands::context(context.as_deref())?,
                ..Settings::default()
            };
            execute(global, planning, plan, settings, output)
        }
    }
}
