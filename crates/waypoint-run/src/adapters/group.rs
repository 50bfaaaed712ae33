//! A command tool's processes as one group, so that ending the tool ends everything it
//! started — even when what ends is the runner itself.
//!
//! Killing only the process we started leaves its children running: a tool's
//! `(sleep 4; echo late > f) & wait` would still write `f` after its step was reported
//! failed. Each tool is started as the leader of its own process group and the whole
//! group is killed when the call ends for any reason — finished, timed out, over a
//! limit, or cancelled (the call's future dropped).
//!
//! A runner killed with SIGKILL runs no destructor, so a [`Reaper`] covers that case: a
//! small `sh` in a process group of its own, started with the first command tool, reads
//! "+GROUP" and "-GROUP" lines on a pipe only this process holds. The kernel closes that
//! pipe however the runner ends; at end of input the reaper kills every group still
//! listed (docs/security.md, "Processes").

use std::io::Write as _;
use std::sync::{Mutex, OnceLock};

/// Kills the process group led by a tool when dropped.
pub(super) struct Group {
    #[cfg(unix)]
    leader: Option<rustix::process::Pid>,
}

impl Group {
    /// The group of a child started with `process_group(0)`, whose id is `pid`; the
    /// reaper learns of it at once.
    pub(super) fn led_by(pid: Option<u32>) -> Self {
        #[cfg(unix)]
        {
            let leader = pid
                .and_then(|p| i32::try_from(p).ok())
                .and_then(rustix::process::Pid::from_raw);
            if let Some(leader) = leader {
                Reaper::tell(&format!("+{}\n", leader.as_raw_nonzero()));
            }
            Self { leader }
        }
        #[cfg(not(unix))]
        {
            let _ = pid;
            Self {}
        }
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        #[cfg(unix)]
        if let Some(leader) = self.leader {
            // The group may be gone already; there is nothing to do about a failure.
            let _ = rustix::process::kill_process_group(leader, rustix::process::Signal::KILL);
            Reaper::tell(&format!("-{}\n", leader.as_raw_nonzero()));
        }
    }
}

/// The watcher that outlives a killed runner (see the module's doc).
struct Reaper;

/// Keeps the listed groups in a space-separated word list; at end of input (the runner
/// is gone) kills each. Group ids are digits, so no word needs quoting.
const REAPER_SCRIPT: &str = r#"set -f
groups=' '
while IFS= read -r line; do
  g=${line#?}
  case $line in
    +*) groups="$groups$g " ;;
    -*) case $groups in *" $g "*) groups="${groups%% $g *} ${groups#* $g }" ;; esac ;;
  esac
done
for g in $groups; do kill -KILL "-$g" 2>/dev/null; done
"#;

/// The pipe to the reaper, once started; `None` when it could not be (the tools still
/// run, covered by [`Group`] alone).
static REAPER: OnceLock<Mutex<Option<std::process::ChildStdin>>> = OnceLock::new();

impl Reaper {
    fn start() -> Option<std::process::ChildStdin> {
        let mut command = std::process::Command::new("sh");
        command
            .args(["-c", REAPER_SCRIPT])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        // Out of the runner's group, so a Ctrl-C to the terminal's group leaves it to
        // clean up after the runner instead of dying with it.
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        match command.spawn() {
            // The child is never waited for: it lives as long as this process and then
            // belongs to init.
            Ok(mut child) => child.stdin.take(),
            Err(e) => {
                tracing::warn!(
                    error = %e,
                    "cannot start the process reaper; a command tool's children may outlive a killed runner"
                );
                None
            }
        }
    }

    /// Sends one line to the reaper, starting it first if this is the first. A reaper
    /// that is gone is dropped: nothing to do about it but go on.
    fn tell(line: &str) {
        let slot = REAPER.get_or_init(|| Mutex::new(Self::start()));
        let Ok(mut pipe) = slot.lock() else { return };
        if let Some(stdin) = pipe.as_mut()
            && stdin.write_all(line.as_bytes()).is_err()
        {
            *pipe = None;
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use std::io::Write as _;
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};

    use super::REAPER_SCRIPT;

    fn alive(pgid: u32) -> bool {
        Command::new("kill")
            .args(["-0", "--", &format!("-{pgid}")])
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    }

    fn sleeper() -> std::io::Result<std::process::Child> {
        let mut c = Command::new("sleep");
        std::os::unix::process::CommandExt::process_group(&mut c, 0);
        c.arg("30").spawn()
    }

    #[test]
    fn at_end_of_input_the_reaper_kills_the_groups_still_listed_and_only_those() {
        let (mut listed, mut removed) = (sleeper().unwrap(), sleeper().unwrap());
        let mut reaper = Command::new("sh")
            .args(["-c", REAPER_SCRIPT])
            .stdin(Stdio::piped())
            .spawn()
            .unwrap();
        let mut pipe = reaper.stdin.take().unwrap();
        let (a, b) = (listed.id(), removed.id());
        writeln!(pipe, "+{a}\n+{b}\n-{b}").unwrap();
        drop(pipe);
        reaper.wait().unwrap();
        // Killed, not ended by its own 30 s: it is gone well before.
        let deadline = Instant::now() + Duration::from_secs(5);
        let mut ended = None;
        while ended.is_none() && Instant::now() < deadline {
            ended = listed.try_wait().unwrap();
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = listed.kill();
        assert!(
            ended.is_some_and(|s| !s.success()),
            "the listed group outlived the reaper's end of input"
        );
        assert!(alive(b), "a group taken off the list was killed");
        let _ = removed.kill();
        let _ = removed.wait();
    }
}
