//! `libaclmem_sanitizer.so`: checks a program's ACL memory calls, on a real
//! NPU or on the emulator, without changing what the program sees.
//!
//! Preload it (`LD_PRELOAD`, or `aclmem sanitize -- program`): it defines
//! every ACL function of the project's list (`aclmem_sys::FUNCTIONS`; the
//! checked ones through naked entry points that hand over their call
//! site),
//! forwards each call unchanged to the next definition (`dlsym(RTLD_NEXT)`;
//! when the program loads the library itself, `dlopen` of
//! `$ACLMEM_ASCENDCL` or `libascendcl.so`), and checks it against the model
//! of the documented semantics and the rules table:
//!
//! * `rule`: the product and CANN release it runs on refuse the
//!   attribute or location (the rule in words, the code the runtime gives);
//! * `portability`: a product or release of `ACLMEM_SANITIZER_TARGETS`
//!   (`a2,a3@8.3,Ascend910B3@8.0`) would refuse it;
//! * lifetimes: `double-free`, `free-while-mapped`, `use-after-free`,
//!   `unmap-unmapped`, `release-while-mapped`, `release-unreserved`, `overlapping-map`,
//!   `copy-unmapped`, `import-own-export`;
//! * `cycle-growth`: memory held at the end of each sleep of a sleep/wake
//!   loop grows, with the growth per cycle and the place that makes it;
//! * `leak`: what is still held at `aclFinalize` or exit, with the call site
//!   that made it;
//! * sharing: `ipc-key-on-vmm` (a legacy IPC key asked for VMM memory),
//!   `handle-type-as-device` (an import's device id that is a handle type's
//!   value), and, from the events of every process of a run
//!   (`ACLMEM_SANITIZER_SHARING`, joined by `aclmem sanitize`), the
//!   findings that name two processes;
//! * HCCL (`hccl`) and the mstx memory API's pools (`mstx`): buffers of
//!   collectives, pools described with heaps and regions (docs/mstx.md).
//!
//! Findings go to stderr (one line each), as JSON lines to
//! `ACLMEM_SANITIZER_LOG`, and into a summary at exit;
//! `ACLMEM_SANITIZER_HALT_ON_ERROR=1` stops at the first.
//! `ACLMEM_SANITIZER_TRACE=file` writes the memory timeline.
//!
//! The rooms: `config` (the settings), `underneath` (finding and calling
//! the library underneath, and what a failed call of it is), `platform`
//! (the model's lock, fork, what the program runs on), `checks` (the rules
//! of a prop, the exit handler), the hooks by area (`runtime`, `vmm`,
//! `device_memory`, `ipc`, each memory hook in the shape of `hook!`),
//! `passthrough` (forwarding unchanged what no hook checks),
//! `trampolines` (what is defined for each function of the catalogue:
//! the entry points that hand over their call site, the rest forwarded),
//! `abi` (the sanitizer's own functions); `model` keeps the process's
//! memory, `report` the findings, `trace` and `sharing` the files of
//! `aclmem-formats`, `python` and `mstx` what those programs tell.

#![allow(non_snake_case)]

use std::cell::Cell;
use std::collections::HashMap;
use std::ffi::{CStr, c_char, c_void};
use std::sync::OnceLock;

use parking_lot::{Mutex, MutexGuard};

use aclmem_core::{
    AclError, CannVersion, Location, MemAttr, Product, RawPhysicalMemProp, RunMode, Target,
};
use aclmem_sys::{self as sys, AclFunctions};

// The rooms: what the sanitizer knows and does, one module each. Every
// room sees the crate root's names (`use super::*`), and the root
// re-exports what the rooms define for each other.
pub mod audit;
mod cmem;
pub mod hccl;
mod model;
pub mod mstx;
mod postmortem;
mod python;
pub mod report;
mod sharing;
mod trace;

use aclmem_formats::sharing::Kind;
use model::Model;
use report::{Caller, Class, Finding, Site, report};

/// Calls the next definition of `$name` with the arguments, or answers
/// 207000 (once named on stderr) when the library underneath lacks it.
macro_rules! forward {
    ($name:ident($($arg:expr),* $(,)?)) => {
        match next().$name {
            Some(f) => {
                // SAFETY: `f` is the library's own definition of this
                // function (same prototype), given the caller's arguments
                // unchanged: the caller's contract is passed on.
                #[allow(unused_unsafe)]
                let r = unsafe { f($($arg),*) };
                r
            }
            None => missing(stringify!($name)),
        }
    };
}

/// The one shape of a checked call's hook: the steps every hook takes, in
/// this order, with the function named once (its name in findings and in
/// the trace is the identifier's):
///
/// 1. the call's site (`at`);
/// 2. the checks before the call (`check`, with the site bound to the
///    given name): findings against the model and the rules, and whatever
///    the later steps need of the state before the call (its value);
/// 3. the call, forwarded unchanged to the library underneath;
/// 4. a failed answer reported when asked (`api-error`);
/// 5. what the answer changed (`done`, with the answer, the checks' value
///    and the site bound to the given patterns): the model, sharing
///    events, an out-of-memory report;
/// 6. the trace record `done` gives ([`Traced`]), written when tracing.
///
/// With `locked |m|;` the model is locked once, from the checks to what
/// the answer changed, and bound to `m` in both: the hooks of physical
/// handles, reservations and mappings take this form (exports and imports,
/// which may wait on another process, lock only around their own steps).
/// One lock per call instead of two, and a check, the call it checks and
/// the model's update are one step for the other threads: two threads
/// unmapping one address are judged in the order their calls really ran
/// (the second finds no mapping), never both passed.
/// The library's calls of these functions are not re-entered from below
/// and never wait for another thread of the process, so holding the lock
/// across one costs the other threads only the time of that call. Copies
/// and memsets (which may take long) lock only around their checks.
///
/// Every hook of the physical-memory API and of device and host memory
/// (`vmm`, `device_memory`) takes this shape. Written out are the calls
/// that arrive without a trampoline (`aclrtFree`, `aclrtFreeHost`, the
/// legacy IPC keys of `ipc`), which have no return address handed over and
/// find their site only when a finding needs it, and the runtime's and
/// HCCL's hooks (`runtime`, `hccl`), which follow the thread's device or a
/// communicator rather than memory.
macro_rules! hook {
    (
        $name:ident($($arg:expr),* $(,)?) at $site:expr;
        locked |$m:ident|;
        check |$check_site:ident| $check:expr;
        done |$r:pat_param, $before:pat_param, $done_site:pat_param| $done:expr $(;)?
    ) => {{
        let site: Site = $site;
        let mut guard = model();
        let before = {
            // Some checks need only the lock (reserve's: none).
            #[allow(unused_variables)]
            let $m: &mut Model = &mut guard;
            let $check_site = site;
            $check
        };
        let r: sys::aclError =
            crate::python::under_way(site.ra(), site.python(), || forward!($name($($arg),*)));
        api_error(stringify!($name), r, site);
        let traced: Traced<_> = {
            let $m: &mut Model = &mut guard;
            let ($r, $before, $done_site) = (r, before, site);
            $done
        };
        drop(guard);
        traced.write(stringify!($name), r);
        r
    }};
    (
        $name:ident($($arg:expr),* $(,)?) at $site:expr;
        check |$check_site:ident| $check:expr;
        done |$r:pat_param, $before:pat_param, $done_site:pat_param| $done:expr $(;)?
    ) => {{
        let site: Site = $site;
        let $check_site = site;
        let before = $check;
        let r: sys::aclError = forward!($name($($arg),*));
        api_error(stringify!($name), r, site);
        let ($r, $before, $done_site) = (r, before, site);
        let traced: Traced<_> = $done;
        traced.write(stringify!($name), r);
        r
    }};
}

/// The trace record of a hooked call ([`hook!`]'s last step): none, or the
/// process's totals after it, its size, and the fields `extra` fills in.
pub(crate) enum Traced<F> {
    /// No record (the call writes its own, or none).
    Not,
    /// One record.
    Record {
        totals: Option<(u32, usize, usize)>,
        size: usize,
        extra: F,
    },
}

impl Traced<fn(&mut aclmem_formats::trace::Record<'static>)> {
    /// No record.
    pub(crate) const NOT: Self = Traced::Not;
}

/// A trace record of the call ([`Traced::Record`]), or none when the
/// process is not traced (decided here, inline: nothing is built for it).
#[inline]
pub(crate) fn traced<F>(totals: Option<(u32, usize, usize)>, size: usize, extra: F) -> Traced<F>
where
    F: FnOnce(&mut aclmem_formats::trace::Record<'static>),
{
    if !trace::enabled() {
        return Traced::Not;
    }
    Traced::Record {
        totals,
        size,
        extra,
    }
}

impl<F: FnOnce(&mut aclmem_formats::trace::Record<'static>)> Traced<F> {
    #[inline]
    fn write(self, call: &'static str, r: sys::aclError) {
        if let Traced::Record {
            totals,
            size,
            extra,
        } = self
        {
            trace::call_with(call, totals, size, r, extra);
        }
    }
}

mod config;
use config::*;
mod underneath;
use underneath::*;
mod platform;
use platform::*;
mod checks;
use checks::*;
mod runtime;
use runtime::*;
mod vmm;
use vmm::*;
mod device_memory;
use device_memory::*;
#[macro_use]
mod passthrough;
mod ipc;
use ipc::*;
mod abi;
mod trampolines;
use abi::*;

#[cfg(test)]
mod target_tests {
    use super::*;

    #[test]
    fn targets_use_the_core_parsers() {
        // `A2` was refused here while `aclmem matrix --product A2` took it.
        let t = |product, run_mode, cann| Target {
            product,
            run_mode,
            cann,
        };
        assert_eq!(
            parse_targets("A2, atlas-a3@8.3.RC1,Ascend910B3@9.0, AtlasTraining,200i-a2:rc@8.3"),
            vec![
                t(Product::AtlasA2, None, None),
                t(Product::AtlasA3, None, Some(CannVersion::V8_3)),
                t(Product::AtlasA2, None, Some(CannVersion::V9_0)),
                t(Product::AtlasTraining, None, None),
                t(
                    Product::Atlas200IA2,
                    Some(RunMode::Rc),
                    Some(CannVersion::V8_3)
                ),
            ]
        );
        assert!(parse_targets("a2@8.3.garbage,a9,a2:xp").is_empty());
    }
}
