//! `waypoint serve`: the server crate's faces over the application the flags describe,
//! reloaded when its catalog, training files or config change.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context as _, Result};
use waypoint_app::{App, RunPolicy, ServeConfig};
use waypoint_server::Server;

use crate::cli::{Global, ServeArgs};
use crate::setup::{say, setup};

pub fn serve(global: &Global, args: &ServeArgs) -> Result<ExitCode> {
    let rt = if args.http.is_some() {
        tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .context("cannot start the async runtime")?
    } else {
        crate::setup::runtime()?
    };
    let setup = setup(global)?;
    let mut config: ServeConfig = setup.config()?.serve;
    if args.no_auth {
        config.auth = waypoint_app::config::serve::AuthMode::Off;
    }
    if args.instance.is_some() {
        config.instance.clone_from(&args.instance);
    }
    let runs = if config.allow_run {
        let workdir = match &config.workdir {
            Some(d) => d.clone(),
            None => std::env::current_dir()?,
        };
        Some(RunPolicy { workdir })
    } else {
        None
    };
    let (app, notices) = rt.block_on(App::open_reloading(&setup, runs))?;
    say(&notices);
    say_meaning(&app.engine());
    let server = Arc::new(Server::new(app));
    let served = match args.http {
        None => {
            let mcp = waypoint_server::WaypointMcp::new(server.clone(), global.caller.clone());
            rt.block_on(waypoint_server::serve_stdio(mcp))
                .map_err(anyhow::Error::from)
        }
        Some(addr) => rt.block_on(serve_http(server.clone(), &config, addr)),
    };
    // History is written behind requests; what is still queued is committed now.
    rt.block_on(server.app.flush_history());
    served?;
    Ok(ExitCode::SUCCESS)
}

async fn serve_http(
    app: Arc<Server>,
    config: &ServeConfig,
    addr: std::net::SocketAddr,
) -> Result<()> {
    let stop = tokio_util::sync::CancellationToken::new();
    let watch = tokio::spawn(
        app.app
            .live()
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
    let status = waypoint_app::meaning::status(engine);
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
