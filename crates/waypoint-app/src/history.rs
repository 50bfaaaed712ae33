//! Plan history off the request path.
//!
//! A one-shot command writes its row and returns only once it is committed. A server
//! hands rows to a [`Recorder`]: a bounded queue drained by one task that commits them
//! in batches — when `max_batch` rows are waiting or `window` has passed since the first
//! — so a burst of plans costs one transaction, not one each. A full queue makes the
//! caller wait (back-pressure); nothing is dropped. What can be lost is what a crash
//! takes before its batch commits: at most the rows of one window.
//!
//! Learned-plan lookups read the caller's newest rows of the request's intent. A server
//! keeps them in a [`LearnedCache`], updated with every row this instance records and
//! read again from the store once an entry is older than the refresh period, so rows
//! other instances write are seen within that period.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use tokio::sync::{mpsc, oneshot};
use waypoint_store::{HistoryFilter, HistoryRow, HistoryStore as _, LEARN_WINDOW, LearnRule};
use waypoint_stores::Store;

/// How a [`Recorder`] batches.
#[derive(Debug, Clone, Copy)]
pub struct WriteBehind {
    /// Rows the queue holds before `record` waits.
    pub capacity: usize,
    /// Most rows in one transaction.
    pub max_batch: usize,
    /// Longest a row waits for others before its batch commits.
    pub window: Duration,
    /// Age at which a learned-plan cache entry is read again from the store.
    pub learned_refresh: Duration,
}

impl Default for WriteBehind {
    fn default() -> Self {
        Self {
            capacity: 8_192,
            max_batch: 2048,
            window: Duration::from_millis(5),
            learned_refresh: Duration::from_secs(1),
        }
    }
}

enum Msg {
    Row(Box<HistoryRow>),
    /// Answered once everything queued before it is committed (or failed).
    Flush(oneshot::Sender<()>),
}

/// The write-behind queue and the task that drains it.
pub struct Recorder {
    tx: mpsc::Sender<Msg>,
    counts: Arc<Counts>,
}

/// What a recorder has done, for `/metrics` and the crash test.
#[derive(Debug, Default)]
pub struct Counts {
    /// Rows handed to the recorder.
    pub queued: AtomicU64,
    /// Rows committed to the store.
    pub flushed: AtomicU64,
    /// Rows whose batch the store refused (logged).
    pub failed: AtomicU64,
    /// Transactions committed.
    pub batches: AtomicU64,
}

impl Recorder {
    /// Starts the writer task on the current runtime.
    pub fn spawn(store: Arc<Store>, config: WriteBehind) -> Self {
        let (tx, rx) = mpsc::channel(config.capacity.max(1));
        let counts = Arc::new(Counts::default());
        tokio::spawn(drain(store, rx, config, counts.clone()));
        Self { tx, counts }
    }

    /// Queues a row; waits while the queue is full.
    pub async fn record(&self, row: HistoryRow) {
        self.counts.queued.fetch_add(1, Ordering::Relaxed);
        if self.tx.send(Msg::Row(Box::new(row))).await.is_err() {
            // The writer is gone only when the runtime is shutting down.
            self.counts.failed.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Returns once every row queued before this call is committed (or has failed).
    pub async fn flush(&self) {
        let (done, wait) = oneshot::channel();
        if self.tx.send(Msg::Flush(done)).await.is_ok() {
            let _ = wait.await;
        }
    }

    pub fn counts(&self) -> &Counts {
        &self.counts
    }
}

async fn drain(
    store: Arc<Store>,
    mut rx: mpsc::Receiver<Msg>,
    config: WriteBehind,
    counts: Arc<Counts>,
) {
    let mut batch: Vec<HistoryRow> = Vec::with_capacity(config.max_batch);
    let mut waiting: Vec<oneshot::Sender<()>> = Vec::new();
    while let Some(first) = rx.recv().await {
        let deadline = tokio::time::Instant::now() + config.window;
        let mut next = Some(first);
        while let Some(msg) = next.take() {
            match msg {
                Msg::Row(row) => batch.push(*row),
                Msg::Flush(done) => {
                    waiting.push(done);
                    break;
                }
            }
            if batch.len() >= config.max_batch {
                break;
            }
            next = match tokio::time::timeout_at(deadline, rx.recv()).await {
                Ok(Some(m)) => Some(m),
                Ok(None) | Err(_) => None,
            };
        }
        if !batch.is_empty() {
            let n = batch.len() as u64;
            match store.record_many(&batch).await {
                Ok(()) => {
                    counts.flushed.fetch_add(n, Ordering::Relaxed);
                    counts.batches.fetch_add(1, Ordering::Relaxed);
                }
                Err(e) => {
                    counts.failed.fetch_add(n, Ordering::Relaxed);
                    tracing::error!(rows = n, error = %e, "cannot record plan history rows");
                }
            }
            batch.clear();
        }
        for done in waiting.drain(..) {
            let _ = done.send(());
        }
    }
}

/// The newest rows of each (caller, intent) a learned-plan lookup reads.
pub struct LearnedCache {
    entries: Mutex<HashMap<(String, String), Entry>>,
    refresh: Duration,
}

struct Entry {
    /// Newest first, at most [`LEARN_WINDOW`].
    rows: Vec<HistoryRow>,
    read_at: Instant,
    /// A lookup is reading it again from the store.
    reading: bool,
}

/// Entries kept before the cache starts over; each is at most [`LEARN_WINDOW`] rows.
const MAX_ENTRIES: usize = 50_000;

impl LearnedCache {
    pub fn new(refresh: Duration) -> Self {
        Self {
            entries: Mutex::new(HashMap::new()),
            refresh,
        }
    }

    /// The learned tool sequence for `caller`'s `request`, from the cache while its
    /// entry is fresh, else from `store` (after `recorder` committed what it holds, so
    /// the store has every row this instance wrote). While one lookup reads an entry
    /// again, the others answer from the entry as it was, so a busy key costs one read
    /// per refresh period, not one per request.
    pub async fn learned(
        &self,
        store: &Store,
        recorder: &Recorder,
        caller: &str,
        request: &str,
        rule: LearnRule,
        now: i64,
    ) -> Result<Option<Vec<String>>, waypoint_store::StoreError> {
        let key = (caller.to_string(), waypoint_store::intent_sha(request));
        {
            let mut entries = self.lock();
            if let Some(e) = entries.get_mut(&key) {
                if e.read_at.elapsed() < self.refresh || e.reading {
                    return Ok(waypoint_store::learned(&e.rows, rule));
                }
                e.reading = true;
            }
        }
        recorder.flush().await;
        let filter = HistoryFilter {
            intent_sha: Some(key.1.clone()),
            limit: Some(LEARN_WINDOW),
            ..HistoryFilter::default()
        };
        let read = store.history(caller, &filter, now).await;
        let mut entries = self.lock();
        let rows = match read {
            Ok(rows) => rows,
            Err(e) => {
                if let Some(entry) = entries.get_mut(&key) {
                    entry.reading = false;
                }
                return Err(e);
            }
        };
        let learned = waypoint_store::learned(&rows, rule);
        if entries.len() >= MAX_ENTRIES {
            entries.clear();
        }
        entries.insert(
            key,
            Entry {
                rows,
                read_at: Instant::now(),
                reading: false,
            },
        );
        Ok(learned)
    }

    /// Keeps a cached entry in step with a row this instance records.
    pub fn note(&self, row: &HistoryRow) {
        let mut entries = self.lock();
        if let Some(e) = entries.get_mut(&(row.caller.clone(), row.intent_sha.clone())) {
            e.rows.insert(0, row.clone());
            e.rows.truncate(LEARN_WINDOW as usize);
        }
    }

    /// Drops a caller's entries (after `forget`).
    pub fn forget(&self, caller: &str) {
        self.lock().retain(|(c, _), _| c != caller);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<(String, String), Entry>> {
        self.entries.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
