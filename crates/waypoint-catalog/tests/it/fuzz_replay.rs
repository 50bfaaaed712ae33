//! The inputs kept from the `catalog_load` fuzz campaign (docs/security.md, "Fuzzing"),
//! replayed as the fuzz target feeds them: bytes as one catalog file through
//! [`Source::from_bytes`] and [`load`]. Each must load or fail with a typed error that
//! says what is wrong, never panic.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

use waypoint_catalog::{CatalogError, Source, load};

fn cases(target: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fuzz_cases")
        .join(target);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no kept cases in {}", dir.display());
    files
}

/// What the fuzz target asserts of one input.
fn check(name: &str, bytes: &[u8]) {
    let source = match Source::from_bytes(name, bytes) {
        Ok(source) => source,
        Err(e) => {
            assert!(matches!(e, CatalogError::Io { .. }), "{e:?}");
            assert!(e.to_string().contains(name), "{e}");
            return;
        }
    };
    match load(&[source]) {
        Ok(loaded) => assert!(loaded.warnings.iter().all(|w| !w.is_error())),
        Err(CatalogError::Invalid { diagnostics }) => {
            assert!(
                diagnostics
                    .iter()
                    .any(waypoint_catalog::Diagnostic::is_error)
            );
            for d in &diagnostics {
                assert!(!d.message.trim().is_empty(), "{d:?}");
                assert!(d.render().contains(&d.message));
            }
        }
        Err(e) => panic!("a text failed to load as {e:?}"),
    }
}

#[test]
fn kept_fuzz_inputs_load_or_fail_with_a_typed_error() {
    let mut failed = Vec::new();
    for path in cases("catalog_load") {
        let bytes = std::fs::read(&path).unwrap();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if catch_unwind(AssertUnwindSafe(|| check(&name, &bytes))).is_err() {
            failed.push(name);
        }
    }
    assert!(failed.is_empty(), "panicked on {failed:?}");
}
