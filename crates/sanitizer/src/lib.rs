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
//!   collectives, pools described with heaps and regions (docs/mstx.md);
//! * stream-ordered pools and managed memory (`pools`): pool memory used
//!   after its free or its pool's destruction, a pool destroyed with
//!   live memory, managed memory leaked.
//!
//! Findings go to stderr (one line each), as JSON lines to
//! `ACLMEM_SANITIZER_LOG`, and into a summary at exit;
//! `ACLMEM_SANITIZER_HALT_ON_ERROR=1` stops at the first.
//! `ACLMEM_SANITIZER_TRACE=file` writes the memory timeline.
//!
//! The rooms: `config` (the settings), `underneath` (finding and calling
//! the library underneath, `forward!`, and what a failed call of it is),
//! `platform` (the model's lock, fork, what the program runs on), `checks`
//! (the rules of a prop, the exit handler), `hooks` (the one shape of a
//! memory hook, `hook!`, and its trace record), the hooks by area
//! (`runtime`, `vmm`, `device_memory`, `ipc`), `passthrough` (forwarding
//! unchanged what no hook checks), `trampolines` (what is defined for each
//! function of the catalogue: the entry points that hand over their call
//! site, the rest forwarded), `abi` (the sanitizer's own functions);
//! `model` keeps the process's memory, `report` the findings, `trace` and
//! `sharing` the files of `aclmem-formats`, `python` and `mstx` what those
//! programs tell. This root only declares the rooms: each room imports by
//! name what it uses of the others (the hooks what they share from
//! `hooks`, `underneath`, `platform` and `checks`; `trampolines` the hooks
//! it puts its entry points in front of), never the root.

#![allow(non_snake_case)]

// The rooms (above).
pub mod audit;
pub mod graphs;
pub mod hccl;
pub mod mstx;
pub mod pools;
pub mod report;

mod abi;
mod checks;
mod cmem;
mod config;
mod device_memory;
mod hooks;
mod ipc;
mod model;
mod passthrough;
mod platform;
mod postmortem;
mod python;
mod runtime;
mod sharing;
mod trace;
mod trampolines;
mod underneath;
mod unwind;
mod vmm;
