//! The one shape of a checked call's hook ([`hook!`]): the steps every
//! hook takes, in order, and the trace record it ends with ([`Traced`]).
//! The hooks by area (`vmm`, `device_memory`) use it; it names what it
//! calls by path (the library underneath, the model's lock, the report of
//! a refused call), so a hook imports only the macro and its record.

use crate::trace;

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
/// With `locked |m| = LOCKS;` the shards of the model the call touches
/// (`model::Locked`: the address shards of its range, the handle shard of
/// its handle) are locked once, from the checks to what the answer
/// changed, and bound to `m` in both: the hooks of physical handles,
/// mappings and releases take this form (exports and imports, which may
/// wait on another process, lock only around their own steps; the calls
/// that make an object lock its shard once the object is made, when no
/// other call can name it yet). One lock set per call instead of two, and
/// a check, the call it checks and the model's update are one step for
/// the other threads touching the same shards: two threads unmapping one
/// address are judged in the order their calls really ran (the second
/// finds no mapping), never both passed. Calls on other addresses and
/// handles run beside it. The library's calls of these functions are not
/// re-entered from below and never wait for another thread of the
/// process, so holding the shards across one costs the other threads only
/// the time of that call. Copies and memsets (which may take long) lock
/// only around their checks.
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
        locked |$m:ident| = $locks:expr;
        check |$check_site:ident| $check:expr;
        done |$r:pat_param, $before:pat_param, $done_site:pat_param| $done:expr $(;)?
    ) => {{
        let site: $crate::report::Site = $site;
        let mut guard: $crate::model::Locked = $locks;
        let before = {
            // Some checks need only the lock.
            #[allow(unused_variables)]
            let $m: &mut $crate::model::Locked = &mut guard;
            let $check_site = site;
            $check
        };
        let r: ::aclmem_sys::aclError = $crate::python::under_way(site.ra(), site.python(), || {
            $crate::underneath::forward!($name($($arg),*))
        });
        $crate::underneath::api_error(stringify!($name), r, site);
        let traced: $crate::hooks::Traced<_> = {
            let $m: &mut $crate::model::Locked = &mut guard;
            let ($r, $before, $done_site) = (r, before, site);
            $done
        };
        guard.finish();
        traced.write(stringify!($name), r);
        r
    }};
    (
        $name:ident($($arg:expr),* $(,)?) at $site:expr;
        check |$check_site:ident| $check:expr;
        done |$r:pat_param, $before:pat_param, $done_site:pat_param| $done:expr $(;)?
    ) => {{
        let site: $crate::report::Site = $site;
        let $check_site = site;
        let before = $check;
        let r: ::aclmem_sys::aclError = $crate::underneath::forward!($name($($arg),*));
        $crate::underneath::api_error(stringify!($name), r, site);
        let ($r, $before, $done_site) = (r, before, site);
        let traced: $crate::hooks::Traced<_> = $done;
        traced.write(stringify!($name), r);
        r
    }};
}
pub(crate) use hook;

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
    /// Writes the record, if there is one ([`hook!`]'s last step).
    #[inline]
    pub(crate) fn write(self, call: &'static str, r: aclmem_sys::aclError) {
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
