//! The one interface every history backend implements.

use std::future::Future;

use crate::model::{Forget, HistoryFilter, HistoryRow, StoreError};

/// A place where plan history lives, shared by any number of processes.
///
/// Reads never return expired rows; `purge_expired` deletes them for good.
pub trait HistoryStore: Send + Sync {
    /// Appends one row.
    fn record(&self, row: &HistoryRow) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Appends rows in one transaction: all are committed, or none.
    fn record_many(
        &self,
        rows: &[HistoryRow],
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// A caller's unexpired rows at `now` matching the filter, newest first.
    fn history(
        &self,
        caller: &str,
        filter: &HistoryFilter,
        now: i64,
    ) -> impl Future<Output = Result<Vec<HistoryRow>, StoreError>> + Send;

    /// Removes a caller's rows; returns how many went.
    fn forget(
        &self,
        caller: &str,
        what: &Forget,
    ) -> impl Future<Output = Result<u64, StoreError>> + Send;

    /// Removes every caller's rows expired at `now`.
    fn purge_expired(&self, now: i64) -> impl Future<Output = Result<u64, StoreError>> + Send;
}
