//! Huawei Ascend physical memory, checked at compile time.
//!
//! This facade re-exports the pieces of aclmem:
//!
//! * everything in [`aclmem_core`] at the top level (products, locations,
//!   attributes, the rules, sizes, props, errors);
//! * the backend traits and the typed API as [`hal`];
//! * the backends, behind features: `aclmem::driver` (feature `driver`),
//!   `aclmem::emu` (`emu`), `aclmem::rc_stub` (`rc-stub`).
//!
//! ```
//! use aclmem::{AlignedSize, AtlasA2, CannVersion, Device, HbmHuge, Location, MemAttr};
//! use aclmem::{PhysicalMemProp, Product, RunMode, MIB, check};
//!
//! // At compile time: this line compiles only because A2 allows it.
//! let prop = PhysicalMemProp::<AtlasA2, Device, HbmHuge>::on_device(0);
//! let size = AlignedSize::<HbmHuge>::new::<{ 2 * MIB }>();
//! assert_eq!((prop.raw().mem_attr, size.get()), (4, 2 * MIB));
//!
//! // At run time, for a product learnt from `aclrtGetSocName`:
//! let product = Product::from_soc_name("Ascend910B3").unwrap();
//! let refused = check(product, RunMode::Ep, CannVersion::V8_3, Location::Device, MemAttr::MemHuge);
//! assert_eq!(refused.unwrap_err().code().code(), 100000); // ACL_MEM_HUGE is new in 8.5
//! ```
//!
//! See the workspace README for the overview and `docs/rules.md` for the
//! support matrix.
//!
//! ## Optional Cargo features
//!
//! - `driver`: the real driver (`libascendcl.so` loaded at run time).
//! - `emu`: the emulator backend.
//! - `rc-stub`: the Ascend RC-form backend.
//! - `defmt-1`: `defmt::Format` on the public types.

#![no_std]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub use aclmem_core::*;

/// Backend traits and the typestate API (`aclmem-hal`).
pub use aclmem_hal as hal;

/// The emulator backend (`aclmem-emu`).
#[cfg(feature = "emu")]
pub use aclmem_emu as emu;

/// The real driver backend (`aclmem-driver`).
#[cfg(feature = "driver")]
pub use aclmem_driver as driver;

/// The Ascend RC-form backend (`aclmem-rc-stub`).
#[cfg(feature = "rc-stub")]
pub use aclmem_rc_stub as rc_stub;

// The workspace README's examples are compiled and run as doctests here.
#[doc = include_str!("../../../README.md")]
#[cfg(all(doctest, feature = "emu"))]
pub struct ReadmeDoctests;
