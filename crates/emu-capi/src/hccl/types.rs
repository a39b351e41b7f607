//! HCCL's values: result codes, data types, reduction operations, the
//! communicator configuration's layout (`docs/hccl.md` has the sources).

use std::ffi::c_void;

/// `HcclResult`.
pub type HcclResult = i32;

macro_rules! results {
    ($($name:ident = $value:literal, $text:literal;)*) => {
        /// HCCL's result codes (`hccl_types.h`), each with what
        /// `HcclGetErrorString` answers for it.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        #[repr(i32)]
        #[allow(clippy::upper_case_acronyms, non_camel_case_types)]
        pub enum Hccl {
            $(#[doc = $text] $name = $value,)*
        }

        impl Hccl {
            /// Every code, in value order.
            pub const ALL: &'static [Hccl] = &[$(Hccl::$name),*];

            /// The code's text, NUL-terminated (for `HcclGetErrorString`).
            pub const fn text(self) -> &'static str {
                match self {
                    $(Hccl::$name => concat!($text, "\0"),)*
                }
            }
        }
    };
}

results! {
    SUCCESS = 0, "success";
    E_PARA = 1, "parameter error";
    E_PTR = 2, "empty pointer";
    E_MEMORY = 3, "memory error";
    E_INTERNAL = 4, "internal error";
    E_NOT_SUPPORT = 5, "not support feature";
    E_NOT_FOUND = 6, "not found specific resource";
    E_UNAVAIL = 7, "resource unavailable";
    E_SYSCALL = 8, "call system interface error";
    E_TIMEOUT = 9, "timeout";
    E_OPEN_FILE_FAILURE = 10, "open file fail";
    E_TCP_CONNECT = 11, "tcp connect fail";
    E_ROCE_CONNECT = 12, "roce connect fail";
    E_TCP_TRANSFER = 13, "tcp transfer fail";
    E_ROCE_TRANSFER = 14, "roce transfer fail";
    E_RUNTIME = 15, "call runtime api fail";
    E_DRV = 16, "call driver api fail";
    E_PROFILING = 17, "call profiling api fail";
    E_CCE = 18, "call cce api fail";
    E_NETWORK = 19, "call network api fail";
    E_AGAIN = 20, "try again";
    E_REMOTE = 21, "error cqe";
    E_SUSPENDING = 22, "error communicator suspending";
    E_OPRETRY_FAIL = 23, "retry constraint";
    E_OOM = 24, "out of memory";
}

impl Hccl {
    /// The code as the C caller reads it.
    pub const fn code(self) -> HcclResult {
        self as HcclResult
    }

    /// The text for a raw code; unknown codes have one of their own.
    pub fn text_of(code: HcclResult) -> &'static str {
        Hccl::ALL
            .iter()
            .find(|c| c.code() == code)
            .map_or("unknown error\0", |c| c.text())
    }
}

/// A reduction: `c[i] = op(a[i], b[i])` over `n` elements (`c` may be
/// `a` or `b`), as Gloo calls it.
pub type ReduceFn = unsafe extern "C" fn(*mut c_void, *const c_void, *const c_void, usize);

/// `HcclReduceOp`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReduceOp {
    /// `HCCL_REDUCE_SUM` (0).
    Sum,
    /// `HCCL_REDUCE_PROD` (1).
    Prod,
    /// `HCCL_REDUCE_MAX` (2).
    Max,
    /// `HCCL_REDUCE_MIN` (3).
    Min,
}

impl ReduceOp {
    /// From the C value; anything else is `HCCL_E_PARA`.
    pub fn from_raw(raw: u32) -> Result<ReduceOp, Hccl> {
        Ok(match raw {
            0 => ReduceOp::Sum,
            1 => ReduceOp::Prod,
            2 => ReduceOp::Max,
            3 => ReduceOp::Min,
            _ => return Err(Hccl::E_PARA),
        })
    }

    /// The C value.
    pub const fn raw(self) -> u32 {
        match self {
            ReduceOp::Sum => 0,
            ReduceOp::Prod => 1,
            ReduceOp::Max => 2,
            ReduceOp::Min => 3,
        }
    }
}

macro_rules! data_types {
    ($($name:ident = $value:literal, $elem:ty;)*) => {
        /// `HcclDataType`: every type of `hccl_types.h`, and the Rust type
        /// that reduces it (`NoReduce`: HCCL moves it but does not reduce
        /// it). Values, names and sizes are `aclmem_sys::hccl::DATA_TYPES`'s.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        #[allow(clippy::upper_case_acronyms, non_camel_case_types)]
        pub enum DataType {
            $(#[doc = concat!("`HCCL_DATA_TYPE_", stringify!($name), "` (", $value, ")")] $name,)*
        }

        impl DataType {
            /// Every type.
            pub const ALL: &'static [DataType] = &[$(DataType::$name),*];

            /// From the C value; an unknown type is `HCCL_E_PARA`.
            pub fn from_raw(raw: u32) -> Result<DataType, Hccl> {
                match raw {
                    $($value => Ok(DataType::$name),)*
                    _ => Err(Hccl::E_PARA),
                }
            }

            /// The C value.
            pub const fn raw(self) -> u32 {
                match self { $(DataType::$name => $value,)* }
            }

            /// Bytes per element.
            pub const fn size(self) -> usize {
                match aclmem_sys::hccl::data_type_size(self.raw()) {
                    Some(s) => s,
                    None => 1,
                }
            }

            /// The function reducing this type with `op`; `None` for a type
            /// HCCL does not reduce (the 8-bit floats).
            pub fn reduce(self, op: ReduceOp) -> Option<ReduceFn> {
                match self { $(DataType::$name => super::reduce::function::<$elem>(op),)* }
            }
        }
    };
}

data_types! {
    INT8 = 0, i8;
    INT16 = 1, i16;
    INT32 = 2, i32;
    FP16 = 3, half::f16;
    FP32 = 4, f32;
    INT64 = 5, i64;
    UINT64 = 6, u64;
    UINT8 = 7, u8;
    UINT16 = 8, u16;
    UINT32 = 9, u32;
    FP64 = 10, f64;
    BFP16 = 11, half::bf16;
    INT128 = 12, i128;
    HIF8 = 14, super::reduce::NoReduce;
    FP8E4M3 = 15, super::reduce::NoReduce;
    FP8E5M2 = 16, super::reduce::NoReduce;
    FP8E8M0 = 17, super::reduce::NoReduce;
}

/// `HcclCommConfig`'s fields the emulator reads, at their offsets in the
/// C struct (`docs/hccl.md`): `size` at 0, `magicWord` at 8, `version` at
/// 12, `hcclCommName[128]` at 32, `hcclExecTimeOut` at 316.
pub mod config {
    /// `HcclCommConfigInit`'s magic word.
    pub const MAGIC: u32 = 0xf0f0_f0f0;
    /// Where `hcclCommName` starts, and its length.
    pub const COMM_NAME: (usize, usize) = (32, 128);
    /// Where `hcclExecTimeOut` (seconds, `int32_t`) is.
    pub const EXEC_TIMEOUT: usize = 316;
    /// `..._NOT_SET`.
    pub const NOT_SET: u32 = 0xffff_ffff;
    /// The bytes read: up to the execution timeout (a config declaring
    /// fewer is read as far as it goes).
    pub const READ: usize = EXEC_TIMEOUT + 4;
    /// `HcclGetCommConfigCapability`: every capability of
    /// `HcclCommConfigCapability` up to `HCCL_COMM_CONFIG_RESERVED` (12),
    /// so torch_npu passes its whole config, names included.
    pub const CAPABILITY: u32 = 12;
}

/// `HcclSendRecvItem` (32 bytes on LP64).
#[derive(Debug, Clone, Copy, Default)]
#[repr(C)]
pub struct SendRecvItem {
    /// `HCCL_SEND` (0) or `HCCL_RECV` (1).
    pub kind: u32,
    /// The buffer.
    pub buf: usize,
    /// Elements.
    pub count: u64,
    /// `HcclDataType`.
    pub data_type: u32,
    /// The peer, a rank of the communicator.
    pub remote_rank: u32,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn send_recv_item_has_the_c_layout() {
        assert_eq!(std::mem::size_of::<SendRecvItem>(), 32);
        assert_eq!(std::mem::offset_of!(SendRecvItem, buf), 8);
        assert_eq!(std::mem::offset_of!(SendRecvItem, count), 16);
        assert_eq!(std::mem::offset_of!(SendRecvItem, data_type), 24);
        assert_eq!(std::mem::offset_of!(SendRecvItem, remote_rank), 28);
    }

    #[test]
    fn codes_and_types_round_trip() {
        for (i, c) in Hccl::ALL.iter().enumerate() {
            assert_eq!(c.code(), i as i32);
            assert!(c.text().ends_with('\0'));
        }
        assert_eq!(Hccl::text_of(1041), "unknown error\0");
        for t in DataType::ALL {
            assert_eq!(DataType::from_raw(t.raw()), Ok(*t));
        }
        // The same types as the one table, named alike, each reduced in a
        // Rust type of its size.
        assert_eq!(DataType::ALL.len(), aclmem_sys::hccl::DATA_TYPES.len());
        for (raw, name, size) in aclmem_sys::hccl::DATA_TYPES {
            let t = DataType::from_raw(raw).unwrap();
            assert_eq!(format!("{t:?}"), name);
            assert_eq!(t.size(), size);
        }
        assert_eq!(DataType::from_raw(13), Err(Hccl::E_PARA));
        assert_eq!(DataType::from_raw(255), Err(Hccl::E_PARA));
        assert!(DataType::FP8E4M3.reduce(ReduceOp::Sum).is_none());
        assert!(DataType::BFP16.reduce(ReduceOp::Max).is_some());
        assert_eq!(ReduceOp::from_raw(255), Err(Hccl::E_PARA));
    }
}
