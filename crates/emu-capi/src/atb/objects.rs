//! ATB's C++ objects, made in Rust: `atb::Context` and `atb::Operation`
//! as the Itanium C++ ABI lays out a polymorphic object, so that C++ code
//! compiled against ATB's headers calls their virtual methods.
//!
//! An object's first word points to its class's virtual table, at the
//! first virtual function's slot (a static table here, preceded by the
//! offset-to-top 0 and a NULL type-information pointer: no RTTI, so a
//! `dynamic_cast` or `typeid` on these objects is not supported). Each
//! slot is an `extern "C"` function taking `this` first; the virtual
//! destructor has two slots (complete object, then deleting). A method
//! returning a class by value (`std::string`, `std::vector`: classes with
//! a non-trivial destructor, which the C++ ABI always returns through the
//! caller's storage) receives that storage's address where the
//! architecture puts it: as a hidden first argument, before `this`, on
//! x86-64, and in register x8 on aarch64 (see [`ByValue`]).
//!
//! Memory and lifetime: an object is a `Box` made by `atb::CreateContext`
//! or `atb::CreateOperation` and freed only by `atb::DestroyContext`,
//! `atb::DestroyOperation` or its deleting destructor (the C++ `delete`).
//! Every live object's address is in a registry; every entry point
//! looks `this` up there before touching it, so a dangling or garbage
//! `this` answers an error status (`ERROR_INVALID_CONTEXT_ADDR`,
//! `ERROR_INVALID_OPERATION_ADDR`) instead of being read. The complete
//! object destructor frees nothing (C++ calls it only on objects it made
//! itself, which these are not).

use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use aclmem_fork::{ForkMutex, ForkMutexGuard};

use super::paged::Paged;

/// What a live object is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    Context,
    Operation,
}

/// The live objects, by address. A forked child starts with none: its
/// parent's objects belong to the parent's process (as the operator API's
/// objects do), and the child's calls on them answer the dead-object
/// statuses.
static LIVE: ForkMutex<Option<HashMap<usize, Class>>> = ForkMutex::new(|| None);

fn live() -> ForkMutexGuard<'static, Option<HashMap<usize, Class>>> {
    LIVE.lock()
}

fn register(addr: usize, class: Class) {
    live().get_or_insert_with(HashMap::new).insert(addr, class);
}

fn is_live(addr: usize, class: Class) -> bool {
    live()
        .as_ref()
        .is_some_and(|m| m.get(&addr) == Some(&class))
}

/// Forgets `addr` if it is a live object of `class`; whether it was.
fn unregister(addr: usize, class: Class) -> bool {
    let mut g = live();
    let Some(m) = g.as_mut() else {
        return false;
    };
    if m.get(&addr) == Some(&class) {
        m.remove(&addr);
        true
    } else {
        false
    }
}

/// The Itanium ABI's virtual table: offset-to-top, type information, then
/// the slots (an object's first word points to `slots`).
#[repr(C)]
pub(crate) struct VTable<S> {
    top: isize,
    type_info: usize,
    slots: S,
}

impl<S> VTable<S> {
    pub(crate) const fn new(slots: S) -> VTable<S> {
        VTable {
            top: 0,
            type_info: 0,
            slots,
        }
    }

    /// The slots, where an object's first word points.
    pub(crate) const fn slots(&'static self) -> &'static S {
        &self.slots
    }
}

/// An `atb::Context`: the stream its operations run on.
#[repr(C)]
pub(crate) struct Context {
    vptr: *const ContextSlots,
    stream: AtomicU64,
    tiling_copy: AtomicBool,
}

/// The virtual methods of `atb::Context`, in the header's order
/// (`include/atb/context.h`).
#[repr(C)]
pub(crate) struct ContextSlots {
    pub complete_dtor: extern "C" fn(*mut Context),
    pub deleting_dtor: extern "C" fn(*mut Context),
    pub set_execute_stream: extern "C" fn(*mut Context, *mut c_void) -> i32,
    pub get_execute_stream: extern "C" fn(*const Context) -> *mut c_void,
    pub set_async_tiling_copy_status: extern "C" fn(*mut Context, bool) -> i32,
    pub get_async_tiling_copy_status: extern "C" fn(*const Context) -> bool,
    pub set_execute_streams: extern "C" fn(*mut Context, *const c_void) -> i32,
    pub get_execute_streams: ByValue,
    pub set_execute_type: extern "C" fn(*mut Context, i32) -> i32,
    pub get_execute_type: extern "C" fn(*mut Context) -> i32,
    pub set_launch_mode: extern "C" fn(*mut Context, i32) -> i32,
    pub get_launch_mode: extern "C" fn(*mut Context) -> i32,
}

/// A new context (its stream: the default one, NULL); its address.
pub(crate) fn new_context(slots: &'static ContextSlots) -> *mut Context {
    let p = Box::into_raw(Box::new(Context {
        vptr: slots,
        stream: AtomicU64::new(0),
        tiling_copy: AtomicBool::new(false),
    }));
    register(p as usize, Class::Context);
    p
}

/// Frees the context at `p`; whether it was one.
pub(crate) fn free_context(p: *mut Context) -> bool {
    if !unregister(p as usize, Class::Context) {
        return false;
    }
    // SAFETY: `p` was live: made by `Box::into_raw` in `new_context` and
    // not freed since (freeing unregisters it first, under the lock).
    drop(unsafe { Box::from_raw(p) });
    true
}

/// Runs `f` on the live context at `p` (`None`: not one).
pub(crate) fn with_context<R>(p: *const Context, f: impl FnOnce(&Context) -> R) -> Option<R> {
    if !is_live(p as usize, Class::Context) {
        return None;
    }
    // SAFETY: a registered address is a live `Context` box; C++ shares it
    // (its fields are atomics), and a concurrent destroy is the C++
    // caller's use-after-free, as with the real library.
    Some(f(unsafe { &*p }))
}

impl Context {
    /// The stream its operations run on.
    pub(crate) fn stream(&self) -> u64 {
        self.stream.load(Ordering::Acquire)
    }

    pub(crate) fn set_stream(&self, stream: u64) {
        self.stream.store(stream, Ordering::Release);
    }

    pub(crate) fn tiling_copy(&self) -> bool {
        self.tiling_copy.load(Ordering::Acquire)
    }

    pub(crate) fn set_tiling_copy(&self, on: bool) {
        self.tiling_copy.store(on, Ordering::Release);
    }
}

/// An `atb::Operation`: the operation it carries out.
#[repr(C)]
pub(crate) struct Operation {
    vptr: *const OperationSlots,
    /// What it computes.
    pub paged: Paged,
}

/// The virtual methods of `atb::Operation`, in the header's order
/// (`include/atb/operation.h`).
#[repr(C)]
pub(crate) struct OperationSlots {
    pub complete_dtor: extern "C" fn(*mut Operation),
    pub deleting_dtor: extern "C" fn(*mut Operation),
    pub get_name: ByValue,
    pub infer_shape: extern "C" fn(*const Operation, *const c_void, *mut c_void) -> i32,
    pub get_input_num: extern "C" fn(*const Operation) -> u32,
    pub get_output_num: extern "C" fn(*const Operation) -> u32,
    pub setup: extern "C" fn(*mut Operation, *const c_void, *mut u64, *mut Context) -> i32,
    pub execute: extern "C" fn(*mut Operation, *const c_void, *mut u8, u64, *mut Context) -> i32,
}

/// A new operation; its address.
pub(crate) fn new_operation(slots: &'static OperationSlots, paged: Paged) -> *mut Operation {
    let p = Box::into_raw(Box::new(Operation { vptr: slots, paged }));
    register(p as usize, Class::Operation);
    p
}

/// Frees the operation at `p`; whether it was one.
pub(crate) fn free_operation(p: *mut Operation) -> bool {
    if !unregister(p as usize, Class::Operation) {
        return false;
    }
    // SAFETY: as in `free_context`: a live box of `new_operation`.
    drop(unsafe { Box::from_raw(p) });
    true
}

/// Runs `f` on the live operation at `p` (`None`: not one).
pub(crate) fn with_operation<R>(p: *const Operation, f: impl FnOnce(&Operation) -> R) -> Option<R> {
    if !is_live(p as usize, Class::Operation) {
        return None;
    }
    // SAFETY: a registered address is a live `Operation` box, never
    // mutated after it was made.
    Some(f(unsafe { &*p }))
}

/// The slot of a virtual method that returns a class by value.
///
/// On x86-64 the System V C++ ABI passes the address of the caller's
/// storage for the result as a hidden first argument, before `this`, and
/// returns it in `rax`: the slot is the implementation itself,
/// `extern "C" fn(ret, this) -> ret`. On aarch64 the C++ ABI (AAPCS64)
/// passes that address in register x8 and `this` in x0: the slot is a
/// naked trampoline (made in `api.rs`) that moves
/// `this` to x1 and x8 to x0 and branches to the same implementation.
#[cfg(not(target_arch = "aarch64"))]
pub(crate) type ByValue = extern "C" fn(*mut c_void, *const c_void) -> *mut c_void;

/// The slot of a virtual method that returns a class by value: entered as
/// C++ enters it, `this` in x0 and the result's storage in x8 (see the
/// x86-64 definition for both conventions).
#[cfg(target_arch = "aarch64")]
pub(crate) type ByValue = extern "C" fn();

/// libstdc++'s `std::string` (the C++11 ABI torch_npu is built with):
/// data pointer, length, then 16 bytes of in-place storage (or the
/// capacity). A string of at most 15 bytes lives in place, so no
/// allocator is involved and the C++ destructor frees nothing.
#[repr(C)]
#[derive(Clone, Copy)]
pub(crate) struct StdString {
    data: usize,
    len: usize,
    local: [u8; 16],
}

impl StdString {
    /// The in-place string `text` (at most 15 bytes) for storage at `at`.
    pub(crate) fn short(at: *mut StdString, text: &str) -> Option<StdString> {
        if text.len() > 15 {
            return None;
        }
        let mut local = [0u8; 16];
        local[..text.len()].copy_from_slice(text.as_bytes());
        Some(StdString {
            data: at as usize + std::mem::offset_of!(StdString, local),
            len: text.len(),
            local,
        })
    }
}
