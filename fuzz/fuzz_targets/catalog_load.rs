//! Arbitrary bytes as one catalog file through the real loader: UTF-8 and size checks,
//! the bounded YAML reader, the model, plan documents and validation. It must answer
//! `Ok` or a typed error with a message, never panic, within the memory limit.
#![no_main]

use libfuzzer_sys::fuzz_target;
use waypoint_catalog::{CatalogError, Source, load};

fuzz_target!(|data: &[u8]| {
    let source = match Source::from_bytes("fuzz.yaml", data) {
        Ok(source) => source,
        Err(e) => {
            assert!(matches!(e, CatalogError::Io { .. }), "{e:?}");
            return;
        }
    };
    match load(&[source]) {
        Ok(loaded) => {
            for w in &loaded.warnings {
                assert!(!w.is_error());
                let _ = w.render();
            }
            let catalog = &loaded.catalog;
            for t in catalog.tools() {
                assert!(catalog.entry(&t.name).is_some());
                let _ = catalog.validator(&t.name);
            }
        }
        Err(CatalogError::Invalid { diagnostics }) => {
            assert!(diagnostics.iter().any(|d| d.is_error()));
            for d in &diagnostics {
                assert!(!d.message.is_empty());
                let _ = d.render();
            }
        }
        Err(e) => panic!("a loaded text failed as {e:?}"),
    }
});
