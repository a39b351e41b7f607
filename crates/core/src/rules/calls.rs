//! Runtime calls beyond the physical-memory API that a product or a
//! release may lack, as types ([`ApiType`]) and as values ([`Api`]): the
//! stream-ordered memory pools of `acl_rt_memory_soma.h` and managed
//! memory. Which product
//! has them from which release is a section of the one rules table
//! (`calls`, in `rules/mod.rs`); this file holds what that section is
//! generated into, and [`check_api`], its run-time projection.
//!
//! ```
//! use aclmem_core::{Api, CannVersion, Denial, Product, check_api};
//! assert_eq!(check_api(Product::AtlasA2, CannVersion::V9_1, Api::MemPoolMallocAsync), Ok(()));
//! let too_old = check_api(Product::AtlasA2, CannVersion::V9_0, Api::MemPoolMallocAsync);
//! assert_eq!(too_old.unwrap_err().since(), Some(CannVersion::V9_1));
//! assert_eq!(
//!     check_api(Product::AtlasA3, CannVersion::V9_1, Api::MemPoolCreate),
//!     Err(Denial::ApiNotOffered)
//! );
//! ```

use core::fmt;

use super::*;
use crate::sealed::Sealed;

/// A group of runtime calls that came together, as a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "defmt-1", derive(defmt::Format))]
pub enum Api {
    /// `aclrtMemPoolCreate`, `aclrtMemPoolDestroy`, `aclrtMemPoolSetAttr`,
    /// `aclrtMemPoolGetAttr`: stream-ordered pools and their attributes.
    MemPoolCreate,
    /// `aclrtMemPoolMallocAsync`, `aclrtMemPoolFreeAsync`,
    /// `aclrtMemPoolTrimTo`: memory from a pool, in stream order.
    MemPoolMallocAsync,
    /// `aclrtMemAllocManaged`: managed memory, which the host and the
    /// device both reach (freed with `aclrtFree`).
    MemAllocManaged,
    /// `aclrtMemManagedAdvise`, `aclrtMemManagedGetAttr(s)`,
    /// `aclrtMemManagedPrefetchAsync`, `aclrtMemManagedPrefetchBatchAsync`:
    /// advice on and prefetches of managed memory.
    MemManagedAdvise,
}

impl Api {
    /// Every group, in table order.
    pub const ALL: [Api; 4] = [
        Api::MemPoolCreate,
        Api::MemPoolMallocAsync,
        Api::MemAllocManaged,
        Api::MemManagedAdvise,
    ];

    /// The C functions of the group.
    pub const fn functions(self) -> &'static [&'static str] {
        match self {
            Api::MemPoolCreate => &[
                "aclrtMemPoolCreate",
                "aclrtMemPoolDestroy",
                "aclrtMemPoolSetAttr",
                "aclrtMemPoolGetAttr",
            ],
            Api::MemPoolMallocAsync => &[
                "aclrtMemPoolMallocAsync",
                "aclrtMemPoolFreeAsync",
                "aclrtMemPoolTrimTo",
            ],
            Api::MemAllocManaged => &["aclrtMemAllocManaged"],
            Api::MemManagedAdvise => &[
                "aclrtMemManagedAdvise",
                "aclrtMemManagedGetAttr",
                "aclrtMemManagedGetAttrs",
                "aclrtMemManagedPrefetchAsync",
                "aclrtMemManagedPrefetchBatchAsync",
            ],
        }
    }

    /// The marker type's name (`"MemPoolCreate"`).
    pub const fn marker_name(self) -> &'static str {
        match self {
            Api::MemPoolCreate => "MemPoolCreate",
            Api::MemPoolMallocAsync => "MemPoolMallocAsync",
            Api::MemAllocManaged => "MemAllocManaged",
            Api::MemManagedAdvise => "MemManagedAdvise",
        }
    }

    /// Stable identifier used in JSON and tables.
    pub const fn id(self) -> &'static str {
        match self {
            Api::MemPoolCreate => "mem-pool-create",
            Api::MemPoolMallocAsync => "mem-pool-malloc-async",
            Api::MemAllocManaged => "mem-alloc-managed",
            Api::MemManagedAdvise => "mem-managed-advise",
        }
    }

    const fn row(self) -> &'static ApiRow {
        let mut i = 0;
        while i < API_ROWS.len() {
            if API_ROWS[i].api as u8 == self as u8 {
                return &API_ROWS[i];
            }
            i += 1;
        }
        panic!("every Api has a row of the rules table")
    }

    /// The first release that has the group (from the rules table).
    pub const fn since(self) -> CannVersion {
        self.row().since
    }

    /// The products whose runtime has the group (from the rules table).
    pub const fn products(self) -> &'static [Product] {
        self.row().products
    }
}

impl fmt::Display for Api {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let functions = self.functions();
        for (i, name) in functions.iter().enumerate() {
            if i > 0 {
                f.write_str("/")?;
            }
            // `aclrtMemPoolCreate/Destroy/…`: the group's prefix once.
            let prefix = match self {
                Api::MemPoolCreate | Api::MemPoolMallocAsync => "aclrtMemPool",
                Api::MemAllocManaged | Api::MemManagedAdvise => "aclrtMemManaged",
            };
            let short = if i == 0 {
                name
            } else {
                name.strip_prefix(prefix).unwrap_or(name)
            };
            f.write_str(short)?;
        }
        Ok(())
    }
}

/// A group of runtime calls, as a marker type: [`MemPoolCreate`],
/// [`MemPoolMallocAsync`], [`MemAllocManaged`], [`MemManagedAdvise`].
/// Sealed.
pub trait ApiType: Sealed + Copy + Default + 'static {
    /// The group this marker stands for.
    const API: Api;
}

/// Marker: `aclrtMemPoolCreate/Destroy/SetAttr/GetAttr` (CANN 9.0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "defmt-1", derive(defmt::Format))]
pub struct MemPoolCreate;

/// Marker: `aclrtMemPoolMallocAsync/FreeAsync/TrimTo` (CANN 9.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "defmt-1", derive(defmt::Format))]
pub struct MemPoolMallocAsync;

/// Marker: `aclrtMemAllocManaged` (CANN 9.0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "defmt-1", derive(defmt::Format))]
pub struct MemAllocManaged;

/// Marker: `aclrtMemManagedAdvise/GetAttr/GetAttrs/PrefetchAsync/
/// PrefetchBatchAsync` (CANN 9.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "defmt-1", derive(defmt::Format))]
pub struct MemManagedAdvise;

impl Sealed for MemPoolCreate {}
impl Sealed for MemPoolMallocAsync {}
impl Sealed for MemAllocManaged {}
impl Sealed for MemManagedAdvise {}
impl ApiType for MemAllocManaged {
    const API: Api = Api::MemAllocManaged;
}
impl ApiType for MemManagedAdvise {
    const API: Api = Api::MemManagedAdvise;
}
impl ApiType for MemPoolCreate {
    const API: Api = Api::MemPoolCreate;
}
impl ApiType for MemPoolMallocAsync {
    const API: Api = Api::MemPoolMallocAsync;
}

/// The runtime of product `P` has the calls `Self` (in some release).
/// Implemented by the rules table's `calls` section.
#[diagnostic::on_unimplemented(
    message = "`{P}` has no `{Self}` calls: its runtime does not have them",
    label = "`{Self}` is not available on `{P}`",
    note = "CANN documents the stream-ordered pools (MemPoolCreate, MemPoolMallocAsync) for Atlas A2 only, and managed memory (MemAllocManaged, MemManagedAdvise) for Atlas A2 and A3; elsewhere the runtime answers ACL_ERROR_RT_FEATURE_NOT_SUPPORT (207000)"
)]
pub trait ApiOn<P: ProductType>: ApiType {}

/// Product `Self` has the calls `C` in the CANN release it targets: the
/// one bound typed code needs (`P: HasApi<MemPoolMallocAsync>`).
/// Implemented for every product family by the rules table, where the
/// product's runtime has the calls ([`ApiOn`]) and the release it targets
/// has them ([`Accepts`], whose message names the release the calls
/// need): a refusal names the rule that failed.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not known to have the `{C}` calls: require `{Self}: HasApi<{C}>`",
    label = "the rules hold only for concrete products, or where this bound is required",
    note = "generic code states the calls it makes, `P: HasApi<{C}>`, and the caller's concrete product and release are checked against the rules table"
)]
pub trait HasApi<C: ApiType>: ProductType {}

// Implemented per product family by the rules table (`@supports`), not
// for every `P`: generic code without the bound then gets this trait's
// message rather than a product's or a release's rule.

/// One row of the table's `calls` section.
pub(super) struct ApiRow {
    pub(super) api: Api,
    pub(super) since: CannVersion,
    pub(super) products: &'static [Product],
}

/// Whether `product`'s runtime in release `cann` has the calls `api`, at
/// run time, in the order of the compile-time bounds: the product
/// ([`Denial::ApiNotOffered`]), then the release
/// ([`Denial::NeedsNewerCann`]). Both are 207000 (a release without the
/// calls does not export them: a driver finds no symbol).
pub const fn check_api(product: Product, cann: CannVersion, api: Api) -> Result<(), Denial> {
    let row = api.row();
    let mut i = 0;
    let mut offered = false;
    while i < row.products.len() {
        if row.products[i] as u8 == product as u8 {
            offered = true;
        }
        i += 1;
    }
    if !offered {
        return Err(Denial::ApiNotOffered);
    }
    if older(cann, row.since) {
        return Err(Denial::NeedsNewerCann {
            feature: Feature::Api(api),
            since: row.since,
            target: cann,
        });
    }
    Ok(())
}
