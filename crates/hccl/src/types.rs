//! HCCL's values: data types, the communicator configuration's layout,
//! the point-to-point item (`docs/hccl.md` has the sources). The result
//! codes are [`crate::result`]'s, the reductions [`crate::reduce`]'s.

pub use crate::reduce::{ReduceFn, ReduceOp};
pub use crate::result::{Hccl, HcclResult};

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
                match self { $(DataType::$name => crate::reduce::function::<$elem>(op),)* }
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
    HIF8 = 14, crate::reduce::NoReduce;
    FP8E4M3 = 15, crate::reduce::NoReduce;
    FP8E5M2 = 16, crate::reduce::NoReduce;
    FP8E8M0 = 17, crate::reduce::NoReduce;
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
