//! Stream value operations (`aclrtValueWrite`, `aclrtValueWait`, CANN 9.0
//! on): a 64-bit value in device memory written or waited for by a
//! stream. torch_npu builds `torch.npu.Event(external=True)` on them once
//! both symbols exist: record is a write of 1, wait is a wait for 1 (EQ)
//! followed by a write of 0.
//!
//! The ACL layer checks only `devAddr` (100000); the runtime refuses a
//! chip without the feature (207000: only Atlas 350, A3 and A2 have it), a
//! bad flag (107000), memory other than device memory (107000) and a
//! stream that is not live. Every stream's work runs at once here, so a
//! write is stored when the call returns and a wait that does not hold is
//! polled for `aclmem_emu::VALUE_WAIT_BOUND` (another thread or process
//! may write it), then answers the stream's timeout (507046, the
//! emulator's choice: docs/errors.md).

use std::ffi::c_void;

use aclmem_core::{AclError, Product};
use aclmem_sys::aclrtStream;

use crate::entry::{AclErrorCode, guard};
use crate::shared;
use crate::state::with_global;

/// The products whose runtime has `RT_FEATURE_TASK_VALUE_WAIT`.
const VALUE_PRODUCTS: &[Product] = &[Product::Atlas350, Product::AtlasA3, Product::AtlasA2];

/// The ACL layer's and the chip's checks of both calls.
fn value_call(name: &'static str, dev_addr: *mut c_void) -> Result<(), AclError> {
    shared::in_release(name)?;
    if dev_addr.is_null() {
        return Err(AclError::INVALID_PARAM);
    }
    shared::on_products(VALUE_PRODUCTS)
}

/// `aclError aclrtValueWrite(void *devAddr, uint64_t value, uint32_t flag,
/// aclrtStream stream)`: stores the 64-bit `value` at `devAddr`, device
/// memory aligned to 8 bytes; `flag` must be 0.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtValueWrite(
    dev_addr: *mut c_void,
    value: u64,
    flag: u32,
    stream: aclrtStream,
) -> AclErrorCode {
    guard("aclrtValueWrite", || {
        value_call("aclrtValueWrite", dev_addr)?;
        with_global(|g| {
            g.emu
                .value_write(dev_addr as usize, value, flag, stream as usize as u64)
        })
    })
}

/// `aclError aclrtValueWait(void *devAddr, uint64_t value, uint32_t flag,
/// aclrtStream stream)`: the stream waits until the 64-bit value at
/// `devAddr` satisfies `flag` against `value`
/// (`ACL_STREAM_WAIT_VALUE_GEQ` 0, `EQ` 1, `AND` 2, `NOR` 3).
#[unsafe(no_mangle)]
pub extern "C" fn aclrtValueWait(
    dev_addr: *mut c_void,
    value: u64,
    flag: u32,
    stream: aclrtStream,
) -> AclErrorCode {
    guard("aclrtValueWait", || {
        value_call("aclrtValueWait", dev_addr)?;
        with_global(|g| {
            g.emu.value_wait(
                dev_addr as usize,
                value,
                flag,
                stream as usize as u64,
                aclmem_emu::VALUE_WAIT_BOUND,
            )
        })
    })
}
