//! The seal that keeps the marker-type sets closed.

/// Implemented only inside this crate: downstream crates cannot add products,
/// locations, run modes or attributes, so the rules table stays complete.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be an aclmem marker type: products, run modes, locations and attributes are closed sets",
    label = "not one of aclmem-core's marker types",
    note = "the sets are sealed so that the rules table stays complete; use the markers aclmem-core exports"
)]
pub trait Sealed {}
