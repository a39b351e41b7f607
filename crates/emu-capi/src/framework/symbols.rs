//! Device variables (CANN 9.1): `aclrtGetSymbolAddress`,
//! `aclrtGetSymbolSize`, `aclrtMemcpyToSymbol(Async)`,
//! `aclrtMemcpyFromSymbol(Async)`.
//!
//! A symbol is the host address of a `__gm__` variable that code compiled
//! by Bisheng registers with its kernel binary (`rtRegisterVariable`). The
//! emulated machine loads no kernel binaries (`aclrtBinaryLoadFromData` is
//! not supported), so no variable is ever registered and every symbol is
//! unknown: after the ACL layer's checks each call answers what the
//! runtime answers for a symbol it cannot find, `RT_ERROR_INVALID_SYMBOL`,
//! 107043 (`symbol_table.cc`), on a thread with a device (107002 without).

use std::ffi::c_void;

use aclmem_core::AclError;
use aclmem_sys::aclrtStream;

use crate::entry::{AclErrorCode, guard};
use crate::shared;
use crate::state::with_global;

/// `ACL_MEMCPY_HOST_TO_DEVICE`, `DEVICE_TO_HOST`, `DEFAULT`.
const H2D: u32 = 1;
const D2H: u32 = 2;
const DEFAULT: u32 = 4;

/// The lookup of `symbol`: no variable is registered.
fn lookup(_symbol: *const c_void) -> Result<(), AclError> {
    with_global(|g| g.emu.current_device())?;
    Err(AclError::RT_INVALID_SYMBOL)
}

/// `aclError aclrtGetSymbolAddress(const void* symbol, void** devPtr)`:
/// symbol or devPtr NULL 100000; an unknown symbol 107043.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtGetSymbolAddress(
    symbol: *const c_void,
    dev_ptr: *mut *mut c_void,
) -> AclErrorCode {
    guard("aclrtGetSymbolAddress", || {
        shared::in_release("aclrtGetSymbolAddress")?;
        if symbol.is_null() || dev_ptr.is_null() {
            return Err(AclError::INVALID_PARAM);
        }
        lookup(symbol)
    })
}

/// `aclError aclrtGetSymbolSize(const void* symbol, size_t* size)`: symbol
/// or size NULL 100000; an unknown symbol 107043.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtGetSymbolSize(symbol: *const c_void, size: *mut usize) -> AclErrorCode {
    guard("aclrtGetSymbolSize", || {
        shared::in_release("aclrtGetSymbolSize")?;
        if symbol.is_null() || size.is_null() {
            return Err(AclError::INVALID_PARAM);
        }
        lookup(symbol)
    })
}

/// The ACL layer's checks of a copy from a symbol: count 0 succeeds
/// first; symbol or dst NULL, count above dstMax, a kind other than D2H or
/// DEFAULT 100000; then the lookup.
fn from_symbol(
    name: &'static str,
    dst: *mut c_void,
    dst_max: usize,
    symbol: *const c_void,
    count: usize,
    kind: u32,
) -> AclErrorCode {
    guard(name, || {
        shared::in_release(name)?;
        if count == 0 {
            return Ok(());
        }
        if symbol.is_null() || dst.is_null() || count > dst_max || !matches!(kind, D2H | DEFAULT) {
            return Err(AclError::INVALID_PARAM);
        }
        lookup(symbol)
    })
}

/// The ACL layer's checks of a copy to a symbol: count 0 succeeds first;
/// symbol or src NULL, a kind other than H2D or DEFAULT 100000; then the
/// lookup.
fn to_symbol(
    name: &'static str,
    symbol: *const c_void,
    src: *const c_void,
    count: usize,
    kind: u32,
) -> AclErrorCode {
    guard(name, || {
        shared::in_release(name)?;
        if count == 0 {
            return Ok(());
        }
        if symbol.is_null() || src.is_null() || !matches!(kind, H2D | DEFAULT) {
            return Err(AclError::INVALID_PARAM);
        }
        lookup(symbol)
    })
}

/// `aclError aclrtMemcpyFromSymbol(void* dst, size_t dstMax, const void*
/// symbol, size_t count, size_t offset, aclrtMemcpyKind kind)`.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtMemcpyFromSymbol(
    dst: *mut c_void,
    dst_max: usize,
    symbol: *const c_void,
    count: usize,
    _offset: usize,
    kind: u32,
) -> AclErrorCode {
    from_symbol("aclrtMemcpyFromSymbol", dst, dst_max, symbol, count, kind)
}

/// `aclError aclrtMemcpyFromSymbolAsync(void* dst, size_t dstMax, const
/// void* symbol, size_t count, size_t offset, aclrtMemcpyKind kind,
/// aclrtStream stream)`.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtMemcpyFromSymbolAsync(
    dst: *mut c_void,
    dst_max: usize,
    symbol: *const c_void,
    count: usize,
    _offset: usize,
    kind: u32,
    _stream: aclrtStream,
) -> AclErrorCode {
    from_symbol(
        "aclrtMemcpyFromSymbolAsync",
        dst,
        dst_max,
        symbol,
        count,
        kind,
    )
}

/// `aclError aclrtMemcpyToSymbol(const void* symbol, const void* src,
/// size_t count, size_t offset, aclrtMemcpyKind kind)`.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtMemcpyToSymbol(
    symbol: *const c_void,
    src: *const c_void,
    count: usize,
    _offset: usize,
    kind: u32,
) -> AclErrorCode {
    to_symbol("aclrtMemcpyToSymbol", symbol, src, count, kind)
}

/// `aclError aclrtMemcpyToSymbolAsync(const void* symbol, const void* src,
/// size_t count, size_t offset, aclrtMemcpyKind kind, aclrtStream
/// stream)`.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtMemcpyToSymbolAsync(
    symbol: *const c_void,
    src: *const c_void,
    count: usize,
    _offset: usize,
    kind: u32,
    _stream: aclrtStream,
) -> AclErrorCode {
    to_symbol("aclrtMemcpyToSymbolAsync", symbol, src, count, kind)
}
