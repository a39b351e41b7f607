//! The order of releases as code generic over one sees it: [`AtLeast`],
//! the bound that states the oldest release code needs, and [`Accepts`],
//! the leaf of every per-release rule. The pairs behind them are
//! generated from the table of releases (`releases!`'s `@order`).

use super::{CannType, CannVersion};
use crate::sealed::{Ordered, Reaches};

/// `Self` is the version `Min` or a later one: the bound for code generic
/// over the release that needs a feature introduced in `Min`. It implies
/// the same for every older release, so one bound covers every gate the
/// code passes:
///
/// ```
/// use aclmem_core::{AtLeast, AtlasA2, Cann8_5, Device, HbmHuge1G, Huge, PhysicalMemProp};
/// // `Huge` arrived in 8.5; `HbmHuge1G` (8.1), `Device` and A2 (8.0) earlier.
/// fn huge<V: AtLeast<Cann8_5>>() -> PhysicalMemProp<AtlasA2<V>, Device, Huge> {
///     PhysicalMemProp::on_device(0)
/// }
/// fn one_gib<V: AtLeast<Cann8_5>>() -> PhysicalMemProp<AtlasA2<V>, Device, HbmHuge1G> {
///     PhysicalMemProp::on_device(0)
/// }
/// # let _ = (huge::<aclmem_core::Cann9_0>(), one_gib::<Cann8_5>());
/// ```
///
/// Code generic over the product as well states what it allocates instead:
/// `P: Supports<Device, Huge>` (see [`Supports`](crate::Supports)).
#[diagnostic::on_unimplemented(
    message = "the bound `AtLeast<{Min}>` needs `{Min}` or later; this code targets `{Self}`",
    label = "`{Self}` is older than `{Min}`"
)]
pub trait AtLeast<Min: CannType>:
    CannType
    + Reaches<Min>
    + Reaches<Before<Min>>
    + Reaches<Before<Before<Min>>>
    + Reaches<Before<Before<Before<Min>>>>
    + Reaches<Before<Before<Before<Before<Min>>>>>
    + Reaches<Before<Before<Before<Before<Before<Min>>>>>>
    + Reaches<Before<Before<Before<Before<Before<Before<Min>>>>>>>
    + Reaches<Before<Before<Before<Before<Before<Before<Before<Min>>>>>>>>
    + Reaches<Before<Before<Before<Before<Before<Before<Before<Before<Min>>>>>>>>>
{
}

#[diagnostic::do_not_recommend]
impl<V, Min: CannType> AtLeast<Min> for V where
    V: CannType
        + Reaches<Min>
        + Reaches<Before<Min>>
        + Reaches<Before<Before<Min>>>
        + Reaches<Before<Before<Before<Min>>>>
        + Reaches<Before<Before<Before<Before<Min>>>>>
        + Reaches<Before<Before<Before<Before<Before<Min>>>>>>
        + Reaches<Before<Before<Before<Before<Before<Before<Min>>>>>>>
        + Reaches<Before<Before<Before<Before<Before<Before<Before<Min>>>>>>>>
        + Reaches<Before<Before<Before<Before<Before<Before<Before<Before<Min>>>>>>>>>
{
}

/// The release before `M` (the oldest: itself).
type Before<M> = <M as Ordered>::Previous;

// `AtLeast` names the 8 releases before its own: a table of more than 9
// releases needs one more level in both lists above.
const _: () = assert!(
    CannVersion::COUNT <= 9,
    "AtLeast's supertraits reach 8 releases back: add one level"
);

/// Version `Self` accepts `What` (a product, location or attribute marker),
/// which exists from version `Since` on: the leaf of every per-release rule,
/// so a refusal names what, since when, and the version the code targets.
///
/// `V: Accepts<W, S>` holds exactly when `V: AtLeast<S>`. Where a gate
/// fails in code generic over the release, rustc reports this trait and
/// suggests `V: Accepts<W, S>`; that bound works, but state the one it
/// stands for, `V: AtLeast<S>` (the message's note says so), which also
/// covers every gate of older releases.
#[diagnostic::on_unimplemented(
    message = "`{What}` needs `{Since}` or later; this code targets `{Self}`",
    label = "not available in `{Self}`",
    note = "the CANN version is the product marker's parameter (`AtlasA2<Cann8_3>`; `AtlasA2` alone targets `Cann9_0`); code generic over it states the oldest release it needs, `V: AtLeast<{Since}>`; `aclmem diff` and docs/rules.md say what each release accepts"
)]
pub trait Accepts<What, Since: CannType>: CannType {}

// (`do_not_recommend`: a refusal reports the rule, `Accepts`, and not the
// order behind it.)
#[diagnostic::do_not_recommend]
impl<V: AtLeast<Since>, What, Since: CannType> Accepts<What, Since> for V {}
