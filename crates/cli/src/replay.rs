//! `aclmem replay trace.jsonl --targets a2@8.0,a3@9.0,310b1:rc --hbm 32GiB`:
//! the portability oracle. A trace the sanitizer recorded (on any machine,
//! an NPU included: `aclmem sanitize --trace`) is made again, call by call,
//! on an emulated machine of each target (product, run mode, CANN release,
//! device memory), and the first call that would fail there is named with
//! its code and, for a rule, the rule.
//!
//! What is replayed: the physical-memory calls that succeeded when the
//! trace was recorded (`aclrtMallocPhysical`, `aclrtFreePhysical`,
//! `aclrtReserveMemAddress`, `aclrtReleaseMemAddress`, `aclrtMapMem`,
//! `aclrtUnmapMem`), with their sizes, attributes, locations and the
//! handles and addresses that tie them together (renamed to the replaying
//! machine's). Calls of other processes, copies and queries are not
//! replayed; a trace from before the sanitizer recorded those details has
//! nothing to replay and is said to be so.

use aclmem_formats::trace::Record;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use aclmem_core::{AclError, RawMemLocation, RawPhysicalMemProp, RunMode, Target};
use aclmem_emu::{EmuConfig, Emulator};
use aclmem_hal::{PhysicalAllocator, RawHandle, VirtAddr, VirtualMemory};

/// Options of `aclmem replay`.
#[derive(clap::Args)]
pub struct Options {
    /// The trace (JSON lines) `aclmem sanitize --trace` wrote.
    pub trace: PathBuf,
    /// The machines to replay it on: `product[:ep|rc][@release]`, comma
    /// separated (`a2@8.0,a3@9.0,310b1:rc`); a release left out is the
    /// newest, a run mode left out is EP. Without it, the machine
    /// `aclmem run` makes from the environment (`ACLMEM_EMU_SOC`,
    /// `ACLMEM_EMU_CANN`, ...; by default an Atlas A2 of the default
    /// release), with `--hbm` if given.
    #[arg(long)]
    pub targets: Option<String>,
    /// Device memory per device of every target (`32GiB`, `512MiB`); by
    /// default each product's.
    #[arg(long)]
    pub hbm: Option<String>,
}

/// One call of the trace that can be made again.
#[derive(Debug, Clone, PartialEq)]
enum Step {
    Malloc {
        size: usize,
        prop: RawPhysicalMemProp,
        h: u64,
    },
    Free {
        h: u64,
    },
    Reserve {
        size: usize,
        align: usize,
        flags: u64,
        va: usize,
    },
    Release {
        va: usize,
    },
    Map {
        va: usize,
        size: usize,
        h: u64,
    },
    Unmap {
        va: usize,
    },
}

/// A step and its place in the trace (line number, time).
#[derive(Debug, Clone)]
struct Recorded {
    line: usize,
    t: u64,
    step: Step,
}

/// The steps of a trace: its successful physical-memory calls that carry
/// what replaying them needs.
fn steps(text: &str) -> Vec<Recorded> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let Ok(r) = serde_json::from_str::<Record<'_>>(line) else {
            continue;
        };
        if r.ret != 0 {
            continue;
        }
        let size = r.size as usize;
        let step = match r.call() {
            "aclrtMallocPhysical" => (|| {
                Some(Step::Malloc {
                    size,
                    prop: RawPhysicalMemProp {
                        mem_attr: r.attr?,
                        location: RawMemLocation {
                            id: r.id?,
                            type_: r.loc?,
                        },
                        ..RawPhysicalMemProp::default()
                    },
                    h: r.h?,
                })
            })(),
            "aclrtFreePhysical" => r.h.map(|h| Step::Free { h }),
            "aclrtReserveMemAddress" => r.va.map(|va| Step::Reserve {
                size,
                align: r.align.unwrap_or(0) as usize,
                flags: r.flags.unwrap_or(0),
                va: va as usize,
            }),
            "aclrtReleaseMemAddress" => r.va.map(|va| Step::Release { va: va as usize }),
            "aclrtMapMem" => match (r.va, r.h) {
                (Some(va), Some(h)) => Some(Step::Map {
                    va: va as usize,
                    size,
                    h,
                }),
                _ => None,
            },
            "aclrtUnmapMem" => r.va.map(|va| Step::Unmap { va: va as usize }),
            _ => None,
        };
        if let Some(step) = step {
            out.push(Recorded {
                line: i + 1,
                t: r.t,
                step,
            });
        }
    }
    out
}

/// The machine a target describes.
fn machine(t: &Target, hbm: Option<usize>) -> EmuConfig {
    let mut c = EmuConfig::preset(t.product);
    if let Some(cann) = t.cann {
        c.cann = cann;
    }
    c.run_mode = t.run_mode.unwrap_or(RunMode::Ep);
    if let Some(bytes) = hbm {
        c.device_memory = bytes;
        c.huge1g_pool = c.huge1g_pool.min(bytes / 2);
    }
    c
}

/// A step that failed: its index, its code, and for an allocation the
/// machine refused for room, what the device held (free, total bytes).
type Failure = (usize, AclError, Option<(usize, usize)>);

/// The first step that fails on `config`, with its code.
fn first_failure(config: &EmuConfig, steps: &[Recorded]) -> Result<Option<Failure>, String> {
    let emu = Emulator::new(config.clone()).map_err(|e| format!("the machine: {e}"))?;
    let mut handles: HashMap<u64, RawHandle> = HashMap::new();
    // Reservations: (recorded address, size, replayed address). An address
    // inside one maps to the same offset in the replayed one.
    let mut resvs: Vec<(usize, usize, usize)> = Vec::new();
    let inside = |resvs: &[(usize, usize, usize)], va: usize| {
        resvs
            .iter()
            .find(|&&(old, size, _)| old <= va && va < old + size)
            .map(|&(old, _, new)| new + (va - old))
    };
    for (i, r) in steps.iter().enumerate() {
        let result = match &r.step {
            Step::Malloc { size, prop, h } => emu.malloc_physical(*size, prop, 0).map(|new| {
                handles.insert(*h, new);
            }),
            Step::Free { h } => match handles.remove(h) {
                Some(new) => emu.free_physical(new),
                None => Ok(()),
            },
            Step::Reserve {
                size,
                align,
                flags,
                va,
            } => emu
                .reserve(*size, *align, None, *flags)
                .map(|new| resvs.push((*va, *size, new.get()))),
            Step::Release { va } => {
                let new = resvs.iter().find(|r| r.0 == *va).and_then(|r| virt(r.2));
                match new {
                    Some(new) => emu
                        .release(new)
                        .map(|()| resvs.retain(|&(old, _, _)| old != *va)),
                    None => Ok(()),
                }
            }
            Step::Map { va, size, h } => match (inside(&resvs, *va), handles.get(h)) {
                (Some(new), Some(&handle)) => virt(new)
                    .ok_or(AclError::INVALID_PARAM)
                    .and_then(|a| emu.map(a, *size, 0, handle, 0)),
                _ => Ok(()),
            },
            Step::Unmap { va } => match inside(&resvs, *va).and_then(virt) {
                Some(a) => emu.unmap(a),
                None => Ok(()),
            },
        };
        if let Err(e) = result {
            let room = match &r.step {
                Step::Malloc { prop, .. }
                    if e == AclError::RT_MEMORY_ALLOCATION
                        && aclmem_core::Location::from_raw(prop.location.type_)
                            == Some(aclmem_core::Location::Device) =>
                {
                    aclmem_core::MemAttr::from_raw(prop.mem_attr)
                        .and_then(|attr| emu.mem_info(attr, prop.location.id).ok())
                }
                _ => None,
            };
            return Ok(Some((i, e, room)));
        }
    }
    Ok(None)
}

/// A replayed address (never 0: it came from a reservation).
fn virt(addr: usize) -> Option<VirtAddr> {
    std::num::NonZeroUsize::new(addr).map(VirtAddr)
}

fn describe(step: &Step) -> String {
    match step {
        Step::Malloc { size, prop, .. } => {
            let attr = aclmem_core::MemAttr::from_raw(prop.mem_attr)
                .map_or_else(|| prop.mem_attr.to_string(), |a| a.c_name().to_owned());
            let loc = aclmem_core::Location::from_raw(prop.location.type_).map_or_else(
                || prop.location.type_.to_string(),
                |l| l.c_name().to_owned(),
            );
            format!(
                "aclrtMallocPhysical({size:#x}, {{memAttr {attr}, location {loc} {}}})",
                prop.location.id
            )
        }
        Step::Free { h } => format!("aclrtFreePhysical({h:#x})"),
        Step::Reserve { size, .. } => format!("aclrtReserveMemAddress({size:#x})"),
        Step::Release { va } => format!("aclrtReleaseMemAddress({va:#x})"),
        Step::Map { va, size, h } => format!("aclrtMapMem({va:#x}, {size:#x}, 0, {h:#x})"),
        Step::Unmap { va } => format!("aclrtUnmapMem({va:#x})"),
    }
}

/// Why the rules refuse a malloc on `config`, in words, if they do.
fn rule(config: &EmuConfig, step: &Step) -> Option<String> {
    let Step::Malloc { prop, .. } = step else {
        return None;
    };
    let product = config.product().ok()?;
    aclmem_core::check_raw(
        product,
        config.run_mode,
        config.cann,
        prop.location.type_,
        prop.mem_attr,
    )
    .err()
    .map(|d| d.reason().to_string())
}

pub fn run(o: Options) -> ExitCode {
    let fail = |e: String| {
        eprintln!("error: {e}");
        ExitCode::from(2)
    };
    let hbm = match o.hbm.as_deref().map(aclmem_emu::parse_size) {
        Some(Ok(b)) => Some(b),
        Some(Err(e)) => return fail(format!("--hbm: {e}")),
        None => None,
    };
    // (its name, the machine) of each target.
    let mut targets: Vec<(String, EmuConfig)> = Vec::new();
    let Some(list) = o.targets.as_deref() else {
        let mut config = match EmuConfig::from_env() {
            Ok(c) => c,
            Err(e) => return fail(format!("the machine of the environment: {e}")),
        };
        if let Some(bytes) = hbm {
            config.device_memory = bytes;
            config.huge1g_pool = config.huge1g_pool.min(bytes / 2);
        }
        return replay(&o.trace, &[("this machine".to_owned(), config)]);
    };
    for item in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        match item.parse::<Target>() {
            Ok(t) => targets.push((item.to_owned(), machine(&t, hbm))),
            Err(e) => return fail(format!("--targets: `{item}`: {e}")),
        }
    }
    replay(&o.trace, &targets)
}

/// Replays `trace` on each machine of `targets`, naming the first call that
/// fails on each.
fn replay(trace: &Path, targets: &[(String, EmuConfig)]) -> ExitCode {
    let fail = |e: String| {
        eprintln!("error: {e}");
        ExitCode::from(2)
    };
    let text = match aclmem_formats::jsonl::read_to_string(trace) {
        Ok(t) => t,
        Err(e) => return fail(e),
    };
    let steps = steps(&text);
    if steps.is_empty() {
        return fail(format!(
            "{}: no physical-memory call to replay (record the trace with `aclmem sanitize --trace`)",
            trace.display()
        ));
    }
    println!(
        "{}: {} physical-memory calls to replay",
        display(trace),
        steps.len()
    );
    let mut failed = false;
    for (name, config) in targets {
        let config = config.clone();
        let label = format!("{name} ({config})");
        match first_failure(&config, &steps) {
            Ok(None) => println!("  {label}: runs through"),
            Ok(Some((i, e, room))) => {
                failed = true;
                let r = &steps[i];
                let why = match (rule(&config, &r.step), room, &r.step) {
                    (Some(w), _, _) => format!(": {w}"),
                    (None, Some((free, total)), Step::Malloc { size, .. }) => format!(
                        ": {} asked, {} free of the device's {}",
                        mib(*size),
                        mib(free),
                        mib(total)
                    ),
                    _ => String::new(),
                };
                println!(
                    "  {label}: fails at call {} of {} (trace line {}, t={} us): {} answers {e}{why}",
                    i + 1,
                    steps.len(),
                    r.line,
                    r.t,
                    describe(&r.step),
                );
            }
            Err(e) => return fail(format!("{name}: {e}")),
        }
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// Bytes in MiB, as the options take them.
fn mib(bytes: usize) -> String {
    let m = bytes as f64 / (1u64 << 20) as f64;
    if m.fract() == 0.0 {
        format!("{m:.0} MiB")
    } else {
        format!("{m:.1} MiB")
    }
}

fn display(p: &Path) -> String {
    p.display().to_string()
}
