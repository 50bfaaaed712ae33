//! What a long-lived application plans and runs with — the engine, the planner and the
//! configuration they came from — swapped whole when a catalog or the config changes.
//!
//! A request takes a [`Snapshot`] and keeps it to the end, so a reload never changes a
//! plan half-way and never pairs a new catalog with an old configuration. A reload that
//! fails is reported — in the log, on `/healthz` and in `/metrics` — and the snapshot
//! that worked stays in service.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::{Duration, SystemTime};

use waypoint_core::Engine;

use crate::config::Config;
use crate::planner::Planner;

/// One consistent state: the engine, the planner over it and the configuration both
/// came from.
pub struct Snapshot {
    pub engine: Arc<Engine>,
    pub planner: Planner,
    pub config: Config,
}

impl Snapshot {
    /// An engine with the default planner (learned, else deterministic; no model) and
    /// the built-in configuration.
    pub fn of(engine: Engine) -> Self {
        Self {
            engine: Arc::new(engine),
            planner: Planner::default(),
            config: Config::default(),
        }
    }
}

/// Builds a fresh snapshot from the catalog files, training files and config the
/// application started with.
pub type Loader = Box<dyn Fn() -> Result<Snapshot, String> + Send + Sync>;

/// The snapshot in service and how it got there.
pub struct Live {
    current: RwLock<Arc<Snapshot>>,
    loader: Option<Loader>,
    /// The files whose change triggers a reload.
    watched: Vec<PathBuf>,
    last_error: Mutex<Option<String>>,
    /// Successful loads, the first one included.
    pub loads: AtomicU64,
    pub failed_loads: AtomicU64,
}

impl Live {
    /// A snapshot that never reloads (one-shot commands, tests, embedding).
    pub fn fixed(snapshot: Snapshot) -> Self {
        Self::new(snapshot, None, Vec::new())
    }

    /// A snapshot that `loader` can rebuild; `watched` are the catalog files and
    /// directories (and config) to watch.
    pub fn new(snapshot: Snapshot, loader: Option<Loader>, watched: Vec<PathBuf>) -> Self {
        Self {
            current: RwLock::new(Arc::new(snapshot)),
            loader,
            watched,
            last_error: Mutex::new(None),
            loads: AtomicU64::new(1),
            failed_loads: AtomicU64::new(0),
        }
    }

    /// The snapshot to serve this request with.
    pub fn get(&self) -> Arc<Snapshot> {
        self.current
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Why the last reload failed, while the old catalog is still in service.
    pub fn last_error(&self) -> Option<String> {
        self.last_error
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Loads the catalog again; on error keeps the engine in service and says why.
    pub fn reload(&self) -> Result<(), String> {
        let Some(loader) = &self.loader else {
            return Err("this catalog is fixed".into());
        };
        let result = loader();
        let mut last = self
            .last_error
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        match result {
            Ok(snapshot) => {
                *self.current.write().unwrap_or_else(PoisonError::into_inner) = Arc::new(snapshot);
                self.loads.fetch_add(1, Ordering::Relaxed);
                *last = None;
                Ok(())
            }
            Err(e) => {
                self.failed_loads.fetch_add(1, Ordering::Relaxed);
                *last = Some(e.clone());
                Err(e)
            }
        }
    }

    /// Reloads on SIGHUP and, every `every` (zero: never), when a watched file's size or
    /// modification time changed. Runs until the task is dropped.
    pub async fn watch(self: Arc<Self>, every: Duration) {
        let mut seen = fingerprint(&self.watched);
        let mut hangup = hangup_signal();
        let mut tick = tokio::time::interval(if every.is_zero() {
            Duration::from_hours(1)
        } else {
            every
        });
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            let why = tokio::select! {
                () = recv(&mut hangup) => "SIGHUP",
                _ = tick.tick() => {
                    if every.is_zero() {
                        continue;
                    }
                    let now = fingerprint(&self.watched);
                    if now == seen {
                        continue;
                    }
                    seen = now;
                    "a catalog file changed"
                }
            };
            match self.reload() {
                Ok(()) => {
                    let e = self.get().engine.clone();
                    tracing::info!(
                        tools = e.catalog().tools().len(),
                        pipelines = e.catalog().pipelines().len(),
                        plans = e.catalog().plans().len(),
                        "catalog reloaded ({why})"
                    );
                }
                Err(e) => tracing::error!(
                    error = %e,
                    "catalog not reloaded ({why}); the previous one stays in service"
                ),
            }
        }
    }
}

#[cfg(unix)]
type Hangup = Option<tokio::signal::unix::Signal>;
#[cfg(not(unix))]
type Hangup = Option<()>;

#[cfg(unix)]
fn hangup_signal() -> Hangup {
    tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup()).ok()
}
#[cfg(not(unix))]
fn hangup_signal() -> Hangup {
    None
}

#[cfg(unix)]
async fn recv(h: &mut Hangup) {
    match h {
        Some(s) => {
            s.recv().await;
        }
        None => std::future::pending().await,
    }
}
#[cfg(not(unix))]
async fn recv(_: &mut Hangup) {
    std::future::pending().await;
}

/// Size and modification time of every file under the watched paths, in order.
fn fingerprint(paths: &[PathBuf]) -> Vec<(PathBuf, u64, Option<SystemTime>)> {
    let mut out = Vec::new();
    for p in paths {
        walk(p, &mut out, 0);
    }
    out.sort();
    out
}

fn walk(p: &Path, out: &mut Vec<(PathBuf, u64, Option<SystemTime>)>, depth: u32) {
    let Ok(meta) = std::fs::metadata(p) else {
        out.push((p.to_path_buf(), u64::MAX, None));
        return;
    };
    if meta.is_dir() {
        if depth > 8 {
            return;
        }
        if let Ok(entries) = std::fs::read_dir(p) {
            for e in entries.flatten() {
                walk(&e.path(), out, depth + 1);
            }
        }
    } else {
        out.push((p.to_path_buf(), meta.len(), meta.modified().ok()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn engine(file: &Path) -> Result<Snapshot, String> {
        let loaded = waypoint_catalog::Catalog::from_paths(&[file]).map_err(|e| e.to_string())?;
        let engine = Engine::new(loaded.catalog, waypoint_core::Options::default())
            .map_err(|e| e.to_string())?;
        Ok(Snapshot {
            engine: Arc::new(engine),
            planner: Planner::default(),
            config: Config::default(),
        })
    }

    const ONE: &str =
        "tools:\n  - name: git_status\n    description: Show the working tree status\n";

    #[test]
    fn a_failed_reload_keeps_the_engine_in_service() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("catalog.yaml");
        std::fs::write(&file, ONE).unwrap();
        let f = file.clone();
        let loader: Loader = Box::new(move || engine(&f));
        let live = Live::new(engine(&file).unwrap(), Some(loader), vec![file.clone()]);
        std::fs::write(&file, "tools: [oops").unwrap();
        assert!(live.reload().is_err());
        assert_eq!(
            live.get().engine.catalog().tools().len(),
            1,
            "old catalog kept"
        );
        assert!(live.last_error().is_some());
        std::fs::write(
            &file,
            format!("{ONE}  - name: git_log\n    description: Show commit logs\n"),
        )
        .unwrap();
        live.reload().unwrap();
        assert_eq!(live.get().engine.catalog().tools().len(), 2);
        assert_eq!(live.last_error(), None);
        assert_eq!(live.loads.load(Ordering::Relaxed), 2);
        assert_eq!(live.failed_loads.load(Ordering::Relaxed), 1);
    }

    #[test]
    fn the_fingerprint_sees_a_changed_file_in_a_directory() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.yaml"), "x").unwrap();
        let before = fingerprint(&[dir.path().to_path_buf()]);
        std::fs::write(dir.path().join("a.yaml"), "xy").unwrap();
        assert_ne!(before, fingerprint(&[dir.path().to_path_buf()]));
    }
}
