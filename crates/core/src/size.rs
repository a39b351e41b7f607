//! Allocation granularity and aligned sizes.

use core::fmt;
use core::marker::PhantomData;

use crate::attr::AttrType;
use crate::error::AclError;

/// `aclrtMemGranularityOptions`: which granularity to query.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt-1", derive(defmt::Format))]
#[repr(u32)]
pub enum GranularityOption {
    /// `ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM` (0).
    Minimum = 0,
    /// `ACL_RT_MEM_ALLOC_GRANULARITY_RECOMMENDED` (1).
    Recommended = 1,
}

impl GranularityOption {
    /// Converts a raw C value (`ACL_RT_MEM_ALLOC_GRANULARITY_UNDEF` and
    /// anything else is `None`).
    pub const fn from_raw(raw: u32) -> Option<GranularityOption> {
        match raw {
            0 => Some(GranularityOption::Minimum),
            1 => Some(GranularityOption::Recommended),
            _ => None,
        }
    }
}

/// Rounds `bytes` up to a multiple of `granularity` (a power of two).
///
/// Zero bytes, a granularity that is not a power of two, or a result that
/// overflows `usize` are `ACL_ERROR_INVALID_PARAM`, as the runtime reports a
/// size of zero.
///
/// ```
/// use aclmem_core::{round_up, MIB};
/// assert_eq!(round_up(1, 2 * MIB), Ok(2 * MIB));
/// assert_eq!(round_up(4 * MIB, 2 * MIB), Ok(4 * MIB));
/// assert!(round_up(0, 2 * MIB).is_err());
/// assert!(round_up(usize::MAX, 2 * MIB).is_err());
/// ```
pub const fn round_up(bytes: usize, granularity: usize) -> Result<usize, AclError> {
    if bytes == 0 || !granularity.is_power_of_two() {
        return Err(AclError::INVALID_PARAM);
    }
    match bytes.checked_add(granularity - 1) {
        Some(v) => Ok(v & !(granularity - 1)),
        None => Err(AclError::INVALID_PARAM),
    }
}

/// Whether `bytes` is a non-zero multiple of `granularity`.
pub const fn is_aligned(bytes: usize, granularity: usize) -> bool {
    bytes != 0 && granularity.is_power_of_two() && bytes & (granularity - 1) == 0
}

/// A size in bytes that is a non-zero multiple of attribute `A`'s
/// granularity (2 MiB, or 1 GiB for the `*Huge1G` attributes).
///
/// The constant constructor [`AlignedSize::new`] refuses a bad size at
/// compile time; [`AlignedSize::try_new`] and [`AlignedSize::round_up`] do so
/// at run time with the ACL error.
///
/// ```
/// use aclmem_core::{AlignedSize, HbmHuge, Huge1G, MIB, GIB};
/// const FOUR_MIB: AlignedSize<HbmHuge> = AlignedSize::new::<{ 4 * MIB }>();
/// assert_eq!(FOUR_MIB.get(), 4 * MIB);
/// assert_eq!(AlignedSize::<Huge1G>::round_up(1).unwrap().get(), GIB);
/// assert!(AlignedSize::<HbmHuge>::try_new(3 * MIB).is_err());
/// ```
///
/// A zero or unaligned constant does not build:
///
/// ```compile_fail
/// use aclmem_core::{AlignedSize, HbmHuge, MIB};
/// let _ = AlignedSize::<HbmHuge>::new::<{ 3 * MIB }>();
/// ```
pub struct AlignedSize<A: AttrType> {
    bytes: usize,
    _attr: PhantomData<A>,
}

impl<A: AttrType> AlignedSize<A> {
    /// The attribute's granularity in bytes.
    pub const GRANULARITY: usize = A::GRANULARITY;

    /// A size checked at compile time. `BYTES` must be a non-zero multiple of
    /// the granularity, or the build fails (on `cargo build`; this is a
    /// post-monomorphization check that `cargo check` does not run).
    pub const fn new<const BYTES: usize>() -> Self {
        const {
            assert!(
                BYTES != 0,
                "AlignedSize: a physical allocation cannot be 0 bytes"
            );
            assert!(
                BYTES.is_multiple_of(A::GRANULARITY),
                "AlignedSize: the size must be a multiple of the attribute's granularity (2 MiB, or 1 GiB for *Huge1G attributes)"
            );
        }
        AlignedSize {
            bytes: BYTES,
            _attr: PhantomData,
        }
    }

    /// A size checked at run time: `ACL_ERROR_INVALID_PARAM` unless `bytes`
    /// is a non-zero multiple of the granularity.
    pub const fn try_new(bytes: usize) -> Result<Self, AclError> {
        if is_aligned(bytes, A::GRANULARITY) {
            Ok(AlignedSize {
                bytes,
                _attr: PhantomData,
            })
        } else {
            Err(AclError::INVALID_PARAM)
        }
    }

    /// `bytes` rounded up to the granularity (see [`round_up`]).
    pub const fn round_up(bytes: usize) -> Result<Self, AclError> {
        match round_up(bytes, A::GRANULARITY) {
            Ok(bytes) => Ok(AlignedSize {
                bytes,
                _attr: PhantomData,
            }),
            Err(e) => Err(e),
        }
    }

    /// The size in bytes.
    pub const fn get(self) -> usize {
        self.bytes
    }

    /// How many granules the size spans.
    pub const fn granules(self) -> usize {
        self.bytes / A::GRANULARITY
    }
}

impl<A: AttrType> Clone for AlignedSize<A> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<A: AttrType> Copy for AlignedSize<A> {}
impl<A: AttrType> PartialEq for AlignedSize<A> {
    fn eq(&self, other: &Self) -> bool {
        self.bytes == other.bytes
    }
}
impl<A: AttrType> Eq for AlignedSize<A> {}
impl<A: AttrType> fmt::Debug for AlignedSize<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "AlignedSize<{}>({})", A::ATTR.c_name(), self.bytes)
    }
}
#[cfg(feature = "defmt-1")]
impl<A: AttrType> defmt::Format for AlignedSize<A> {
    fn format(&self, f: defmt::Formatter<'_>) {
        defmt::write!(f, "AlignedSize<{}>({=usize})", A::ATTR, self.bytes)
    }
}
