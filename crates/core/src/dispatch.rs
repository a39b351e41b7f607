//! From a product known at run time to code generic over its marker type.

use crate::product::*;
use crate::rules::Denial;

/// Code generic over the product marker, run by [`dispatch`] for a product
/// detected at run time (from `aclrtGetSocName` / `aclrtGetRunMode`).
///
/// ```
/// use aclmem_core::{dispatch, Product, ProductType, ProductVisitor, RunMode};
///
/// struct Name;
/// impl ProductVisitor for Name {
///     type Output = &'static str;
///     fn visit<P: ProductType>(self) -> &'static str {
///         core::any::type_name::<P>()
///     }
/// }
/// let name = dispatch(Product::Atlas200IA2, RunMode::Rc, Name).unwrap();
/// assert!(name.ends_with("Atlas200IA2<aclmem_core::product::Rc>"));
/// ```
pub trait ProductVisitor {
    /// What the visit returns.
    type Output;
    /// Runs with `P` the marker type of the detected product.
    fn visit<P: ProductType>(self) -> Self::Output;
}

/// Calls `visitor.visit::<P>()` with `P` the marker type of `product` in
/// `run_mode`. A product that has no RC form, asked for in RC form, is
/// [`Denial::RcForm`].
pub fn dispatch<V: ProductVisitor>(
    product: Product,
    run_mode: RunMode,
    visitor: V,
) -> Result<V::Output, Denial> {
    Ok(match (product, run_mode) {
        (Product::Atlas200IA2, RunMode::Ep) => visitor.visit::<Atlas200IA2<Ep>>(),
        (Product::Atlas200IA2, RunMode::Rc) => visitor.visit::<Atlas200IA2<Rc>>(),
        (_, RunMode::Rc) => return Err(Denial::RcForm),
        (Product::Atlas350, RunMode::Ep) => visitor.visit::<Atlas350>(),
        (Product::AtlasA3, RunMode::Ep) => visitor.visit::<AtlasA3>(),
        (Product::AtlasA2, RunMode::Ep) => visitor.visit::<AtlasA2>(),
        (Product::AtlasTraining, RunMode::Ep) => visitor.visit::<AtlasTraining>(),
        (Product::AtlasInference, RunMode::Ep) => visitor.visit::<AtlasInference>(),
        (Product::Atlas200_300_500, RunMode::Ep) => visitor.visit::<Atlas200_300_500>(),
    })
}
