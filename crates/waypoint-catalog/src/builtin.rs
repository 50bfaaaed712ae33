//! The default catalog compiled into the binary: a content studio, a coding assistant
//! and an agent studio, so that `waypoint plan` works with no set-up at all.

use crate::diagnostic::CatalogError;
use crate::load::{Loaded, Source, load};

/// The built-in files as (name, text).
pub const BUILTIN_SOURCES: [(&str, &str); 3] = [
    ("builtin:code.yaml", include_str!("../builtin/code.yaml")),
    (
        "builtin:content.yaml",
        include_str!("../builtin/content.yaml"),
    ),
    (
        "builtin:studio.yaml",
        include_str!("../builtin/studio.yaml"),
    ),
];

pub fn builtin_sources() -> Vec<Source> {
    BUILTIN_SOURCES
        .iter()
        .map(|(name, text)| Source {
            name: (*name).to_string(),
            text: (*text).to_string(),
        })
        .collect()
}

/// Loads the built-in catalog (a test keeps it free of errors).
pub fn builtin() -> Result<Loaded, CatalogError> {
    load(&builtin_sources())
}
