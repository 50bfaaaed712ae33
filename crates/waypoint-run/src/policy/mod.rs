//! What a run's calls may reach: hosts for outbound HTTP ([`destination`]) and the
//! ranges behind it ([`ranges`]).

pub mod destination;
pub mod ranges;

pub use destination::{DestinationError, Destinations};
