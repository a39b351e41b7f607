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

/// The release `Self` is `Min` or a later one: one impl per pair, generated
/// from the table of releases, so a release that is too old fails at the
/// pair (`Cann8_1: Reaches<Cann8_2>`) and the compiler names the release
/// the code needs. `V: AtLeast<Cann8_5>` in generic code also proves
/// `V: Reaches<Cann8_1>`: `AtLeast` lists the older pairs as supertraits,
/// through [`Ordered`]. Not nameable outside this crate:
/// [`AtLeast`](crate::AtLeast) is the public face.
pub trait Reaches<Min> {}

/// The release before this one in the table (the oldest: itself).
pub trait Ordered {
    /// The release before.
    type Previous: crate::CannType;
}
