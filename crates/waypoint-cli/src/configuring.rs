//! `waypoint config path|show|check|init`: the configuration file made discoverable.

use std::io::Write as _;
use std::path::Path;
use std::process::ExitCode;

use anstyle::Style;
use anyhow::{Context as _, Result, bail};
use waypoint_app::config::{Config, default_path, inspect};

use crate::cli::{ConfigCommand, Global};

const DIM: Style = Style::new().dimmed();

pub fn config(global: &Global, cmd: &ConfigCommand) -> Result<ExitCode> {
    match cmd {
        ConfigCommand::Path { json } => path(global, *json),
        ConfigCommand::Show { json } => show(global, *json),
        ConfigCommand::Check { file, json } => {
            check(file.as_deref().or(global.planner.config.as_deref()), *json)
        }
        ConfigCommand::Init { file, force } => init(file.as_deref(), *force),
    }
}

fn path(global: &Global, json: bool) -> Result<ExitCode> {
    let places = inspect::places(global.planner.config.as_deref());
    if json {
        crate::commands::print_json(&places)?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut out = anstream::stdout();
    for p in &places {
        let state = match (p.in_effect, p.exists) {
            (true, true) => "in effect",
            (true, false) => "named, but missing",
            (false, true) => "exists, not read (an earlier one is)",
            (false, false) => "not there",
        };
        writeln!(
            out,
            "{:<8} {}  {DIM}{state}{DIM:#}",
            p.origin,
            p.path.display()
        )?;
    }
    if !places.iter().any(|p| p.in_effect) {
        writeln!(
            out,
            "no file: the built-in defaults apply; `waypoint config init` writes a starter"
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

fn show(global: &Global, json: bool) -> Result<ExitCode> {
    let config = Config::load(global.planner.config.as_deref())?;
    let text = config
        .path
        .as_ref()
        .map(|p| {
            waypoint_catalog::limited::read_file(p, waypoint_catalog::limited::MAX_INPUT_BYTES)
        })
        .transpose()
        .context("cannot read the configuration file")?;
    let settings = inspect::settings(&config, text.as_deref())?;
    if json {
        crate::commands::print_json(&settings)?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut out = anstream::stdout();
    match &config.path {
        Some(p) => writeln!(out, "{DIM}# from {}{DIM:#}", p.display())?,
        None => writeln!(out, "{DIM}# no file: built-in defaults{DIM:#}")?,
    }
    for s in &settings {
        let value = s
            .value
            .as_ref()
            .map_or_else(|| "(unset)".to_string(), ToString::to_string);
        writeln!(out, "{:<36} {value:<28} {DIM}{}{DIM:#}", s.key, s.source)?;
    }
    Ok(ExitCode::SUCCESS)
}

fn check(file: Option<&Path>, json: bool) -> Result<ExitCode> {
    let Some(path) = waypoint_app::config::path_in_effect(file) else {
        if json {
            crate::commands::print_json(&serde_json::json!({"ok": true, "file": null}))?;
        } else {
            println!("no configuration file: the built-in defaults apply");
        }
        return Ok(ExitCode::SUCCESS);
    };
    let checked = Config::load(Some(&path))
        .map_err(anyhow::Error::from)
        .and_then(|c| {
            // The server's section is checked as a server would (callers, tokens), on a
            // loopback address so that `auth = "off"` is judged where it is allowed.
            if c.serve.auth == waypoint_app::config::serve::AuthMode::Tokens
                && c.serve.callers.is_empty()
            {
                return Ok(c);
            }
            c.serve
                .check(std::net::SocketAddr::from(([127, 0, 0, 1], 0)))
                .map_err(|e| anyhow::anyhow!("config `{}` [serve]: {e}", path.display()))?;
            Ok(c)
        });
    match checked {
        Ok(_) => {
            if json {
                crate::commands::print_json(&serde_json::json!({"ok": true, "file": path}))?;
            } else {
                println!("ok: {}", path.display());
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(e) if json => {
            crate::commands::print_json(
                &serde_json::json!({"ok": false, "file": path, "error": format!("{e:#}")}),
            )?;
            Ok(ExitCode::FAILURE)
        }
        Err(e) => Err(e),
    }
}

fn init(file: Option<&Path>, force: bool) -> Result<ExitCode> {
    let Some(path) = file.map(Path::to_path_buf).or_else(default_path) else {
        bail!(
            "no HOME or XDG_CONFIG_HOME to put the file under; name one: `waypoint config init ./waypoint.toml`"
        );
    };
    if path.exists() && !force {
        bail!(
            "`{}` exists; nothing was written (`waypoint config check` validates it, --force replaces it)",
            path.display()
        );
    }
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create `{}`", dir.display()))?;
    }
    std::fs::write(&path, inspect::STARTER)
        .with_context(|| format!("cannot write `{}`", path.display()))?;
    eprintln!(
        "wrote {}; `waypoint config show` lists what it sets",
        path.display()
    );
    Ok(ExitCode::SUCCESS)
}
