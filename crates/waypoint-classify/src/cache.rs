//! Trained models cached on disk by the digest of what trained them, so a start-up or a
//! reload with the same catalog and examples does not train again.

use std::path::{Path, PathBuf};

use crate::model::{Model, Settings, TrainingSet};

/// How the model was obtained.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// Read from this cache file.
    Cached(PathBuf),
    /// Trained now and written to this file.
    Trained(PathBuf),
    /// Trained now; the cache could not be used, for the reason given.
    TrainedUncached(String),
}

/// The cache file for a training key.
pub fn path_for(dir: &Path, key: &[u8; 32]) -> PathBuf {
    file_for(dir, "router", key)
}

/// The cache file named `{prefix}-{key}.bin` (the key's first half in hex).
pub fn file_for(dir: &Path, prefix: &str, key: &[u8; 32]) -> PathBuf {
    let hex: String = key[..16].iter().fold(String::new(), |mut s, b| {
        use std::fmt::Write as _;
        let _ = write!(s, "{b:02x}");
        s
    });
    dir.join(format!("{prefix}-{hex}.bin"))
}

/// Reads the model for this set from `dir`, or trains it and writes it there. A missing,
/// damaged or mismatched file means training; an unwritable directory only means the
/// next start trains again.
pub fn load_or_train(dir: &Path, set: &TrainingSet, settings: &Settings) -> (Model, Source) {
    let key = set.key(settings);
    let path = path_for(dir, &key);
    let mut why_not = None;
    match std::fs::read(&path) {
        Ok(bytes) => match Model::from_bytes(&bytes) {
            Ok(model) if model.key() == key => return (model, Source::Cached(path)),
            Ok(_) => why_not = Some(format!("{} belongs to other training data", path.display())),
            Err(e) => why_not = Some(format!("{}: {e}", path.display())),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => why_not = Some(format!("{}: {e}", path.display())),
    }
    let model = Model::train(set, settings);
    match write_atomically(dir, &path, &model.to_bytes()) {
        Ok(()) => (model, Source::Trained(path)),
        Err(e) => {
            let reason = why_not.map_or_else(
                || format!("{}: {e}", dir.display()),
                |w| format!("{w}; {}: {e}", dir.display()),
            );
            (model, Source::TrainedUncached(reason))
        }
    }
}

/// Writes beside the target and renames, so a reader never sees half a file.
pub fn write_atomically(dir: &Path, path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}
