//! A command tool's processes as one group, so that ending the tool ends everything it
//! started.
//!
//! Killing only the process we started leaves its children running: a tool's
//! `(sleep 4; echo late > f) & wait` would still write `f` after its step was reported
//! failed. Each tool is started as the leader of its own process group and the whole
//! group is killed when the call ends for any reason — finished, timed out, over a
//! limit, or cancelled (the call's future dropped). The runner's own death by SIGKILL is
//! not covered (docs/run.md, Commands and request text).

/// Kills the process group led by a tool when dropped.
pub(super) struct Group {
    #[cfg(unix)]
    leader: Option<rustix::process::Pid>,
}

impl Group {
    /// The group of a child started with `process_group(0)`, whose id is `pid`.
    pub(super) fn led_by(pid: Option<u32>) -> Self {
        #[cfg(unix)]
        {
            let leader = pid
                .and_then(|p| i32::try_from(p).ok())
                .and_then(rustix::process::Pid::from_raw);
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
        }
    }
}
