//! The seal that keeps the marker-type sets closed.

/// Implemented only inside this crate: downstream crates cannot add products,
/// locations, run modes or attributes, so the rules table stays complete.
pub trait Sealed {}
