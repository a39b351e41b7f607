//! Values a program sets and reads back: compile options and system
//! parameters (kept, since the emulator compiles and runs no operator), and
//! the version strings and numbers of the installed packages.

use std::collections::BTreeMap;
use std::ffi::c_char;

use aclmem_core::AclError;
use aclmem_fork::ForkMutex;

use crate::cptr;
use crate::entry::{AclErrorCode, guard};
use crate::shared;
use crate::state;

/// Values set by `aclSetCompileopt` and the system-parameter setters, per
/// process (they configure operator compilation and execution, which the
/// emulator does not do; they are kept so that what is set reads back).
static COMPILE_OPTIONS: ForkMutex<BTreeMap<u32, String>> = ForkMutex::new(BTreeMap::new);
static SYS_PARAMS: ForkMutex<BTreeMap<u32, i64>> = ForkMutex::new(BTreeMap::new);

/// The length limit of a compile option's value (the runtime's buffer).
const COMPILE_OPTION_MAX: usize = 4096;

/// `aclError aclSetCompileopt(aclCompileOpt opt, const char *value)`.
#[unsafe(no_mangle)]
pub extern "C" fn aclSetCompileopt(opt: u32, value: *const c_char) -> AclErrorCode {
    guard("aclSetCompileopt", || {
        let v = cptr::read_cstr(value, COMPILE_OPTION_MAX)?;
        COMPILE_OPTIONS.lock().insert(opt, v);
        Ok(())
    })
}

/// `ACL_OP_JIT_COMPILE`: whether operators are compiled just in time.
const ACL_OP_JIT_COMPILE: u32 = 10;

/// The value of an option: the one set, else the default (`disable` for
/// `ACL_OP_JIT_COMPILE`: no operator is ever compiled here; empty for the
/// others).
fn compile_option(opt: u32) -> String {
    COMPILE_OPTIONS
        .lock()
        .get(&opt)
        .cloned()
        .unwrap_or_else(|| {
            if opt == ACL_OP_JIT_COMPILE {
                "disable".to_owned()
            } else {
                String::new()
            }
        })
}

/// `size_t aclGetCompileoptSize(aclCompileOpt opt)`: the buffer a value of
/// the option needs (the runtime's fixed 4096, or more for a longer value
/// set), never 0.
#[unsafe(no_mangle)]
pub extern "C" fn aclGetCompileoptSize(opt: u32) -> usize {
    (compile_option(opt).len() + 1).max(COMPILE_OPTION_MAX)
}

/// `aclError aclGetCompileopt(aclCompileOpt opt, char *value, size_t
/// length)`: the value set, or the option's default.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclGetCompileopt(
    opt: u32,
    value: *mut c_char,
    length: usize,
) -> AclErrorCode {
    guard("aclGetCompileopt", || {
        if value.is_null() || length == 0 {
            return Err(AclError::INVALID_PARAM);
        }
        let v = compile_option(opt);
        if v.len() >= length {
            return Err(AclError::INVALID_PARAM);
        }
        // SAFETY: the C caller's buffer of `length` bytes.
        unsafe { cptr::write_cstr(value, length, &v) }
    })
}

/// `aclError aclrtSetSysParamOpt(aclSysParamOpt opt, int64_t value)`.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtSetSysParamOpt(opt: u32, value: i64) -> AclErrorCode {
    guard("aclrtSetSysParamOpt", || {
        SYS_PARAMS.lock().insert(opt, value);
        Ok(())
    })
}

/// `aclError aclrtCtxSetSysParamOpt(aclSysParamOpt opt, int64_t value)`:
/// as `aclrtSetSysParamOpt` (one value per process). Not refused without a
/// current context: torch_npu sets it during initialisation and treats
/// any failure as fatal, and the value changes nothing here
/// (docs/catalogue.md).
#[unsafe(no_mangle)]
pub extern "C" fn aclrtCtxSetSysParamOpt(opt: u32, value: i64) -> AclErrorCode {
    guard("aclrtCtxSetSysParamOpt", || {
        SYS_PARAMS.lock().insert(opt, value);
        Ok(())
    })
}

/// `aclError aclrtGetSysParamOpt(aclSysParamOpt opt, int64_t *value)`: the
/// value set; 0, the runtime's default, for one never set.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetSysParamOpt(opt: u32, value: *mut i64) -> AclErrorCode {
    guard("aclrtGetSysParamOpt", || {
        if value.is_null() {
            return Err(AclError::INVALID_PARAM);
        }
        let v = SYS_PARAMS.lock().get(&opt).copied().unwrap_or(0);
        // SAFETY: the C caller's out parameter.
        unsafe { cptr::write(value, v) }
    })
}

/// `ACL_PKG_VERSION_MAX_SIZE`: the version string buffer.
const VERSION_MAX: usize = 128;

/// The packages the emulated installation has: the runtime's directory
/// names under `share/info` that carry the emulated release; `pkg` is the
/// C caller's package name (NULL or unreadable: 100000).
fn package_release(pkg: *const c_char) -> Result<String, AclError> {
    match cptr::read_cstr(pkg, VERSION_MAX)?.as_str() {
        "runtime" | "cann" | "compiler" | "hccl" | "opp" | "toolkit" => {
            state::with_config(|c| c.cann.release().to_owned())
        }
        "driver" => shared::driver_version(),
        // Not installed, as the runtime answers a missing version.info.
        _ => Err(AclError::INVALID_FILE),
    }
}

/// `aclError aclsysGetVersionStr(char *pkgName, char *versionStr)`: the
/// emulated release for the runtime's packages (`ACL_PKG_VERSION_MAX_SIZE`
/// bytes are written at most); another package is 100003.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclsysGetVersionStr(pkg: *const c_char, out: *mut c_char) -> AclErrorCode {
    guard("aclsysGetVersionStr", || {
        if out.is_null() {
            return Err(AclError::INVALID_PARAM);
        }
        let release = package_release(pkg)?;
        // SAFETY: the C caller's buffer of ACL_PKG_VERSION_MAX_SIZE bytes.
        unsafe { cptr::write_cstr(out, VERSION_MAX, &release) }
    })
}

/// A release string as the runtime counts it: major·10,000,000 +
/// minor·100,000 + patch·1,000, less 300, 200 or 100 for an alpha, beta or
/// RC, plus its number (`8.3.RC1` is 80,299,901; `9.0.0` is 90,000,000).
fn version_num(release: &str) -> i32 {
    let mut parts = release.split('.');
    let number = |p: Option<&str>| p.and_then(|p| p.parse::<i32>().ok()).unwrap_or(0);
    let (major, minor) = (number(parts.next()), number(parts.next()));
    let rest = parts.next().unwrap_or("0").to_ascii_lowercase();
    let pre = [("alpha", 300), ("beta", 200), ("rc", 100)]
        .into_iter()
        .find_map(|(name, less)| rest.strip_prefix(name).map(|n| (less, n)));
    let base = major * 10_000_000 + minor * 100_000;
    match pre {
        Some((less, n)) => base - less + n.parse::<i32>().unwrap_or(0),
        None => base + rest.parse::<i32>().unwrap_or(0) * 1_000,
    }
}

/// `aclError aclsysGetVersionNum(char *pkgName, int32_t *versionNum)`: the
/// emulated release of the runtime's packages, counted as the runtime does.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclsysGetVersionNum(pkg: *const c_char, out: *mut i32) -> AclErrorCode {
    guard("aclsysGetVersionNum", || {
        if out.is_null() {
            return Err(AclError::INVALID_PARAM);
        }
        let release = package_release(pkg)?;
        // SAFETY: the C caller's out parameter.
        unsafe { cptr::write(out, version_num(&release)) }
    })
}

#[cfg(test)]
mod tests;
