//! One error type for every operation. Variants carry what went wrong as data; each
//! face says what to do about it in its own terms (the CLI names flags, HTTP names
//! fields and endpoints).

use std::path::PathBuf;

use waypoint_cascade::Strategy;

/// Why an operation failed.
#[derive(Debug, thiserror::Error)]
pub enum AppError {
    #[error(transparent)]
    Config(#[from] crate::config::ConfigError),
    #[error(transparent)]
    Catalog(#[from] waypoint_catalog::CatalogError),
    /// A file the setup names cannot be read.
    #[error("cannot read {what} `{}`: {source}", path.display())]
    Read {
        path: PathBuf,
        what: &'static str,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Cases(#[from] waypoint_eval::EvalError),
    /// The request cannot be planned (empty, too large).
    #[error(transparent)]
    Request(#[from] waypoint_core::CoreError),
    /// A planner strategy that needs a model, with none configured.
    #[error("the {} planner needs a model, and none is configured", strategy_name(*.0))]
    NoModel(Strategy),
    #[error(transparent)]
    Llm(#[from] waypoint_llm::LlmError),
    /// The input of an operation is wrong; the message says how.
    #[error("{0}")]
    BadInput(String),
    /// The store is off (`none`, or it could not be opened: `why`), and the operation
    /// needs it.
    #[error("history is off: there is no store{}", why.as_deref().map(|w| format!(" (it could not be opened: {w})")).unwrap_or_default())]
    NoStore { why: Option<String> },
    /// This application does not run tools (a server without `allow_run`).
    #[error("running tools is off here")]
    RunsOff,
    /// A stopped run's catalog entries call differently now, in the catalog in service
    /// and in the files the run started with: going on would run other tools than the
    /// ones planned and approved.
    #[error(
        "run `{run_id}` cannot go on: since it started on {}, {}; restore those files (or resume with a --catalog that has the run's tools as they were), or start the request again",
        if catalog.is_empty() { "the built-in catalog".to_string() } else { catalog.iter().map(|p| format!("`{}`", p.display())).collect::<Vec<_>>().join(", ") },
        changes.join(", ")
    )]
    CatalogChanged {
        run_id: String,
        catalog: Vec<std::path::PathBuf>,
        changes: Vec<String>,
    },
    /// The run (or other state) is not in a state the operation can act on.
    #[error("{0}")]
    Conflict(String),
    /// No such run for this caller (another caller's runs are not found either).
    #[error("no run `{run_id}` for caller `{caller}`")]
    NoSuchRun { run_id: String, caller: String },
    /// The run has no report yet (it has not started, or it stopped before writing one).
    #[error("run `{run_id}` has no report yet (status {status})")]
    NoReport { run_id: String, status: String },
    #[error(transparent)]
    Limits(#[from] crate::limits::LimitError),
    #[error(transparent)]
    Store(#[from] waypoint_store::StoreError),
    #[error(transparent)]
    Run(#[from] waypoint_run::RunError),
    /// `[run] allow_hosts` holds an entry that is no host, address or range.
    #[error(transparent)]
    AllowHosts(#[from] waypoint_run::DestinationError),
    /// Tools cannot be set up in the working directory.
    #[error("cannot set up tools in {}: {message}", workdir.display())]
    Tools { workdir: PathBuf, message: String },
    /// An MCP server the catalog does not declare.
    #[error("no MCP server `{server}` under `servers:` in the loaded catalog")]
    NoServer { server: String, known: Vec<String> },
    /// The router has no requests to learn from, or fewer than two entries.
    #[error(
        "nothing to train: the router learns from requests (entries' `examples:` or labelled request files) and needs at least two entries to tell apart; without them routing is lexical"
    )]
    NothingToTrain,
    /// Calibration has neither held-out requests nor training requests.
    #[error("nothing to calibrate on: no held-out requests and no training requests")]
    NothingToCalibrate,
    #[error("{0}")]
    Internal(String),
}

fn strategy_name(s: Strategy) -> &'static str {
    match s {
        Strategy::Deterministic => "deterministic",
        Strategy::Llm => "llm",
        Strategy::Cascade => "cascade",
    }
}

/// What kind of failure an error is, for faces that answer with a status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The caller's input is wrong.
    BadInput,
    /// This application's configuration does not allow it.
    Forbidden,
    NotFound,
    /// The request is sound but the state it meets is not the one it needs.
    Conflict,
    /// A part it needs (the store, a model) is not there or not answering.
    Unavailable,
    Internal,
}

impl AppError {
    pub fn kind(&self) -> ErrorKind {
        match self {
            Self::Request(_)
            | Self::BadInput(_)
            | Self::Limits(_)
            | Self::Cases(_)
            | Self::NoServer { .. }
            | Self::NothingToTrain
            | Self::NothingToCalibrate
            | Self::Run(
                waypoint_run::RunError::InvalidPlan(_)
                | waypoint_run::RunError::Limits(_)
                | waypoint_run::RunError::NotResumable { .. },
            ) => ErrorKind::BadInput,
            // Off by the configuration is a refusal; a store that failed to open may
            // come back.
            Self::RunsOff | Self::NoStore { why: None } => ErrorKind::Forbidden,
            Self::CatalogChanged { .. } | Self::Conflict(_) => ErrorKind::Conflict,
            Self::NoSuchRun { .. }
            | Self::NoReport { .. }
            | Self::Run(waypoint_run::RunError::NoSuchRun(_)) => ErrorKind::NotFound,
            Self::NoStore { .. } | Self::Store(_) | Self::Llm(_) | Self::NoModel(_) => {
                ErrorKind::Unavailable
            }
            Self::Config(_)
            | Self::Catalog(_)
            | Self::Read { .. }
            | Self::Run(_)
            | Self::Tools { .. }
            | Self::AllowHosts(_)
            | Self::Internal(_) => ErrorKind::Internal,
        }
    }
}
