//! Instances take queued runs from the shared store and execute them.
//!
//! Claiming is the store's job ([`waypoint_store::RunStore::claim_run`] is atomic), so
//! any number of instances on one PostgreSQL store can poll the same queue: each run is
//! executed by exactly one of them, under the limits of the instance that claimed it.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use crate::ops::Server;

/// How long an idle worker waits before asking the queue again.
const IDLE: Duration = Duration::from_millis(100);

/// Starts `n` workers for `instance`; they run until the runtime stops. Does nothing
/// when runs are off or there is no store.
pub fn spawn_workers(app: &Arc<Server>, instance: &str, n: usize) {
    if !app.app.runs_allowed() || app.app.store().is_none() {
        return;
    }
    for i in 0..n {
        let app = app.clone();
        let instance = instance.to_string();
        tokio::spawn(async move {
            // Stagger the first poll so the workers do not ask in lockstep.
            tokio::time::sleep(IDLE * u32::try_from(i).unwrap_or(0) / 4).await;
            loop {
                if !work_once(&app, &instance).await {
                    tokio::time::sleep(IDLE).await;
                }
            }
        });
    }
}

/// Claims and drives one run; `false` when the queue was empty or something failed (the
/// worker waits a moment before it asks again).
async fn work_once(server: &Server, instance: &str) -> bool {
    match server.app.run_next_queued(instance).await {
        Ok(None) => false,
        Ok(Some(report)) => {
            server.metrics.runs_claimed.fetch_add(1, Ordering::Relaxed);
            server.metrics.run_finished(report.status.as_str());
            true
        }
        Err(e) => {
            tracing::warn!(error = %e, "a queued run failed to run");
            server.metrics.run_finished("error");
            false
        }
    }
}
