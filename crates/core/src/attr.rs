//! Memory attributes (`aclrtMemAttr`).
//!
//! [`MemAttr`] mirrors the whole C enum, including the five values that
//! `aclrtMallocPhysical` rejects. Only the values the call accepts
//! have a marker type (implementing [`AttrType`]); a rejected value such as
//! `ACL_DDR_MEM` therefore cannot even be named in typed code.

use crate::sealed::Sealed;
use crate::units::{GIB, MIB};

/// Page class of an attribute, which fixes its allocation granularity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt-1", derive(defmt::Format))]
pub enum PageClass {
    /// Normal pages. CANN allocates them as 2 MiB huge pages internally.
    Normal,
    /// 2 MiB huge pages.
    Huge,
    /// 1 GiB huge pages.
    Huge1G,
}

impl PageClass {
    /// Minimum allocation granularity of this page class in bytes.
    ///
    /// The docs give 2 MiB for `HUGE` and 1 GiB for `HUGE1G`. The value for
    /// `NORMAL` is UNCONFIRMED; since the runtime allocates normal-page
    /// requests as huge pages, we conservatively use 2 MiB.
    pub const fn granularity(self) -> usize {
        match self {
            PageClass::Normal | PageClass::Huge => 2 * MIB,
            PageClass::Huge1G => GIB,
        }
    }
}

macro_rules! mem_attrs {
    ($(
        $(#[$doc:meta])*
        $variant:ident = $value:literal, $cname:literal, $class:ident
        $(, marker $marker:ident)?;
    )*) => {
        /// `aclrtMemAttr`: the value of `aclrtPhysicalMemProp::memAttr`.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[cfg_attr(feature = "defmt-1", derive(defmt::Format))]
        #[repr(u32)]
        pub enum MemAttr {
            $( $(#[$doc])* $variant = $value, )*
        }

        impl MemAttr {
            /// All values of the C enum, in value order.
            pub const ALL: &'static [MemAttr] = &[$(MemAttr::$variant),*];

            /// How many values `aclrtMallocPhysical` accepts (those with a
            /// marker type).
            pub const ALLOCATABLE_COUNT: usize = 0 $(+ mem_attrs!(@one $($marker)?))*;

            /// The C enumerator name, e.g. `"ACL_HBM_MEM_HUGE"`.
            pub const fn c_name(self) -> &'static str {
                match self { $(MemAttr::$variant => $cname,)* }
            }

            /// The page class, which fixes the granularity.
            pub const fn page_class(self) -> PageClass {
                match self { $(MemAttr::$variant => PageClass::$class,)* }
            }

            /// Converts a raw C value. Values outside the enum are `None`.
            pub const fn from_raw(raw: u32) -> Option<MemAttr> {
                match raw {
                    $($value => Some(MemAttr::$variant),)*
                    _ => None,
                }
            }

            /// Whether `aclrtMallocPhysical` accepts this value at all (that is,
            /// whether a marker type exists for it).
            pub const fn is_allocatable(self) -> bool {
                match self { $(MemAttr::$variant => mem_attrs!(@has $($marker)?),)* }
            }

            /// The Rust marker type's name (`"HbmHuge"`), for allocatable values.
            pub const fn marker_name(self) -> Option<&'static str> {
                match self { $(MemAttr::$variant => mem_attrs!(@name $($marker)?),)* }
            }
        }

        $( mem_attrs!(@marker [$(#[$doc])*] $variant $($marker)?); )*
    };
    (@marker [$($docs:tt)*] $variant:ident $marker:ident) => {
        $($docs)*
        ///
        /// Marker type for use in [`PhysicalMemProp`](crate::PhysicalMemProp)
        /// and the capability traits.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
        #[cfg_attr(feature = "defmt-1", derive(defmt::Format))]
        pub struct $marker;
        impl Sealed for $marker {}
        impl AttrType for $marker {
            const ATTR: MemAttr = MemAttr::$variant;
        }
    };
    (@marker [$($docs:tt)*] $variant:ident) => {};
    (@one $marker:ident) => { 1 };
    (@one) => { 0 };
    (@has $marker:ident) => { true };
    (@has) => { false };
    (@name $marker:ident) => { Some(stringify!($marker)) };
    (@name) => { None };
}

mem_attrs! {
    /// `ACL_DDR_MEM`: DDR, huge and normal pages. Used with `aclrtGetMemInfo`;
    /// rejected by `aclrtMallocPhysical` (100000).
    DdrMem = 0, "ACL_DDR_MEM", Huge;
    /// `ACL_HBM_MEM`: HBM, huge and normal pages. Used with `aclrtGetMemInfo`;
    /// rejected by `aclrtMallocPhysical` (100000).
    HbmMem = 1, "ACL_HBM_MEM", Huge;
    /// `ACL_DDR_MEM_HUGE`: DDR 2 MiB pages (host only).
    DdrMemHuge = 2, "ACL_DDR_MEM_HUGE", Huge, marker DdrHuge;
    /// `ACL_DDR_MEM_NORMAL`: DDR normal pages (host only).
    DdrMemNormal = 3, "ACL_DDR_MEM_NORMAL", Normal, marker DdrNormal;
    /// `ACL_HBM_MEM_HUGE`: HBM 2 MiB pages (served from DDR on products
    /// without HBM).
    HbmMemHuge = 4, "ACL_HBM_MEM_HUGE", Huge, marker HbmHuge;
    /// `ACL_HBM_MEM_NORMAL`: HBM normal pages (allocated as huge pages).
    HbmMemNormal = 5, "ACL_HBM_MEM_NORMAL", Normal, marker HbmNormal;
    /// `ACL_DDR_MEM_P2P_HUGE`: DDR 2 MiB pages for device-to-device copies
    /// (host only).
    DdrMemP2pHuge = 6, "ACL_DDR_MEM_P2P_HUGE", Huge, marker DdrP2pHuge;
    /// `ACL_DDR_MEM_P2P_NORMAL`: DDR normal pages for device-to-device copies
    /// (host only).
    DdrMemP2pNormal = 7, "ACL_DDR_MEM_P2P_NORMAL", Normal, marker DdrP2pNormal;
    /// `ACL_HBM_MEM_P2P_HUGE`: rejected by `aclrtMallocPhysical` (100000).
    HbmMemP2pHuge = 8, "ACL_HBM_MEM_P2P_HUGE", Huge;
    /// `ACL_HBM_MEM_P2P_NORMAL`: rejected by `aclrtMallocPhysical` (100000).
    HbmMemP2pNormal = 9, "ACL_HBM_MEM_P2P_NORMAL", Normal;
    /// `ACL_HBM_MEM_HUGE1G`: HBM 1 GiB pages (device only; Atlas 350, A3, A2).
    HbmMemHuge1G = 10, "ACL_HBM_MEM_HUGE1G", Huge1G, marker HbmHuge1G;
    /// `ACL_HBM_MEM_P2P_HUGE1G`: rejected by `aclrtMallocPhysical` (100000).
    HbmMemP2pHuge1G = 11, "ACL_HBM_MEM_P2P_HUGE1G", Huge1G;
    /// `ACL_MEM_NORMAL`: normal pages, the runtime picks DDR or HBM.
    MemNormal = 12, "ACL_MEM_NORMAL", Normal, marker Normal;
    /// `ACL_MEM_HUGE`: 2 MiB pages, the runtime picks DDR or HBM.
    MemHuge = 13, "ACL_MEM_HUGE", Huge, marker Huge;
    /// `ACL_MEM_HUGE1G`: 1 GiB pages (device only; A3 and A2).
    MemHuge1G = 14, "ACL_MEM_HUGE1G", Huge1G, marker Huge1G;
    /// `ACL_MEM_P2P_NORMAL`: normal pages for device-to-device copies.
    MemP2pNormal = 15, "ACL_MEM_P2P_NORMAL", Normal, marker P2pNormal;
    /// `ACL_MEM_P2P_HUGE`: 2 MiB pages for device-to-device copies.
    MemP2pHuge = 16, "ACL_MEM_P2P_HUGE", Huge, marker P2pHuge;
    /// `ACL_MEM_P2P_HUGE1G`: 1 GiB pages for device-to-device copies (device
    /// only; some A3 interconnects, confirmed by the device at run time).
    MemP2pHuge1G = 17, "ACL_MEM_P2P_HUGE1G", Huge1G, marker P2pHuge1G;
}

impl MemAttr {
    /// The raw C value.
    pub const fn raw(self) -> u32 {
        self as u32
    }

    /// The minimum allocation granularity in bytes.
    pub const fn granularity(self) -> usize {
        self.page_class().granularity()
    }

    /// The values `aclrtMallocPhysical` accepts, in value order.
    pub const ALLOCATABLE: [MemAttr; MemAttr::ALLOCATABLE_COUNT] = {
        let mut out = [MemAttr::DdrMem; MemAttr::ALLOCATABLE_COUNT];
        let mut i = 0;
        let mut n = 0;
        while i < MemAttr::ALL.len() {
            if MemAttr::ALL[i].is_allocatable() {
                out[n] = MemAttr::ALL[i];
                n += 1;
            }
            i += 1;
        }
        assert!(n == MemAttr::ALLOCATABLE_COUNT);
        out
    };
}

impl core::fmt::Display for MemAttr {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.c_name())
    }
}

/// A memory-attribute marker type (one per value `aclrtMallocPhysical`
/// accepts). Sealed.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a memory-attribute marker type",
    label = "expected a marker such as `HbmHuge`, `Huge` or `DdrHuge`",
    note = "ACL_DDR_MEM, ACL_HBM_MEM and ACL_HBM_MEM_P2P_* have no marker: aclrtMallocPhysical rejects them with ACL_ERROR_INVALID_PARAM (100000)"
)]
pub trait AttrType: Sealed + Copy + Default + 'static {
    /// The value this marker stands for.
    const ATTR: MemAttr;
    /// Minimum allocation granularity in bytes.
    const GRANULARITY: usize = Self::ATTR.granularity();
}
