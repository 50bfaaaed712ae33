//! Reading user-named files and streams with a ceiling.
//!
//! `--catalog /dev/zero`, `--context @/dev/zero` or an endless pipe on standard input
//! would otherwise be read until memory runs out: the size a file reports cannot be
//! trusted (devices, FIFOs and `/proc` say 0), so the ceiling is enforced while reading,
//! never by asking first. Every such read in the workspace goes through here.

use std::io::Read;
use std::path::Path;

/// The most any one input file or stream may hold: a catalog file, a context file, a
/// request on standard input, a config or cases file.
pub const MAX_INPUT_BYTES: u64 = 16 * 1024 * 1024;

/// The inner error of an [`std::io::Error`] of kind `FileTooLarge`, for callers that
/// want the limit back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("larger than the limit of {limit} bytes (reading stopped there)")]
pub struct TooLarge {
    pub limit: u64,
}

/// Reads `reader` to the end as UTF-8, stopping with an error once it has given more
/// than `limit` bytes.
pub fn read_stream(reader: impl Read, limit: u64) -> std::io::Result<String> {
    let mut bytes = Vec::new();
    reader
        .take(limit.saturating_add(1))
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(std::io::Error::new(
            std::io::ErrorKind::FileTooLarge,
            TooLarge { limit },
        ));
    }
    String::from_utf8(bytes)
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e.utf8_error()))
}

/// Reads the file at `path` as UTF-8, at most `limit` bytes; callers name the path in
/// their own error, as they did for `std::fs::read_to_string`.
pub fn read_file(path: impl AsRef<Path>, limit: u64) -> std::io::Result<String> {
    read_stream(std::fs::File::open(path)?, limit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_endless_file_stops_at_the_limit() {
        let err = read_file("/dev/zero", 1024).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::FileTooLarge);
        assert!(err.to_string().contains("1024 bytes"), "{err}");
        assert_eq!(read_stream(&b"abc"[..], 3).unwrap(), "abc");
        assert!(read_stream(&b"abcd"[..], 3).is_err());
    }
}
