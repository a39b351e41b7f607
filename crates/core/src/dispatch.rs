//! From a product known at run time to code generic over its marker type.

use crate::cann::*;
use crate::product::*;
use crate::rules::Denial;

/// Code generic over the product marker, run by [`dispatch`] for a product
/// detected at run time (from `aclrtGetSocName`, `aclrtGetRunMode` and the
/// installed CANN version).
///
/// ```
/// use aclmem_core::{dispatch, CannVersion, Product, ProductType, ProductVisitor, RunMode};
///
/// struct Name;
/// impl ProductVisitor for Name {
///     type Output = &'static str;
///     fn visit<P: ProductType>(self) -> &'static str {
///         core::any::type_name::<P>()
///     }
/// }
/// let name = dispatch(Product::Atlas200IA2, RunMode::Rc, CannVersion::V8_3, Name).unwrap();
/// assert!(name.ends_with("Atlas200IA2<aclmem_core::product::Rc, aclmem_core::cann::Cann8_3>"));
/// ```
pub trait ProductVisitor {
    /// What the visit returns.
    type Output;
    /// Runs with `P` the marker type of the detected product.
    fn visit<P: ProductType>(self) -> Self::Output;
}

/// A product marker with its version parameter left open.
trait Family {
    type At<V: CannType>: ProductType;
}

macro_rules! families {
    ($($family:ident => $marker:ty;)*) => {$(
        struct $family;
        impl Family for $family {
            type At<V: CannType> = $marker;
        }
    )*};
}

families! {
    F350 => Atlas350<V>;
    FA3 => AtlasA3<V>;
    FA2 => AtlasA2<V>;
    FTraining => AtlasTraining<V>;
    FInference => AtlasInference<V>;
    F200IEp => Atlas200IA2<Ep, V>;
    F200IRc => Atlas200IA2<Rc, V>;
    FLegacy => Atlas200_300_500<V>;
}

fn at<F: Family, Vis: ProductVisitor>(cann: CannVersion, visitor: Vis) -> Vis::Output {
    struct Visit<F, Vis>(Vis, core::marker::PhantomData<F>);
    impl<F: Family, Vis: ProductVisitor> MarkerVisitor for Visit<F, Vis> {
        type Output = Vis::Output;
        fn visit<V: CannType>(self) -> Vis::Output {
            self.0.visit::<F::At<V>>()
        }
    }
    visit_marker(cann, Visit::<F, Vis>(visitor, core::marker::PhantomData))
}

/// Calls `visitor.visit::<P>()` with `P` the marker type of `product` in
/// `run_mode`, targeting `cann`. A product that has no RC form, asked for
/// in RC form, is [`Denial::RcForm`].
pub fn dispatch<V: ProductVisitor>(
    product: Product,
    run_mode: RunMode,
    cann: CannVersion,
    visitor: V,
) -> Result<V::Output, Denial> {
    Ok(match (product, run_mode) {
        (Product::Atlas200IA2, RunMode::Ep) => at::<F200IEp, V>(cann, visitor),
        (Product::Atlas200IA2, RunMode::Rc) => at::<F200IRc, V>(cann, visitor),
        (_, RunMode::Rc) => return Err(Denial::RcForm),
        (Product::Atlas350, RunMode::Ep) => at::<F350, V>(cann, visitor),
        (Product::AtlasA3, RunMode::Ep) => at::<FA3, V>(cann, visitor),
        (Product::AtlasA2, RunMode::Ep) => at::<FA2, V>(cann, visitor),
        (Product::AtlasTraining, RunMode::Ep) => at::<FTraining, V>(cann, visitor),
        (Product::AtlasInference, RunMode::Ep) => at::<FInference, V>(cann, visitor),
        (Product::Atlas200_300_500, RunMode::Ep) => at::<FLegacy, V>(cann, visitor),
    })
}
