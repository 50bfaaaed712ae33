//! The one interface every history backend implements.

use std::future::Future;

use crate::model::{Forget, HistoryFilter, HistoryRow, Page, StoreError};

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

    /// A caller's unexpired rows at `now` matching the filter, newest first, as a page
    /// whose cursor (`filter.after`) reads the next.
    fn history_page(
        &self,
        caller: &str,
        filter: &HistoryFilter,
        now: i64,
    ) -> impl Future<Output = Result<Page<HistoryRow>, StoreError>> + Send;

    /// The rows of [`HistoryStore::history_page`] without the cursor.
    fn history(
        &self,
        caller: &str,
        filter: &HistoryFilter,
        now: i64,
    ) -> impl Future<Output = Result<Vec<HistoryRow>, StoreError>> + Send {
        async move { Ok(self.history_page(caller, filter, now).await?.items) }
    }

    /// Removes a caller's rows; returns how many went.
    fn forget(
        &self,
        caller: &str,
        what: &Forget,
    ) -> impl Future<Output = Result<u64, StoreError>> + Send;

    /// Removes every caller's rows expired at `now`.
    fn purge_expired(&self, now: i64) -> impl Future<Output = Result<u64, StoreError>> + Send;
}
