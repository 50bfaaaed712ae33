//! The working directory as the one place file paths from args may point.
//!
//! Paths come from request text, so a refusal must not tell whether something outside
//! exists: every path that leaves the directory gets the same answer, decided before
//! anything outside is read.

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
}
