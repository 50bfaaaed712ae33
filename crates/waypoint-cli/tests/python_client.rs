//! The HTTP API from Python: `tests/python/test_http_api.py` with `requests` from PyPI,
//! in a virtual environment of its own under the cache directory (made once). Without
//! python3 the test skips loudly, unless `WAYPOINT_REQUIRE_PYTHON=1` (as in CI).

#![allow(clippy::unwrap_used, reason = "tests fail loudly on purpose")]

use std::path::PathBuf;
use std::process::Command;

/// The `requests` the test pins.
const REQUESTS: &str = "requests==2.32.3";

fn venv() -> Result<PathBuf, String> {
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .ok_or("no HOME")?
        .join("waypoint/python-client");
    let python = cache.join("bin/python");
    let ready = cache.join(".ready");
    if std::fs::read_to_string(&ready).is_ok_and(|r| r == REQUESTS) && python.exists() {
        return Ok(python);
    }
    let run = |cmd: &mut Command| -> Result<(), String> {
        let o = cmd.output().map_err(|e| e.to_string())?;
        if o.status.success() {
            Ok(())
        } else {
            Err(String::from_utf8_lossy(&o.stderr).into_owned())
        }
    };
    run(Command::new("python3").args(["-m", "venv"]).arg(&cache))?;
    run(Command::new(&python).args(["-m", "pip", "install", "--quiet", REQUESTS]))?;
    std::fs::write(&ready, REQUESTS).map_err(|e| e.to_string())?;
    Ok(python)
}

#[test]
fn a_python_client_finishes_a_run_over_http_and_pages_through_runs() {
    let python = match venv() {
        Ok(p) => p,
        Err(why) if std::env::var("WAYPOINT_REQUIRE_PYTHON").as_deref() != Ok("1") => {
            eprintln!(
                "SKIPPED: no Python environment with requests ({why}); set WAYPOINT_REQUIRE_PYTHON=1 to fail instead"
            );
            return;
        }
        Err(why) => panic!("no Python environment with requests: {why}"),
    };
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/python/test_http_api.py");
    let o = Command::new(python)
        .arg(script)
        .env("WAYPOINT_BIN", env!("CARGO_BIN_EXE_waypoint"))
        .env_remove("WAYPOINT_MODEL")
        .env_remove("WAYPOINT_EMBED_MODEL")
        .env_remove("WAYPOINT_CONFIG")
        .output()
        .unwrap();
    let (out, err) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    assert!(o.status.success(), "{out}\n{err}");
    assert!(out.contains("251 runs paged through"), "{out}");
}
