//! Faults injected at the entry points: `ACLMEM_EMU_FAULTS` (and `aclmem
//! run --fault`), in the grammar of [`aclmem_emu::faults`].
//!
//! Every entry point that answers a status asks [`check`] first, with its
//! catalogue name: a fault that takes the call answers its code before the
//! call reads or writes anything (so nothing is made and no output is
//! written), and becomes the thread's last error as any failure does.
//! Counts are per process and start again in a forked child; `@machine`
//! items count with every process of the joined machine (before `aclInit`
//! joins one, per process). The spec is read once, at the first call; a
//! spec that does not parse injects nothing and makes `aclInit` fail
//! ([`spec_error`]).

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use aclmem_emu::faults::{self, Action, Fault, Target};

use crate::site::{Site, caller};
use crate::state::with_global;

/// One item of the spec, armed.
struct Armed {
    fault: Fault,
    /// Calls counted in this process.
    count: AtomicU64,
    /// Its place among the `@machine` items.
    machine_index: usize,
    /// Whether it has fired (the first firing is reported).
    fired: AtomicBool,
}

type Plan = Result<Vec<Armed>, String>;

static PLAN: OnceLock<Plan> = OnceLock::new();

fn plan() -> &'static Plan {
    PLAN.get_or_init(|| {
        let faults = faults::from_env().map_err(|e| format!("ACLMEM_EMU_FAULTS: {e}"))?;
        let mut machine = 0;
        Ok(faults
            .into_iter()
            .map(|fault| {
                let machine_index = machine;
                machine += usize::from(fault.machine);
                Armed {
                    fault,
                    count: AtomicU64::new(0),
                    machine_index,
                    fired: AtomicBool::new(false),
                }
            })
            .collect())
    })
}

/// Why `ACLMEM_EMU_FAULTS` does not parse, if it does not.
pub(crate) fn spec_error() -> Option<&'static str> {
    plan().as_ref().err().map(String::as_str)
}

/// A forked child counts its own calls from 0.
pub(crate) fn after_fork() {
    if let Some(Ok(armed)) = PLAN.get() {
        for a in armed {
            a.count.store(0, Ordering::Relaxed);
            a.fired.store(false, Ordering::Relaxed);
        }
    }
}

/// The code a fault answers for this call of `name`, if one takes it
/// (after any delay the spec asks for).
pub(crate) fn check(name: &'static str) -> Option<i32> {
    let Ok(armed) = plan() else {
        return None;
    };
    if armed.is_empty() {
        return None;
    }
    let mut site: Option<Site> = None;
    let mut answer = None;
    for a in armed {
        let f = &a.fault;
        match f.target {
            Target::Function(n) if n != name => continue,
            _ => {}
        }
        if let Some(want) = &f.site {
            let here = site.get_or_insert_with(|| caller(None).map(Site::of).unwrap_or_default());
            let line = here
                .line
                .as_ref()
                .map(|(file, line)| (file.as_str(), *line));
            let object = here.object.as_deref().unwrap_or_default();
            if !want.matches(object, here.offset, line) {
                continue;
            }
        }
        let count = if f.machine {
            with_global(|g| Ok(g.emu.count_machine_fault(a.machine_index)))
                .unwrap_or_else(|_| a.count.fetch_add(1, Ordering::Relaxed) + 1)
        } else {
            a.count.fetch_add(1, Ordering::Relaxed) + 1
        };
        if !f.takes(count) {
            continue;
        }
        match f.action {
            Action::Delay(d) => std::thread::sleep(d),
            Action::Fail(code) => {
                if !a.fired.swap(true, Ordering::Relaxed) && !aclmem_emu::env::quiet() {
                    eprintln!(
                        "aclmem-emu: fault: {name} (call {count} {}) answers {code} ({})",
                        match f.target {
                            Target::DeviceLost => "of any function, device-lost",
                            Target::Function(_) => "counted",
                        },
                        aclmem_core::AclError::from_code(code)
                            .and_then(|e| e.name())
                            .unwrap_or("ACLMEM_EMU_FAULTS"),
                    );
                }
                answer.get_or_insert(code);
            }
        }
    }
    answer
}
