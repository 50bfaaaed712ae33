//! `waypoint serve`: the server crate's faces, wired to the CLI's catalog, config and
//! store options.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context as _, Result};
use waypoint_server::{App, LiveEngine, Planner, RunPolicy, ServeConfig};

use crate::cli::{Global, ServeArgs};
use crate::commands::{engine, open_configured, planning};
use crate::planning::{config_path, model_table};
use crate::{history, running};

pub fn serve(global: &Global, args: &ServeArgs) -> Result<ExitCode> {
    let rt = if args.http.is_some() {
        tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .context("cannot start the async runtime")?
    } else {
        history::runtime()?
    };
    let planning = planning(global, engine(global)?)?;
    say_meaning(&planning.engine);
    let mut config: ServeConfig = planning.serve.clone();
    if args.no_auth {
        config.auth = waypoint_server::config::AuthMode::Off;
    }
    if args.instance.is_some() {
        config.instance.clone_from(&args.instance);
    }
    let store = match open_configured(global, &rt)? {
        Ok(s) => s.map(Arc::new),
        Err(e) => {
            eprintln!("warning: plan history is off: {e}");
            None
        }
    };
    let run_policy = if config.allow_run {
        let workdir = match &config.workdir {
            Some(d) => d.clone(),
            None => std::env::current_dir()?,
        };
        Some(RunPolicy {
            workdir,
            limits: running::configured_limits(&planning)?,
        })
    } else {
        None
    };
    let planner = Planner::new(
        planning.strategy,
        planning.threshold,
        crate::commands::learn_rule(global),
        planning.model(),
    )
    .with_assisted_floor(planning.assisted_floor);
    let live = reloadable(global, planning.engine);
    let app = Arc::new(App {
        engine: Arc::new(live),
        planner,
        store,
        run_policy,
        models: model_table(global.planner.config.as_deref())?,
        metrics: waypoint_server::metrics::Metrics::default(),
    });
    // Expired history goes hourly, the first time at start-up.
    rt.block_on(async { app.spawn_purge(Duration::from_hours(1)) });
    match args.http {
        None => {
            let server = waypoint_server::WaypointMcp::new(app, global.caller.clone());
            rt.block_on(waypoint_server::serve_stdio(server))?;
        }
        Some(addr) => rt.block_on(serve_http(app, &config, addr))?,
    }
    Ok(ExitCode::SUCCESS)
}

/// The engine, with a loader that builds it again from the same catalog paths, training
/// files and config, watching them all.
fn reloadable(global: &Global, first: waypoint_core::Engine) -> LiveEngine {
    let g = global.clone();
    let loader: waypoint_server::live::Loader = Box::new(move || {
        let built = engine(&g).and_then(|e| planning(&g, e));
        built.map(|p| p.engine).map_err(|e| describe(&e))
    });
    let mut watched = global.catalog.clone();
    // New labelled requests retrain the router (or find it cached) on reload.
    watched.extend(global.train.iter().cloned());
    watched.extend(config_path(global.planner.config.as_deref()));
    LiveEngine::new(first, Some(loader), watched)
}

/// An error with every catalog problem in it (file, line, field), since the server's log
/// and `/healthz` are all the person reloading will see.
fn describe(e: &anyhow::Error) -> String {
    let mut text = format!("{e:#}");
    if let Some(waypoint_catalog::CatalogError::Invalid { diagnostics }) =
        e.downcast_ref::<waypoint_catalog::CatalogError>()
    {
        for d in diagnostics.iter().filter(|d| d.is_error()) {
            text.push('\n');
            text.push_str(&d.render());
        }
    }
    text
}

async fn serve_http(app: Arc<App>, config: &ServeConfig, addr: std::net::SocketAddr) -> Result<()> {
    let stop = tokio_util::sync::CancellationToken::new();
    let watch = tokio::spawn(
        app.engine
            .clone()
            .watch(Duration::from_millis(config.watch_ms)),
    );
    waypoint_server::spawn_workers(&app, &config.instance_name(), config.workers);
    let on_signal = stop.clone();
    tokio::spawn(async move {
        shutdown_signal().await;
        eprintln!("waypoint: shutting down");
        on_signal.cancel();
    });
    let served = waypoint_server::serve_http(app, config, addr, stop).await;
    watch.abort();
    served.map_err(Into::into)
}

async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}

/// One line at start-up on whether clauses are also matched by meaning.
fn say_meaning(engine: &waypoint_core::Engine) {
    let status = crate::meaning::status(engine);
    let detail = status.detail.unwrap_or_default();
    match status.state {
        "on" => eprintln!(
            "waypoint: routing by meaning as well as words ({} texts encoded)",
            status.rows.unwrap_or(0)
        ),
        "off" => eprintln!(
            "waypoint: meaning-level matching is off: {detail}; routing by words and requests"
        ),
        _ => eprintln!("warning: meaning-level matching is off: {detail}"),
    }
}
