//! The working directory as the one place file paths from args may point, and what a
//! file tool may read there.
//!
//! Paths come from request text, so a refusal must not tell whether something outside
//! exists: every path that leaves the directory gets the same answer, decided before
//! anything outside is read. Inside, only regular files are read, and at most a bounded
//! number of bytes of each (see [`read_regular`]).

use std::path::{Component, Path, PathBuf};

use crate::adapters::ToolError;

/// Resolves `rel` against `base` (canonical) the way the kernel would — each symlink
/// followed where it stands, `..` applied after — and refuses a result outside `base`.
/// Parts that do not exist yet are kept as written, so a file about to be created can be
/// named.
pub(crate) fn confine(base: &Path, rel: &str) -> Result<PathBuf, ToolError> {
    let outside = || {
        ToolError::Denied(format!(
            "`{rel}` is outside the working directory {}",
            base.display()
        ))
    };
    let mut at = base.to_path_buf();
    for part in Path::new(rel).components() {
        match part {
            Component::Prefix(_) | Component::RootDir => at = PathBuf::from("/"),
            Component::CurDir => {}
            Component::ParentDir => {
                at.pop();
            }
            Component::Normal(name) => {
                at.push(name);
                if let Ok(real) = at.canonicalize() {
                    at = real;
                }
            }
        }
    }
    if at.starts_with(base) {
        Ok(at)
    } else {
        Err(outside())
    }
}

/// The text of the regular file at `path`, reading at most `limit` bytes and failing
/// past them (`waypoint_catalog::limited`, so a file that grows or lies about its size
/// stops there too). Anything else is refused before it is opened: a FIFO would block
/// the read until some writer came, a device may never end.
pub(crate) fn read_regular(path: &Path, limit: u64) -> std::io::Result<String> {
    if !std::fs::metadata(path)?.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file",
        ));
    }
    waypoint_catalog::limited::read_file(path, limit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_that_leave_the_working_directory_are_refused_alike() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let base = root.join("work");
        std::fs::create_dir(&base).unwrap();
        std::fs::write(base.join("a.txt"), "x").unwrap();
        std::fs::write(root.join("secret"), "x").unwrap();
        std::os::unix::fs::symlink(&root, base.join("up")).unwrap();
        assert_eq!(confine(&base, "a.txt").unwrap(), base.join("a.txt"));
        assert_eq!(confine(&base, "new/b.txt").unwrap(), base.join("new/b.txt"));
        let msg = |r: &str| confine(&base, r).unwrap_err().to_string();
        assert_eq!(
            msg("../secret").replace("../secret", "X"),
            msg("../nothing").replace("../nothing", "X")
        );
        for r in [
            "../",
            "/etc",
            "up/secret",
            "up/nothing",
            "a.txt/../../secret",
        ] {
            assert!(
                matches!(confine(&base, r), Err(ToolError::Denied(_))),
                "{r}"
            );
        }
    }

    #[test]
    fn unbounded_reads_stop_at_the_limit_and_fifos_are_not_opened() {
        let dir = tempfile::tempdir().unwrap();
        let small = dir.path().join("small.txt");
        std::fs::write(&small, "abc").unwrap();
        assert_eq!(read_regular(&small, 3).unwrap(), "abc");
        let big = dir.path().join("big.bin");
        std::fs::File::create(&big)
            .unwrap()
            .set_len(1 << 20)
            .unwrap();
        let err = read_regular(&big, 1024).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::FileTooLarge, "{err}");
        assert!(read_regular(dir.path(), 1024).is_err(), "a directory");
        let fifo = dir.path().join("pipe");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if made.is_ok_and(|s| s.success()) {
            // Opening a FIFO with no writer would block forever: it must be refused first.
            let (tx, rx) = std::sync::mpsc::channel();
            std::thread::spawn(move || tx.send(read_regular(&fifo, 1024).is_err()));
            let refused = rx.recv_timeout(std::time::Duration::from_secs(5));
            assert_eq!(refused, Ok(true), "reading a FIFO blocked or succeeded");
        }
    }
}
