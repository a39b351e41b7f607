//! Huawei Ascend physical memory (`aclrtMallocPhysical` and its family),
//! checked at compile time.
//!
//! # The lifecycle
//!
//! Open a [`hal::Session`] over a backend, for the product you build for;
//! then allocate physical memory, reserve an address range, map the memory
//! into it, and take it all down again. Each step hands out an owned value,
//! and the borrow checker enforces the order CANN requires: a
//! [`Mapping`](hal::Mapping) borrows both the memory and the range, so
//! freeing mapped memory or releasing a mapped range does not compile, and
//! `free`, `release` and `unmap` consume their value.
//!
//! ```
//! # #[cfg(feature = "emu")] {
//! use aclmem::emu::Emulator;
//! use aclmem::hal::Session;
//! use aclmem::{AlignedSize, AtlasA2, Device, HbmHuge, PhysicalMemProp, Product, MIB};
//!
//! // Any backend: the emulator here, `aclmem::driver` on an Ascend machine.
//! let emu = Emulator::preset(Product::AtlasA2);
//! let session = Session::<_, AtlasA2>::new(&emu)?; // checks the product is an A2
//!
//! // aclrtMallocPhysical: 2 MiB of HBM on device 0 (allowed on A2, checked
//! // by the compiler), in a size that is a multiple of the granularity.
//! let prop = PhysicalMemProp::<AtlasA2, Device, HbmHuge>::on_device(0);
//! let memory = session.malloc(prop, AlignedSize::new::<{ 2 * MIB }>())?;
//! // aclrtReserveMemAddress, then aclrtMapMem.
//! let range = session.reserve(4 * MIB)?;
//! let mapping = range.map(0, &memory)?;
//! emu.write(mapping.addr().get(), b"weights")?;
//!
//! // Teardown: aclrtUnmapMem, aclrtFreePhysical, aclrtReleaseMemAddress.
//! // A failed step hands its value back (`hal::TeardownError`), to retry.
//! mapping.unmap()?;
//! memory.free()?;
//! range.release()?;
//! # }
//! # Ok::<(), aclmem::AclError>(())
//! ```
//!
//! Dropping a value instead tears it down too, and a failure there is kept
//! for [`Session::take_deferred_error`](hal::Session::take_deferred_error).
//! For memory that grows and shrinks (torch_npu's expandable segments), see
//! [`Session::expandable_segment`](hal::Session::expandable_segment); for
//! sharing between processes, [`PhysicalMemory::export`](hal::PhysicalMemory::export)
//! and [`Session::import`](hal::Session::import).
//!
//! # What the compiler checks, and what is checked at run time
//!
//! A [`PhysicalMemProp`] exists only for a product × location × attribute
//! combination the rules allow in the CANN release the product marker
//! targets (`AtlasA2` is `AtlasA2<Cann9_0>`; `AtlasA2<Cann8_3>` targets 8.3);
//! a refused one is a compile error that names the rule. Code that learns
//! its product only at run time (from `aclrtGetSocName`) asks [`check`],
//! generated from the same table:
//!
//! ```
//! use aclmem::{check, CannVersion, Location, MemAttr, Product, RunMode};
//!
//! let product = Product::from_soc_name("Ascend910B3").unwrap(); // Atlas A2
//! let refused = check(product, RunMode::Ep, CannVersion::V8_3, Location::Device, MemAttr::MemHuge);
//! assert_eq!(refused.unwrap_err().code().code(), 100000); // ACL_MEM_HUGE is new in 8.5
//! ```
//!
//! [`dispatch`] turns a run-time product into a marker type, so that one
//! generic function serves every product.
//!
//! # Stream-ordered memory pools
//!
//! CANN 9.0's `aclrtMemPoolCreate` and 9.1's `aclrtMemPoolMallocAsync`
//! (Atlas A2) are typed the same way: a [`MemPool`](hal::MemPool) owns its
//! memory (a [`PoolMemory`](hal::PoolMemory) borrows the pool and the
//! [`Stream`](hal::Stream) it was made on, so neither can go first), and
//! `free` consumes the memory, so using it afterwards does not compile.
//! The calls exist from a release on: the bounds
//! [`HasApi<MemPoolCreate>`](rules::HasApi) and
//! `HasApi<MemPoolMallocAsync>` come from the rules table, so code for
//! `AtlasA2<Cann9_0>` that allocates from a pool is a compile error naming
//! `Cann9_1`; [`check_api`] answers the same at run time.
//!
//! ```
//! # #[cfg(feature = "emu")] {
//! use aclmem::emu::{EmuConfig, Emulator};
//! use aclmem::hal::{PoolAttr, Session};
//! use aclmem::{AtlasA2, Cann9_1, CannVersion, Product, MIB};
//!
//! let mut config = EmuConfig::preset(Product::AtlasA2);
//! config.cann = CannVersion::V9_1;
//! let emu = Emulator::new(config)?;
//! emu.set_device(0)?; // aclrtSetDevice: streams and pools are the thread's device's
//! let session = Session::<_, AtlasA2<Cann9_1>>::new(&emu)?;
//!
//! let stream = session.stream()?;
//! let pool = session.mem_pool(0, 64 * MIB)?; // aclrtMemPoolCreate
//! let memory = pool.malloc_async(MIB, &stream)?; // a 2 MiB block
//! emu.write(memory.addr().get(), b"kv block")?;
//! assert_eq!(pool.used()?, 2 * MIB as u64);
//!
//! memory.free()?; // aclrtMemPoolFreeAsync on its stream: cached
//! assert_eq!((pool.used()?, pool.reserved()?), (0, 2 * MIB as u64));
//! pool.trim_to(0)?;
//! assert_eq!(pool.attr(PoolAttr::ReservedMemCurrent)?, 0);
//! pool.destroy()?;
//!
//! // Managed memory (9.0; advice and prefetches 9.1, Atlas A2 and A3): a
//! // location of its own, which the host and the device both reach.
//! use aclmem::hal::{ManagedAdvice, ManagedLocation};
//! let managed = session.malloc_managed(3 * MIB)?;
//! emu.write(managed.addr().get(), b"shared")?;
//! managed.advise(ManagedAdvice::SetPreferredLocation, ManagedLocation::Device(0))?;
//! managed.prefetch_async(ManagedLocation::Device(0), &stream)?;
//! managed.free()?;
//! stream.destroy()?;
//! # }
//! # Ok::<(), aclmem::AclError>(())
//! ```
//!
//! # Where things are
//!
//! | here | what | crate |
//! |---|---|---|
//! | the crate root | values (products, locations, attributes, releases), the rules ([`check`], [`Denial`], [`Verdict`]), sizes, props, ACL error codes | `aclmem-core` |
//! | [`products`], [`locations`], [`attributes`], [`releases`] | the marker types, one module per kind | `aclmem-core` |
//! | [`rules`] | the traits the rules table implements, for bounds in generic code | `aclmem-core` |
//! | [`calls`] | the markers of runtime calls a release or product may lack (the stream-ordered pools) | `aclmem-core` |
//! | [`matrix`] | the support matrix of a release, as `aclmem matrix` and `docs/rules.md` print it | `aclmem-core` |
//! | [`hal`] | the backend traits, the typed API ([`hal::Session`]) and expandable segments | `aclmem-hal` |
//! | `emu` (feature `emu`) | an emulated Ascend machine with real memory, on any Linux machine | `aclmem-emu` |
//! | `driver` (feature `driver`) | the real backend: `libascendcl.so` loaded at run time | `aclmem-driver` |
//! | `rc_stub` (feature `rc-stub`) | the backend for the Ascend RC form, where every call is 207000 | `aclmem-rc-stub` |
//!
//! Every marker is also at the crate root (`aclmem::AtlasA2`,
//! `aclmem::HbmHuge`), which is how the examples name them.
//!
//! Outside this crate, in the [same repository][repo]:
//!
//! * [`aclmem-sys`][sys]: the C types and the one list of ACL functions;
//! * [`aclmem-emu-capi`][capi]: the emulator behind ACL's C ABI, with C
//!   headers (a drop-in `libascendcl.so` for C, C++ and Python programs);
//! * [`aclmem-sanitizer`][sanitizer]: `libaclmem_sanitizer.so`, which checks
//!   a real program's memory calls;
//! * [`aclmem-cli`][cli]: the `aclmem` command (`matrix`, `diff`, `check`,
//!   `errors`, `probe`, `sanitize`, `timeline`);
//! * [`python`][python]: pyACL's memory calls over the emulator or the real
//!   library.
//!
//! The documents:
//!
//! * [the guide][guide]: running CI on the emulator, porting sleep/wake,
//!   checking a program with the sanitizer, adding a product;
//! * [the support matrix][rules-md] of every release, and [the facts][facts]
//!   behind it, with their sources;
//! * [the emulator's error table][errors];
//! * [extending aclmem][extending]: a release, an attribute, a call;
//! * [the emulator's architecture][architecture], [what the shared machine
//!   trusts][security], [reliability][reliability] (fuzzing, the model) and
//!   [benchmarks][benchmarks].
//!
//! [repo]: https://github.com/aclmem/aclmem
//! [sys]: https://github.com/aclmem/aclmem/blob/main/crates/sys
//! [capi]: https://github.com/aclmem/aclmem/blob/main/crates/emu-capi
//! [sanitizer]: https://github.com/aclmem/aclmem/blob/main/crates/sanitizer
//! [cli]: https://github.com/aclmem/aclmem/blob/main/crates/cli
//! [python]: https://github.com/aclmem/aclmem/blob/main/python
//! [guide]: https://github.com/aclmem/aclmem/blob/main/docs/guide.md
//! [rules-md]: https://github.com/aclmem/aclmem/blob/main/docs/rules.md
//! [facts]: https://github.com/aclmem/aclmem/blob/main/docs/facts.md
//! [errors]: https://github.com/aclmem/aclmem/blob/main/docs/errors.md
//! [extending]: https://github.com/aclmem/aclmem/blob/main/docs/extending.md
//! [architecture]: https://github.com/aclmem/aclmem/blob/main/docs/architecture.md
//! [security]: https://github.com/aclmem/aclmem/blob/main/docs/security.md
//! [reliability]: https://github.com/aclmem/aclmem/blob/main/docs/reliability.md
//! [benchmarks]: https://github.com/aclmem/aclmem/blob/main/docs/benchmarks.md
//!
//! # Optional Cargo features
//!
//! - `emu`: the emulator backend (`aclmem::emu`).
//! - `driver`: the real driver (`aclmem::driver`).
//! - `rc-stub`: the Ascend RC-form backend (`aclmem::rc_stub`).
//! - `defmt-1`: `defmt::Format` on the public types.

#![no_std]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

// Everything of aclmem-core at the crate root, for code (`aclmem::AtlasA2`);
// the documentation shows the values here and the markers in their groups
// below.
#[doc(hidden)]
pub use aclmem_core::*;

pub use aclmem_core::matrix;
pub use aclmem_core::{
    AclError, AlignedSize, CannVersion, CheckReport, Checked, Choices, Denial, ErrorKind,
    ExpectedAddress, Feature, GIB, GranularityOption, GranularityRule, Location,
    MEM_ALLOCATION_TYPE_PINNED, MEM_HANDLE_TYPE_NONE, MIB, MemAttr, NameKind, PLATFORMS, PageClass,
    PhysicalMemProp, Platform, Product, ProductVisitor, RawMemLocation, RawPhysicalMemProp,
    RunMode, SOC_NAMES, UnknownCannVersion, UnknownName, UnknownSocName, ValidProp, Verdict,
    attr_since, check, check_platform, check_raw, dispatch, is_aligned, location_since, round_up,
};
pub use aclmem_core::{Api, check_api};

/// Re-exports a group of markers and, for the tests, their names.
macro_rules! group {
    ($($name:ident),* $(,)?) => {
        pub use aclmem_core::{$($name),*};
        #[cfg(test)]
        pub(crate) const NAMES: &[&str] = &[$(stringify!($name)),*];
    };
}

/// Product markers (`P` in `PhysicalMemProp<P, L, A>`), each targeting a
/// CANN release (`AtlasA2<Cann8_3>`; the newest by default), and the run
/// modes of the products that have two forms.
pub mod products {
    group!(
        Atlas350,
        AtlasA3,
        AtlasA2,
        AtlasTraining,
        AtlasInference,
        Atlas200IA2,
        Atlas200_300_500,
    );
    pub use aclmem_core::{Ep, ProductType, Rc, RunModeType};
}

/// Location markers (`L` in `PhysicalMemProp<P, L, A>`).
pub mod locations {
    pub use aclmem_core::{Device, Host, HostNuma, LocationType};
}

/// Memory-attribute markers (`A` in `PhysicalMemProp<P, L, A>`), one per
/// `aclrtMemAttr` value `aclrtMallocPhysical` accepts somewhere.
pub mod attributes {
    group!(
        HbmHuge,
        HbmNormal,
        HbmHuge1G,
        DdrHuge,
        DdrNormal,
        DdrP2pHuge,
        DdrP2pNormal,
        Normal,
        Huge,
        Huge1G,
        P2pNormal,
        P2pHuge,
        P2pHuge1G,
    );
    pub use aclmem_core::AttrType;
}

/// CANN release markers, the parameter of a product marker
/// (`AtlasA2<Cann8_3>`), and the bound for code generic over the release.
pub mod releases {
    group!(
        Cann8_0, Cann8_1, Cann8_2, Cann8_3, Cann8_5, Cann9_0, Cann9_1
    );
    pub use aclmem_core::{AtLeast, CannType};
}

/// Markers of runtime calls beyond the physical-memory API that a release
/// or a product may lack (the bound is
/// [`HasApi<C>`](rules::HasApi)).
pub mod calls {
    group!(
        MemPoolCreate,
        MemPoolMallocAsync,
        MemAllocManaged,
        MemManagedAdvise
    );
    pub use aclmem_core::ApiType;
}

/// The traits the rules table implements: [`Supports`]
/// is the one bound typed code needs; the others name the rule a refused
/// combination breaks, in compiler messages.
pub mod rules {
    pub use aclmem_core::{
        Accepts, ApiOn, AvailableOn, DeviceAccepts, ExistsIn, FormAllowsPhysical, HasApi,
        HasPhysicalApi, Holds, HostAccepts, Introduced, MallocPhysical, OfferedBy, Rules, Supports,
    };
}

/// Backend traits, the typed API ([`Session`](hal::Session) and the values
/// it hands out) and expandable segments (`aclmem-hal`).
pub mod hal {
    pub use aclmem_hal::*;

    /// `aclmem-core`, which is this facade's crate root.
    #[doc(hidden)]
    pub mod core_types {
        pub use aclmem_core::*;
    }
}

/// The emulator backend (`aclmem-emu`): an emulated Ascend machine with
/// real memory, shared by every process that joins it.
#[cfg(feature = "emu")]
pub mod emu {
    pub use aclmem_emu::*;
}

/// The real driver backend (`aclmem-driver`): `libascendcl.so` loaded at
/// run time. Its C declarations (`driver::sys`) are the `aclmem-sys`
/// crate, documented there.
#[cfg(feature = "driver")]
pub mod driver {
    pub use aclmem_driver::*;

    /// `aclmem-sys`: the C types, constants and the one list of ACL
    /// functions.
    #[doc(hidden)]
    pub mod sys {
        pub use aclmem_driver::sys::*;
    }
}

/// The Ascend RC-form backend (`aclmem-rc-stub`).
#[cfg(feature = "rc-stub")]
pub mod rc_stub {
    pub use aclmem_rc_stub::*;
}

// The workspace README's examples are compiled and run as doctests here.
#[doc = include_str!("../../../README.md")]
#[cfg(all(doctest, feature = "emu"))]
pub struct ReadmeDoctests;

// So are the guide's (docs/guide.md).
#[doc = include_str!("../../../docs/guide.md")]
#[cfg(all(doctest, feature = "emu"))]
pub struct GuideDoctests;

// And this crate's own README's (its page on crates.io).
#[doc = include_str!("../README.md")]
#[cfg(all(doctest, feature = "emu"))]
pub struct CrateReadmeDoctests;

#[cfg(test)]
mod tests {
    extern crate std;
    use std::format;
    use std::string::String;

    use aclmem_core::{CannVersion, MemAttr, Product};

    // A marker added to the core's tables is also listed in its group.

    #[test]
    fn every_attribute_marker_is_in_its_group() {
        let markers: std::vec::Vec<_> = MemAttr::ALL
            .iter()
            .filter_map(|a| a.marker_name())
            .collect();
        assert_eq!(markers.len(), super::attributes::NAMES.len());
        for m in markers {
            assert!(super::attributes::NAMES.contains(&m), "{m}");
        }
    }

    #[test]
    fn every_release_marker_is_in_its_group() {
        let markers: std::vec::Vec<_> = CannVersion::ALL.iter().map(|v| v.marker_name()).collect();
        assert_eq!(markers, super::releases::NAMES);
    }

    #[test]
    fn every_call_marker_is_in_its_group() {
        let markers: std::vec::Vec<_> = aclmem_core::Api::ALL
            .iter()
            .map(|a| a.marker_name())
            .collect();
        assert_eq!(markers, super::calls::NAMES);
    }

    #[test]
    fn every_product_marker_is_in_its_group() {
        assert_eq!(Product::ALL.len(), super::products::NAMES.len());
        for p in Product::ALL {
            let name: String = format!("{p:?}");
            assert!(super::products::NAMES.contains(&name.as_str()), "{name}");
        }
    }
}
