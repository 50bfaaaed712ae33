//! What a run's calls may reach: hosts for outbound HTTP ([`destination`]) and the
//! ranges behind it ([`ranges`]); the argv a command gets from request text (`argv`),
//! the paths it may name (`paths`) and the URL paths of HTTP tools (`url`).

pub(crate) mod argv;
pub mod destination;
pub(crate) mod paths;
pub mod ranges;
pub(crate) mod url;

pub use destination::{DestinationError, Destinations};
