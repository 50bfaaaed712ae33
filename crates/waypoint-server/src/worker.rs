//! Instances take queued runs from the shared store and execute them.
//!
//! Claiming is the store's job ([`waypoint_store::RunStore::claim_run`] is atomic), so
//! any number of instances on one PostgreSQL store can poll the same queue: each run is
//! executed by exactly one of them, under the limits of the instance that claimed it.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use waypoint_store::{RunStore as _, now_unix};

use crate::app::App;

/// How long an idle worker waits before asking the queue again.
const IDLE: Duration = Duration::from_millis(100);

/// Starts `n` workers for `instance`; they run until the runtime stops. Does nothing
/// when runs are off or there is no store.
pub fn spawn_workers(app: &Arc<App>, instance: &str, n: usize) {
    if app.run_policy.is_none() || app.store.is_none() {
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

/// Claims and drives one run; `false` when the queue was empty (or the store failed).
async fn work_once(app: &App, instance: &str) -> bool {
    // Claim only what this instance may run.
    let (Some(store), true) = (&app.store, app.run_policy.is_some()) else {
        return false;
    };
    // Claims are stamped in the journal's unit (unix milliseconds).
    let now = now_unix() * 1000;
    let row = match store.claim_run(instance, now).await {
        Ok(Some(row)) => row,
        Ok(None) => return false,
        Err(e) => {
            eprintln!("waypoint: cannot claim a run: {e}");
            return false;
        }
    };
    app.metrics.runs_claimed.fetch_add(1, Ordering::Relaxed);
    let engine = app.engine.get();
    let caller = row.caller.clone();
    let run_id = row.run_id.clone();
    let result = app
        .with_runner(&engine, &caller, async |runner| {
            runner.run_claimed(row).await
        })
        .await;
    match result {
        Ok(report) => app.metrics.run_finished(report.status.as_str()),
        Err(e) => {
            eprintln!("waypoint: run {run_id} failed to run: {}", e.message());
            app.metrics.run_finished("error");
        }
    }
    true
}
