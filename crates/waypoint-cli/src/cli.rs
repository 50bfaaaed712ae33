//! The command line, as clap types. Logic lives in the library crates; this file only
//! says what a person can type.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

#[derive(Debug, Parser)]
#[command(
    name = "waypoint",
    version,
    about = "Turn what a person asks an agent into a validated, ordered plan over a catalog of tools.",
    long_about = "Waypoint splits a request into clauses, understands each, routes it to the tools, \
pipelines and plans of a catalog, and returns a validated plan with dependencies, arguments and \
gaps, runs plans under hard limits with a journal that survives crashes (`run`, `resume`), runs \
versioned plan documents (`plans`) and serves all of it to agents over MCP (`serve`). It works \
offline and deterministically; with no --catalog it uses a built-in catalog.",
    after_help = "Examples:\n  waypoint plan \"remember this launch, write a blog about it, then make an illustration\"\n  waypoint run \"find CommandRouter\" --workdir ~/src/app\n  waypoint plans run demo/welcome --catalog examples/catalog --context '{\"name\": \"Ada\"}'\n  waypoint serve --stdio\n  waypoint route \"summarize https://example.com/report.pdf\" --json\n  waypoint eval cases.jsonl --catalog ./catalog --json\n  waypoint catalog check --catalog ./catalog"
)]
pub struct Cli {
    #[command(flatten)]
    pub global: Global,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Clone, Args)]
pub struct Global {
    /// A catalog file or directory of *.yaml files; repeat to merge several. Default: the built-in catalog.
    #[arg(long, short = 'c', global = true, value_name = "PATH")]
    pub catalog: Vec<PathBuf>,
    /// When to colour output.
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
    /// Route score (0–1) below which a clause is reported as a gap.
    #[arg(long, global = true, value_name = "SCORE", value_parser = parse_unit)]
    pub threshold: Option<f64>,
    /// Where history, runs and memories live: `sqlite:PATH`, `postgres://…`, or `none`.
    /// Default: a SQLite file in your data directory.
    #[arg(long, global = true, value_name = "URL", env = "WAYPOINT_STORE")]
    pub store: Option<String>,
    /// The caller namespace history belongs to.
    #[arg(
        long,
        global = true,
        value_name = "NAME",
        env = "WAYPOINT_CALLER",
        default_value = "local"
    )]
    pub caller: String,
    /// How long history rows are kept, e.g. `30d`.
    #[arg(long, global = true, value_name = "DURATION", default_value = "30d")]
    pub history_ttl: String,
    /// Successful runs with the same tools after which a request's plan is learned
    /// (planning alone teaches nothing; `waypoint plans accept` teaches at once).
    #[arg(long, global = true, value_name = "N", default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..))]
    pub learn_after: u32,
    /// Labelled requests (JSONL, one `{"request", "expect": {"tools"}}` per line) that teach
    /// the router how people ask for each entry; repeat to add several files. The trained
    /// router is cached, so only the first command with new data trains.
    #[arg(long, global = true, value_name = "TRAIN.jsonl")]
    pub train: Vec<PathBuf>,
    /// A sentence-transformers folder (e.g. all-MiniLM-L6-v2, installed by
    /// `scripts/embed-model install`) for routing by meaning as well as by words; also
    /// `[embed] model` in waypoint.toml, or `WAYPOINT_EMBED_MODEL` (empty: off). Without
    /// it, routing is model-free.
    #[arg(long, global = true, value_name = "DIR")]
    pub embed_model: Option<PathBuf>,
    #[command(flatten)]
    pub planner: PlannerArgs,
}

/// Which planner answers, and the model it may ask.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Planner")]
pub struct PlannerArgs {
    /// `deterministic` never calls a model; `llm` always asks the model (falling back to
    /// the deterministic plan when it fails); `cascade` asks the model only when the
    /// deterministic planner is unsure. Default: `cascade` when a model is configured,
    /// else `deterministic`.
    #[arg(long, global = true, value_enum, env = "WAYPOINT_PLANNER")]
    pub planner: Option<PlannerChoice>,
    /// The model, as PROVIDER/MODEL: llamacpp/…, ollama/…, vllm/…, lmstudio/…,
    /// openrouter/…, openai/…, or a provider from waypoint.toml.
    #[arg(
        long,
        global = true,
        value_name = "PROVIDER/MODEL",
        env = "WAYPOINT_MODEL"
    )]
    pub model: Option<String>,
    /// Config file. Default: ./waypoint.toml, else ~/.config/waypoint/waypoint.toml, the
    /// first that exists (`waypoint config path`; docs/configuration.md).
    #[arg(long, global = true, value_name = "FILE", env = "WAYPOINT_CONFIG")]
    pub config: Option<PathBuf>,
    /// The model server's OpenAI-compatible base URL, e.g. `http://127.0.0.1:8080/v1`.
    #[arg(long, global = true, value_name = "URL")]
    pub llm_base_url: Option<String>,
    /// The environment variable that holds the model server's API key.
    #[arg(long, global = true, value_name = "NAME")]
    pub llm_api_key_env: Option<String>,
    /// Seconds one plan may wait for the model, retries included (default 60).
    #[arg(long, global = true, value_name = "SECS", value_parser = parse_seconds)]
    pub llm_timeout: Option<f64>,
    /// Deterministic confidence (0–1) below which the cascade asks the model (default 0.6).
    #[arg(long, global = true, value_name = "SCORE", value_parser = parse_unit)]
    pub cascade_threshold: Option<f64>,
    /// Route score (0–1) the router must give a model's chosen tool in some clause for
    /// the step to be adopted; below it the step stays a gap with the model's suggestion
    /// in its rationale (default 0.2; docs/llm.md).
    #[arg(long, global = true, value_name = "SCORE", value_parser = parse_unit)]
    pub assisted_floor: Option<f64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PlannerChoice {
    Deterministic,
    Llm,
    Cascade,
}

fn parse_seconds(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .parse()
        .map_err(|_| format!("`{s}` is not a number of seconds"))?;
    if v > 0.0 && v <= 3600.0 {
        Ok(v)
    } else {
        Err(format!("`{s}` is outside 0–3600 seconds"))
    }
}

fn parse_unit(s: &str) -> Result<f64, String> {
    let v: f64 = s.parse().map_err(|_| format!("`{s}` is not a number"))?;
    if (0.0..=1.0).contains(&v) {
        Ok(v)
    } else {
        Err(format!("`{s}` is outside 0..=1"))
    }
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Plan a request: ordered steps with tools, args, dependencies and gaps.
    #[command(
        after_help = "Examples:\n  waypoint plan \"fetch https://blog.rust-lang.org/ and translate it into Spanish\"\n  waypoint plan \"turn it into a blog post\" --context '{\"paste\": \"Our launch…\"}'\n  echo \"review my changes\" | waypoint plan - --format mermaid\n  waypoint plan \"build the project\" --json | jq .steps\n  waypoint plan \"summarize the changelog\" --planner llm --model llamacpp/gemma3-270m --llm-base-url http://127.0.0.1:8089/v1\n  waypoint plan \"…\" --model openrouter/meta-llama/llama-3.1-8b-instruct   # cascade; key in OPENROUTER_API_KEY"
    )]
    Plan(PlanArgs),
    /// Rank the catalog's tools and pipelines for each clause of a request.
    #[command(
        after_help = "Examples:\n  waypoint route \"summarize this PDF: https://example.com/report.pdf\"\n  waypoint route \"order me a pizza\" --json   # a gap: no recommendation, a gap_warning"
    )]
    Route(RequestArgs),
    /// Show how a request is understood: clauses, goals, extracted values.
    #[command(
        after_help = "Examples:\n  waypoint understand \"what changed and then run the tests\"\n  waypoint understand \"email ana@example.com every Friday at 9\" --json"
    )]
    Understand(RequestArgs),
    /// Plan every case of a JSONL file and score the plans (docs/contracts.md).
    #[command(
        after_help = "Examples:\n  waypoint eval cases.jsonl --catalog ./catalog\n  waypoint eval cases.jsonl --catalog ./catalog --train train.jsonl --json"
    )]
    Eval(EvalArgs),
    /// Train the router on labelled requests and report, per entry, what cross-validation
    /// says: precision, recall and the entries it is confused with.
    #[command(
        after_help = "The router learns from every entry's name, description, keywords and examples, plus\nthe labelled requests given here. The model is cached by the digest of all of that;\n`plan`, `route` and `eval` with the same --catalog and --train read it instead of\ntraining again.\n\nExamples:\n  waypoint train requests.jsonl --catalog ./catalog\n  waypoint train a.jsonl b.jsonl --catalog ./catalog --json"
    )]
    Train(TrainArgs),
    /// Fit the abstain threshold on held-out labelled requests: the route score below which
    /// a clause is a gap rather than a guess, with each entry's precision, recall and
    /// confusions at it.
    #[command(
        after_help = "Route every request of HELD_OUT.jsonl (labelled like eval cases; requests the catalog\ncannot serve carry \"expect\": {\"unknown\": true}) and sweep the threshold from 0.05 to\n0.95: the fit is the threshold with the best mean of in-scope accuracy and out-of-scope\nrecall (the highest among equals). Train on other requests than you hold out; with no\nHELD_OUT file, the --train requests are cross-validated in 3 folds instead.\nUse the fit with --threshold.\n\nExamples:\n  waypoint calibrate dev.jsonl --catalog ./catalog --train train.jsonl\n  waypoint calibrate dev.jsonl --catalog ./catalog --train train.jsonl --json\n  waypoint calibrate --catalog ./catalog --train train.jsonl      # 3-fold cross-validation"
    )]
    Calibrate(CalibrateArgs),
    /// Check or list a catalog.
    #[command(subcommand)]
    Catalog(CatalogCommand),
    /// List your plan history (hashes and tools only, never request text).
    #[command(
        after_help = "Examples:\n  waypoint history\n  waypoint history --tool git_status --since 7d --json\n  waypoint history --plans          # per request: counts, sequences, the learned one\n  waypoint history show 3f2a9c01d4e5b6a7"
    )]
    History(HistoryArgs),
    /// Plan a request (or load a plan) and run it under limits, journaling every call.
    #[command(
        after_help = "Exit status: 0 ok, 1 error, failed or cancelled, 3 a limit was hit, 4 needs input, 5 needs a human, 6 needs approval.\n\nCalls that are not reads (effects write, destructive, external) wait for approval: on a terminal you are asked; otherwise the run stops with needs_approval and `waypoint resume RUN --approve s2` goes on. --yes approves all ahead; [run] approve in waypoint.toml sets the bar (docs/security.md).\n\nExamples:\n  waypoint run \"what changed\" --workdir ~/src/app\n  waypoint run \"delete notes.txt\" --dry-run\n  waypoint run \"remember that the launch is on Friday\" --yes\n  waypoint run --plan plan.json --max-tool-calls 10 --max-wall 30s --json\n  waypoint run \"remember that the launch is on Friday\" --events jsonl\n  waypoint run \"create an agent that watches https://example.com/search\" --specialists\n  waypoint run \"…\" --catalog ./catalog --model llamacpp/gemma3-270m   # llm_subtask steps call the model"
    )]
    Run(RunArgs),
    /// Resume a run that stopped: completed steps are not called again.
    #[command(
        after_help = "A step that was called but never answered (a crash, a timeout) is called again only when its tool only reads; otherwise say what happened with --retry or --done.\n\nExamples:\n  waypoint resume run_3f2a9c01d4e5b6a7\n  waypoint resume run_3f2a9c01d4e5b6a7 --answer s2=\"the staging cluster\"\n  waypoint resume run_3f2a9c01d4e5b6a7 --answer s1.path=README.md\n  waypoint resume run_3f2a9c01d4e5b6a7 --retry s3      # it did not happen: call it again\n  waypoint resume run_3f2a9c01d4e5b6a7 --done s3       # it happened: go on without calling it\n  waypoint resume run_3f2a9c01d4e5b6a7 --max-tool-calls 128   # raise the limit it hit"
    )]
    Resume(ResumeArgs),
    /// Plan documents: list, show, check and run the catalog's `plans/`.
    #[command(subcommand)]
    Plans(PlansCommand),
    /// Serve the planner over MCP (stdio or HTTP) and, on HTTP, a JSON API.
    #[command(
        long_about = "Serve the planner to agents and services.\n\n--stdio speaks MCP on standard input and output: the tools plan, route, understand, history, forget, run, approve_run, resume_run and cancel_run, and the resources waypoint://routing-guide, my-plans, context-budgets and models.\n\n--http ADDR listens for the same MCP tools at /mcp (streamable HTTP) and a JSON API at /v1/plan, /v1/route, /v1/understand, /v1/runs and /v1/history, with /openapi.json, /healthz and /metrics. Every /v1 and /mcp request needs `Authorization: Bearer TOKEN` of a caller under [serve.callers] in waypoint.toml; history and runs belong to that caller. On a loopback address, --no-auth (or auth = \"off\") serves everyone as one local caller.\n\nThe server plans as `waypoint plan` does: a caller's learned plan, the deterministic planner, and the model named by --model (or [llm] in waypoint.toml) when --planner asks for it.\n\nTools run on the server only with `allow_run = true` under [serve]; then POST /v1/runs queues a run and any instance on the same store claims it, once. The catalog reloads on SIGHUP and when its files change; a catalog with errors is reported and the old one kept.",
        after_help = "Examples:\n  waypoint serve --stdio\n  waypoint serve --http 127.0.0.1:8080 --no-auth\n  WAYPOINT_TOKEN_ALICE=... waypoint serve --http 0.0.0.0:8080 --config waypoint.toml --store postgres://db/waypoint\n  curl -s localhost:8080/v1/plan -H 'content-type: application/json' -d '{\"request\": \"find CommandRouter\"}'\n  npx @modelcontextprotocol/inspector@0.17.2 --cli http://127.0.0.1:8080/mcp --transport http --header \"Authorization: Bearer $TOKEN\" --method tools/list\n\nSee docs/server.md for [serve] settings."
    )]
    Serve(ServeArgs),
    /// List your runs, or show one with its steps.
    #[command(
        after_help = "Examples:\n  waypoint runs\n  waypoint runs --json\n  waypoint runs show run_3f2a9c01d4e5b6a7 --json\n  waypoint runs cancel run_3f2a9c01d4e5b6a7"
    )]
    Runs(RunsArgs),
    /// Delete your plan history: all of it, what is older than a duration, or one request's.
    #[command(
        after_help = "Examples:\n  waypoint forget --all\n  waypoint forget --older-than 7d\n  waypoint forget --intent 3f2a9c01d4e5b6a7"
    )]
    Forget(ForgetArgs),
    /// Where waypoint.toml is looked for, what it sets, whether it is valid, a starter.
    #[command(
        subcommand,
        long_about = "Where the configuration file is looked for, what it sets, whether it is valid, and a starter file.\n\nWaypoint reads the first of: --config FILE (or WAYPOINT_CONFIG), ./waypoint.toml in the current directory, and ~/.config/waypoint/waypoint.toml ($XDG_CONFIG_HOME/waypoint/waypoint.toml). Only that one file is read. An unknown section or key is an error with its line and a did-you-mean. docs/configuration.md lists every key.",
        after_help = "Examples:\n  waypoint config path\n  waypoint config init            # writes ~/.config/waypoint/waypoint.toml\n  waypoint config init ./waypoint.toml\n  waypoint config check\n  waypoint config show --json | jq '.[] | select(.source != \"default\")'"
    )]
    Config(ConfigCommand),
}

#[derive(Debug, Subcommand)]
pub enum ConfigCommand {
    /// The places the file is looked for, in order, and which one is in effect.
    Path {
        #[arg(long)]
        json: bool,
    },
    /// Every key with its effective value and where it comes from (the file and line, or
    /// `default`).
    /// Tokens are never shown.
    Show {
        #[arg(long)]
        json: bool,
    },
    /// Validate the file in effect, or FILE: unknown sections and keys, types, callers.
    Check {
        /// The file to check (default: the one in effect).
        file: Option<PathBuf>,
        #[arg(long)]
        json: bool,
    },
    /// Write a commented starter file (default: the user file); never overwrites
    /// without --force.
    Init {
        /// Where to write it (default: ~/.config/waypoint/waypoint.toml).
        file: Option<PathBuf>,
        #[arg(long)]
        force: bool,
    },
}

/// Limits and where tools run; flags override `[run]` in waypoint.toml.
#[derive(Debug, Args, Default)]
#[command(next_help_heading = "Limits")]
pub struct LimitArgs {
    /// Most plan steps started, replans included (default 32).
    #[arg(long, value_name = "N")]
    pub max_steps: Option<u32>,
    /// Most tool calls (default 64).
    #[arg(long, value_name = "N")]
    pub max_tool_calls: Option<u32>,
    /// Longest the whole run may take, e.g. `30s`, `10m`, `500ms` (default 10m).
    #[arg(long, value_name = "DURATION")]
    pub max_wall: Option<String>,
    /// Most spend in US dollars at catalog and model prices (default 1.0).
    #[arg(long, value_name = "USD")]
    pub max_usd: Option<f64>,
    /// New plans after a failure before a human is asked (K, default 2).
    #[arg(long, value_name = "K")]
    pub max_replans: Option<u32>,
    /// Longest one tool call may take, e.g. `60s` (default 60s).
    #[arg(long, value_name = "DURATION")]
    pub tool_timeout: Option<String>,
    /// Steps of one group run at once (default 4).
    #[arg(long, value_name = "N")]
    pub concurrency: Option<usize>,
}

/// How a run reports as it goes and when it ends.
#[derive(Debug, Args)]
pub struct RunOutput {
    /// Stream events to standard output, one JSON object per line.
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub events: Option<EventsFormat>,
    /// Print the final report as JSON.
    #[arg(long)]
    pub json: bool,
    /// The directory file tools are confined to and commands run in (default: the current one).
    #[arg(long, value_name = "DIR")]
    pub workdir: Option<PathBuf>,
    #[command(flatten)]
    pub approve: ApproveArgs,
}

/// Which held calls may run (docs/security.md). Calls that are not reads wait for
/// approval (`[run] approve` sets the bar); on a terminal you are asked, otherwise the
/// run stops `needs_approval` and `waypoint resume RUN --approve STEP` goes on.
#[derive(Debug, Args)]
pub struct ApproveArgs {
    /// Approve every call of the run ahead, whatever its effects.
    #[arg(long, short = 'y')]
    pub yes: bool,
    /// Approve the calls of these plan steps ahead (`s1,s3`); a pipeline's or plan
    /// document's step approves every call it makes.
    #[arg(
        long,
        value_name = "STEPS",
        value_delimiter = ',',
        conflicts_with = "yes"
    )]
    pub approve: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum EventsFormat {
    Jsonl,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// The request in the user's words; `-` reads it from standard input.
    #[arg(required_unless_present = "plan", conflicts_with = "plan")]
    pub request: Option<String>,
    /// Run this plan (JSON, docs/contracts.md, Plan JSON) instead of planning a request.
    #[arg(long, value_name = "FILE")]
    pub plan: Option<PathBuf>,
    /// Extra context: inline JSON, or @FILE to read JSON from a file.
    #[arg(long, value_name = "JSON|@FILE")]
    pub context: Option<String>,
    /// Run as specialists in priority order (docs/run.md), each given its instructions
    /// and the request's concrete values.
    #[arg(long)]
    pub specialists: bool,
    /// Show what would run — each step's tool, args, effects and whether it would wait
    /// for approval — and call nothing.
    #[arg(long)]
    pub dry_run: bool,
    #[command(flatten)]
    pub output: RunOutput,
    #[command(flatten)]
    pub limits: LimitArgs,
}

#[derive(Debug, Args)]
pub struct ResumeArgs {
    /// The run to resume, as `waypoint runs` lists it.
    pub run_id: String,
    /// Answer a question: `STEP=TEXT` for an `ask_user` step, `STEP.ARG=VALUE` for a placeholder.
    #[arg(long, value_name = "STEP=TEXT")]
    pub answer: Vec<String>,
    /// A step whose outcome is unknown did not happen: call it again.
    #[arg(long, value_name = "STEP")]
    pub retry: Vec<String>,
    /// A step whose outcome is unknown did happen: go on without calling it.
    #[arg(long, value_name = "STEP")]
    pub done: Vec<String>,
    #[command(flatten)]
    pub output: RunOutput,
    /// Limits given here replace the ones the run started with (raise a budget it hit).
    #[command(flatten)]
    pub limits: LimitArgs,
}

#[derive(Debug, Subcommand)]
pub enum PlansCommand {
    /// The loaded plan documents: id, intent, steps, whether they are clear enough to run.
    #[command(
        after_help = "Examples:\n  waypoint plans list --catalog ./catalog\n  waypoint plans list --catalog ./catalog --json"
    )]
    List {
        #[arg(long)]
        json: bool,
    },
    /// One plan document, by id and optional version requirement.
    #[command(
        after_help = "Examples:\n  waypoint plans show plan://team/report@^1 --catalog ./catalog\n  waypoint plans show team/report --catalog ./catalog --json"
    )]
    Show {
        /// `plan://NS/NAME[@REQ]`, `bullet://…` or `NS/NAME[@REQ]`.
        id: String,
        #[arg(long)]
        json: bool,
    },
    /// Check the catalog and its plan documents as a run would meet them: versions,
    /// references, cycles, args against schemas, required args, script inputs,
    /// template syntax, safety levels against every tool reached. Every problem in one
    /// pass, each at its line; warnings fail it too.
    Check {
        #[arg(long)]
        json: bool,
    },
    /// Accept a plan as right for a request: from now on the request gets it as its
    /// learned plan, until a run of it fails.
    #[command(
        long_about = "Accept a plan as right for a request: from now on the request gets it as its learned plan (`planner: \"learned\"`), until a run of it fails.\n\nLearned plans come from evidence only: a request's plan is learned after --learn-after successful runs of the same tools, or at once when you accept it here. Planning alone teaches nothing. Without --plan, the plan the request gets now is accepted; with --plan FILE, that plan (the JSON `waypoint plan --json` prints, perhaps edited). See docs/store.md.",
        after_help = "Examples:\n  waypoint plans accept \"find CommandRouter and then run the tests\"\n  waypoint plan \"release the app\" --json > release.json   # edit it, then:\n  waypoint plans accept \"release the app\" --plan release.json --json"
    )]
    Accept {
        /// The request, in the words it will be asked in (matched after normalising case
        /// and punctuation).
        request: String,
        /// The plan to accept (JSON as `waypoint plan --json` prints it).
        #[arg(long, value_name = "FILE")]
        plan: Option<PathBuf>,
        #[arg(long)]
        json: bool,
    },
    /// Run a plan document: its clarity gate, constraints and success criteria apply.
    #[command(
        after_help = "Exit status as for `waypoint run`.\n\nExamples:\n  waypoint plans run plan://team/report@^1 --catalog ./catalog\n  waypoint plans run team/report --context '{\"url\": \"https://example.com\"}' --json"
    )]
    Run {
        /// `plan://NS/NAME[@REQ]`, `bullet://…` or `NS/NAME[@REQ]`.
        id: String,
        /// Values placeholders and described inputs may be taken from: inline JSON or @FILE.
        #[arg(long, value_name = "JSON|@FILE")]
        context: Option<String>,
        #[command(flatten)]
        output: RunOutput,
        #[command(flatten)]
        limits: LimitArgs,
    },
}

#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("transport").required(true).args(["stdio", "http"])))]
pub struct ServeArgs {
    /// Speak MCP on standard input and output (what an agent that starts Waypoint uses).
    #[arg(long)]
    pub stdio: bool,
    /// Listen on ADDR for MCP (/mcp) and the JSON API (/v1/…); port 0 picks a free port
    /// and the address is printed.
    #[arg(long, value_name = "ADDR")]
    pub http: Option<std::net::SocketAddr>,
    /// Take no tokens: every request is the caller `local`. Only on a loopback address.
    #[arg(long, requires = "http")]
    pub no_auth: bool,
    /// This instance's name in run claims (default: host name and process id).
    #[arg(long, value_name = "NAME", requires = "http")]
    pub instance: Option<String>,
}

#[derive(Debug, Args)]
pub struct RunsArgs {
    #[command(subcommand)]
    pub show: Option<RunsCommand>,
    /// Most runs to list.
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u32).range(1..))]
    pub limit: u32,
    /// The next page: the `next_cursor` the page before printed.
    #[arg(long, value_name = "CURSOR")]
    pub cursor: Option<String>,
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Subcommand)]
pub enum RunsCommand {
    /// One run's report: status, steps, outputs, attempts.
    Show {
        run_id: String,
        #[arg(long)]
        json: bool,
    },
    /// Cancel a queued or stopped run: it is never claimed or resumed.
    Cancel {
        run_id: String,
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Args)]
pub struct HistoryArgs {
    #[command(subcommand)]
    pub show: Option<HistoryCommand>,
    /// Only plans with a step using this tool.
    #[arg(long)]
    pub tool: Option<String>,
    /// Only rows with this outcome: planned, ok, failed, limit (those three from runs) or
    /// accepted.
    #[arg(long)]
    pub outcome: Option<String>,
    /// Only plans from the last DURATION, e.g. `7d`, `12h`.
    #[arg(long, value_name = "DURATION")]
    pub since: Option<String>,
    /// Group by request: counts, outcomes, tool sequences and the stable (learned) one.
    #[arg(long)]
    pub plans: bool,
    /// Most rows to list.
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u32).range(1..))]
    pub limit: u32,
    /// The next page: the `next_cursor` the page before printed.
    #[arg(long, value_name = "CURSOR")]
    pub cursor: Option<String>,
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Subcommand)]
pub enum HistoryCommand {
    /// Every row of one request, by its intent hash.
    Show {
        intent_sha: String,
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("what").required(true).args(["all", "older_than", "intent"])))]
pub struct ForgetArgs {
    /// Delete all of your history.
    #[arg(long)]
    pub all: bool,
    /// Delete rows older than DURATION, e.g. `7d`.
    #[arg(long, value_name = "DURATION")]
    pub older_than: Option<String>,
    /// Delete the rows of one request.
    #[arg(long, value_name = "INTENT_SHA")]
    pub intent: Option<String>,
    /// Print `{"forgotten": N}` instead of a sentence.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct RequestArgs {
    /// The request in the user's words; `-` reads it from standard input.
    pub request: String,
    /// Extra context: inline JSON, or @FILE to read JSON from a file.
    #[arg(long, value_name = "JSON|@FILE")]
    pub context: Option<String>,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct PlanArgs {
    #[command(flatten)]
    pub request: RequestArgs,
    /// Output format; `--json` is the same as `--format json`.
    #[arg(long, value_enum)]
    pub format: Option<Format>,
    /// Show the plan as a specialist run: priorityOrder, refinedTask,
    /// extractedContext and instructions per specialist.
    #[arg(long)]
    pub specialists: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Text,
    Json,
    Mermaid,
    Dot,
}

#[derive(Debug, Args)]
pub struct EvalArgs {
    /// Cases file: one JSON object per line.
    pub cases: PathBuf,
    /// Print the report as JSON (docs/contracts.md) instead of a table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct TrainArgs {
    /// Labelled requests: JSONL in the evaluation-case format; `expect.tools` or
    /// `expect.tool_set` name the entries each request is for.
    pub files: Vec<PathBuf>,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct CalibrateArgs {
    /// Held-out labelled requests (JSONL, the evaluation-case format). Without it, the
    /// `--train` requests are cross-validated (3 folds).
    pub held_out: Option<PathBuf>,
    /// Print the fit, the curve and the per-entry figures as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Subcommand)]
pub enum CatalogCommand {
    /// Validate a catalog and report every problem with <file:line>; exits 1 on any error.
    #[command(
        after_help = "Examples:\n  waypoint catalog check --catalog ./catalog\n  waypoint catalog check --catalog a.yaml --catalog b.yaml --json"
    )]
    Check {
        /// Fail on warnings too (a step a plan's safety level always refuses, evidence
        /// nothing produces); `waypoint plans check` always does.
        #[arg(long)]
        strict: bool,
        #[arg(long)]
        json: bool,
    },
    /// List the tools, pipelines and specialists that are loaded.
    #[command(
        after_help = "Examples:\n  waypoint catalog show\n  waypoint catalog show --catalog ./catalog --json"
    )]
    Show {
        #[arg(long)]
        json: bool,
    },
    /// Write a catalog of an MCP server's tools (from its tools/list), to run them as steps.
    #[command(
        after_help = "The server must be declared under `servers:` in a loaded catalog. Tool names get the server's name as a prefix; effects come from the tools' annotations (read-only → read, destructive → destructive, open-world → external, else write).\n\nExamples:\n  waypoint catalog import --mcp fs --catalog servers.yaml > fs-tools.yaml\n  waypoint catalog import --mcp memory --catalog servers.yaml --out catalog/memory.yaml"
    )]
    Import {
        /// The server's name under `servers:`.
        #[arg(long, value_name = "NAME")]
        mcp: String,
        /// Write here instead of standard output.
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
    },
}
