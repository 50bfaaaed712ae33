//! Errors of the core stages.

/// What can go wrong while building an engine or planning.
#[derive(Debug, thiserror::Error)]
pub enum CoreError {
    /// The built-in vocabulary file is malformed; a build-time bug, caught by tests.
    #[error("built-in lexicon is invalid: {0}")]
    Lexicon(String),
    /// The request is empty or only white space.
    #[error(
        "the request is empty; say what you want done, e.g. \"summarize https://example.com/report.pdf\""
    )]
    EmptyRequest,
    /// The request is larger than the configured limit.
    #[error("the request is {len} bytes, over the limit of {max} bytes")]
    RequestTooLarge { len: usize, max: usize },
}
