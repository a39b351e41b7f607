//! The framework functions of the catalogue
//! ([`aclmem_sys::with_framework_functions!`]) that are not emulated: what
//! torch_npu and the libraries like it link or look up by name beyond the
//! typed API, answered from the catalogue. Each records the call
//! (`record`) and answers the catalogue's value for what it returns (0,
//! or 207000 for a status that is not supported, 100024 for an operator's;
//! NULL for a pointer; 0 for a count; -1 for an enum; nothing for `void`).
//! The emulated ones are written out in their own modules (`framework`,
//! `ops`, `hccl`, ...), and the crate root checks that every one is.
//!
//! A generated answer ignores its arguments, so it is defined without
//! parameters: on the C ABIs of x86_64 and aarch64 the caller passes and
//! cleans up the arguments, and a callee that reads none of them is called
//! correctly with any argument list (variadic ones included).

use std::ffi::c_void;

use aclmem_sys::catalogue::{Answer, Library, Returns};

use crate::{entry, faults, record};

/// Records a generated answer's call and gives its value.
/// A status other than 0 becomes the thread's last error, as every failed
/// call's does (torch_npu asks `aclrtPeekAtLastError` after a failure and
/// reports that code instead).
fn answer(
    name: &'static str,
    library: Library,
    answer: Answer,
    returns: Returns,
    entry: usize,
) -> i64 {
    if matches!(
        returns,
        Returns::Code | Returns::OpStatus | Returns::HcclStatus
    ) && let Ok(Some(code)) = std::panic::catch_unwind(|| faults::check(name))
    {
        // HCCL's codes are its own, never the runtime's last error.
        if returns != Returns::HcclStatus {
            entry::set_last_error(code);
        }
        return i64::from(code);
    }
    // A panic must not unwind into C; recording is best effort.
    let _ = std::panic::catch_unwind(|| record::record(name, library, answer, returns, entry));
    let value = returns.value(answer);
    if matches!(returns, Returns::Code | Returns::OpStatus) && value != 0 {
        entry::set_last_error(value as i32);
    }
    value
}

/// The C return type of a generated answer, by what the catalogue says
/// the function returns.
macro_rules! c_type {
    (Code) => { i32 };
    (OpStatus) => { i32 };
    (HcclStatus) => { i32 };
    (AtbStatus) => { i32 };
    (Enum) => { i32 };
    (Count) => { u64 };
    (Pointer) => { *mut c_void };
    (Void) => { () };
}

/// A generated answer's value as its C return type.
trait FromAnswer {
    fn from_answer(value: i64) -> Self;
}

impl FromAnswer for i32 {
    fn from_answer(value: i64) -> i32 {
        value as i32
    }
}

impl FromAnswer for u64 {
    fn from_answer(value: i64) -> u64 {
        value as u64
    }
}

impl FromAnswer for *mut c_void {
    /// Always NULL: no generated answer hands out an object.
    fn from_answer(_: i64) -> *mut c_void {
        std::ptr::null_mut()
    }
}

impl FromAnswer for () {
    fn from_answer(_: i64) {}
}

macro_rules! stand_in {
    // Written out by a module of its own; the crate root checks that it is.
    (Emulated, $name:ident, $lib:ident, $ret:ident) => {};
    ($answer:ident, $name:ident, $lib:ident, $ret:ident) => {
        #[doc = concat!("`", stringify!($name), "`: ", stringify!($answer), " (the catalogue).")]
        #[unsafe(no_mangle)]
        pub extern "C" fn $name() -> c_type!($ret) {
            <c_type!($ret) as FromAnswer>::from_answer(answer(
                stringify!($name),
                Library::$lib,
                Answer::$answer,
                Returns::$ret,
                $name as *const () as usize,
            ))
        }
    };
}

macro_rules! stand_ins {
    ($($name:ident in $lib:ident $(since ($smaj:literal, $smin:literal))?: $answer:ident -> $ret:ident = $proto:literal;)*) => {
        $( stand_in!($answer, $name, $lib, $ret); )*
    };
}
aclmem_sys::with_framework_functions!(stand_ins);
