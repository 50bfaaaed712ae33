//! Arbitrary text as a request through the model-free planner on the built-in catalog
//! (what `waypoint plan "TEXT"` does), and the same bytes as the JSON body of
//! `POST /v1/plan`. The engine is built once. Never a panic.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use waypoint_core::{Engine, Options};
use waypoint_protocol::RequestInput;

fn engine() -> &'static Engine {
    static ENGINE: OnceLock<Engine> = OnceLock::new();
    ENGINE.get_or_init(|| {
        let loaded = waypoint_catalog::builtin().expect("the built-in catalog loads");
        Engine::new(loaded.catalog, Options::default()).expect("the engine builds")
    })
}

fuzz_target!(|data: &[u8]| {
    let engine = engine();
    let text = String::from_utf8_lossy(data);
    let _ = engine.plan(&text, None);
    if let Ok(input) = serde_json::from_slice::<RequestInput>(data) {
        let _ = engine.plan(&input.request, input.context.as_ref());
    }
});
