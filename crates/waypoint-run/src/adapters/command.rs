//! `run: {command: [argv…]}`: a program started directly, never through a shell.
//!
//! Each argv element is a template (`{arg}`); a filled value stays one argument however
//! many spaces or quotes it holds, and `policy::argv` keeps values from starting
//! options, running as script code or naming paths outside the working directory. The
//! program runs in the working directory with stdin closed; output beyond the cap
//! fails the call, and its whole process group is killed when the call ends.

use std::process::Stdio;
use std::time::Duration;

use serde_json::json;
use tokio::io::AsyncReadExt as _;
use waypoint_store::MemoryStore;

use super::group::Group;
use super::{Call, Output, ToolError, Toolbox};

pub(super) async fn call<M: MemoryStore + 'static>(
    tb: &Toolbox<M>,
    argv: &[String],
    call: &Call<'_>,
    timeout: Duration,
) -> Result<Output, ToolError> {
    let filled = crate::policy::argv::fill(call.tool, argv, &call.args, &tb.workdir)?;
    let (program, rest) = filled
        .split_first()
        .ok_or_else(|| ToolError::Failed("the command is empty".into()))?;
    let mut command = tokio::process::Command::new(program);
    // Its own process group, so that the whole tree can be killed (see `group`).
    #[cfg(unix)]
    command.process_group(0);
    let mut child = command
        .args(rest)
        .current_dir(&tb.workdir)
        .env("WAYPOINT_IDEMPOTENCY_KEY", &call.idempotency_key)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| ToolError::Failed(format!("cannot start `{program}`: {e}")))?;
    let _group = Group::led_by(child.id());
    let limit = tb.max_output_bytes;
    let mut stdout = child.stdout.take();
    let mut stderr = child.stderr.take();
    let work = async {
        let (out, err) = tokio::join!(
            read_capped(&mut stdout, limit),
            read_capped(&mut stderr, limit)
        );
        let status = child
            .wait()
            .await
            .map_err(|e| ToolError::Failed(format!("`{program}`: {e}")))?;
        Ok::<_, ToolError>((status, out?, err?))
    };
    let (status, out, err) = Box::pin(tokio::time::timeout(timeout, work))
        .await
        .map_err(|_| ToolError::Failed(format!("`{program}` ran longer than {timeout:?}")))??;
    let stdout = String::from_utf8_lossy(&out).into_owned();
    let stderr = String::from_utf8_lossy(&err).into_owned();
    let code = status.code();
    if !status.success() {
        let tail: String = stderr
            .lines()
            .rev()
            .take(5)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect::<Vec<_>>()
            .join("\n");
        return Err(ToolError::Failed(format!(
            "`{program}` exited with {}{}",
            code.map_or_else(|| "a signal".to_string(), |c| format!("status {c}")),
            if tail.is_empty() {
                String::new()
            } else {
                format!(": {tail}")
            }
        )));
    }
    Ok(Output::of(
        json!({ "stdout": stdout, "stderr": stderr, "exit_code": code }),
    ))
}

async fn read_capped(
    pipe: &mut Option<impl tokio::io::AsyncRead + Unpin>,
    limit: usize,
) -> Result<Vec<u8>, ToolError> {
    let Some(pipe) = pipe else {
        return Ok(Vec::new());
    };
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    loop {
        let n = pipe
            .read(&mut chunk)
            .await
            .map_err(|e| ToolError::Failed(format!("reading output: {e}")))?;
        if n == 0 {
            return Ok(buf);
        }
        buf.extend_from_slice(&chunk[..n]);
        if buf.len() > limit {
            return Err(ToolError::TooLarge { limit });
        }
    }
}
