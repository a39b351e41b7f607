//! HCCL's data types (`HcclDataType` of CANN's `hccl_types.h`): the one
//! table of their values, names and element sizes, for the emulated HCCL
//! and the sanitizer (which sizes a collective's buffers by it).

/// Every `HcclDataType`: value, name (after `HCCL_DATA_TYPE_`), bytes per
/// element. Value 13 is unused; `RESERVED` (255) is no type.
pub const DATA_TYPES: [(u32, &str, usize); 17] = [
    (0, "INT8", 1),
    (1, "INT16", 2),
    (2, "INT32", 4),
    (3, "FP16", 2),
    (4, "FP32", 4),
    (5, "INT64", 8),
    (6, "UINT64", 8),
    (7, "UINT8", 1),
    (8, "UINT16", 2),
    (9, "UINT32", 4),
    (10, "FP64", 8),
    (11, "BFP16", 2),
    (12, "INT128", 16),
    (14, "HIF8", 1),
    (15, "FP8E4M3", 1),
    (16, "FP8E5M2", 1),
    (17, "FP8E8M0", 1),
];

/// Bytes per element of the data type `raw`; `None` for a value that is
/// no type.
pub const fn data_type_size(raw: u32) -> Option<usize> {
    let mut i = 0;
    while i < DATA_TYPES.len() {
        if DATA_TYPES[i].0 == raw {
            return Some(DATA_TYPES[i].2);
        }
        i += 1;
    }
    None
}
