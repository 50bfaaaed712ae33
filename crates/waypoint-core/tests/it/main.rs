//! Integration tests of the core stages on the built-in catalog, one module per area.

#![allow(
    clippy::unwrap_used,
    clippy::missing_panics_doc,
    clippy::needless_pass_by_value,
    reason = "test helpers fail loudly on purpose"
)]

mod args;
mod fuzz_replay;
mod guards;
mod meaning;
mod objects;
mod plans;
mod prerequisites;
mod properties;
mod questions;
mod shared_objects;
mod stages;
mod stored_plans;
mod trained;

use std::sync::OnceLock;

use waypoint_core::{Engine, Options};

/// One engine over the built-in catalog, shared by every test.
pub fn engine() -> &'static Engine {
    static ENGINE: OnceLock<Engine> = OnceLock::new();
    ENGINE.get_or_init(|| {
        let catalog = waypoint_catalog::builtin().unwrap().catalog;
        Engine::new(catalog, Options::default()).unwrap()
    })
}

/// An engine over one catalog file given as text.
pub fn engine_over(name: &str, text: &str) -> Engine {
    let catalog = waypoint_catalog::load(&[waypoint_catalog::Source {
        name: name.into(),
        text: text.into(),
    }])
    .unwrap()
    .catalog;
    Engine::new(catalog, Options::default()).unwrap()
}

/// The tools of a plan on the built-in catalog, in order.
pub fn tools(request: &str) -> Vec<String> {
    tools_of(engine(), request)
}

/// The tools of a plan, in order.
pub fn tools_of(engine: &Engine, request: &str) -> Vec<String> {
    engine
        .plan(request, None)
        .unwrap()
        .steps()
        .iter()
        .map(|s| s.tool.clone())
        .collect()
}

/// The score `engine` gives `id` for the request's first clause, 0 where it is not ranked.
pub fn score_of(engine: &Engine, request: &str, id: &str) -> f64 {
    let route = engine.route(request, None).unwrap().remove(0);
    route
        .recommendation
        .iter()
        .chain(&route.alternatives)
        .find(|c| c.id == id)
        .map_or(0.0, |c| c.score)
}
