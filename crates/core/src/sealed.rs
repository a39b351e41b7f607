//! The seal that keeps the marker-type sets closed, and the order of
//! releases behind [`AtLeast`](crate::AtLeast).

/// Implemented only inside this crate: downstream crates cannot add products,
/// locations, run modes or attributes, so the rules table stays complete.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be an aclmem marker type: products, run modes, locations and attributes are closed sets",
    label = "not one of aclmem-core's marker types",
    note = "the sets are sealed so that the rules table stays complete; use the markers aclmem-core exports"
)]
pub trait Sealed {}

/// The release `Self` is `Min` or a later one. Generated as a chain from
/// the table of releases (each version reaches the next older one's
/// predecessors through it), so that `V: AtLeast<Cann8_5>` in generic code
/// also proves `V: Reaches<Cann8_1>`. Not nameable outside this crate:
/// [`AtLeast`](crate::AtLeast) is the public face.
pub trait Reaches<Min> {}
