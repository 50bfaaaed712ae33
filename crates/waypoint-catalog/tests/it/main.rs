//! Integration tests of catalog loading, one module per area.

#![allow(
    clippy::unwrap_used,
    clippy::missing_panics_doc,
    clippy::needless_pass_by_value,
    reason = "test helpers fail loudly on purpose"
)]

mod fuzz_replay;
mod hostile;
mod load;
mod plans;

use std::path::PathBuf;

pub fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}
