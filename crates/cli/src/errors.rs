//! `aclmem errors`: the emulator's error table, rendered.

use aclmem_emu::errors::{Basis, Situation};

use crate::Format;

fn basis(b: Basis) -> &'static str {
    match b {
        Basis::Documented => "documented",
        Basis::Unconfirmed => "chosen",
    }
}

/// The choices the memory chapter's calls make where CANN is silent,
/// after the table in the markdown.
const MEMORY_CHOICES: &str = "\n## Choices of the memory chapter\n\n\
    Where the runtime's code or documentation leaves the answer open, the\n\
    calls of `docs/facts.md` \"The memory chapter\" answer:\n\n\
    - **A function the emulated release lacks** (the catalogue's \"from CANN\n  \
    x\", `aclmem catalogue --cann`): 207000, as `aclmem-driver` answers a\n  \
    missing optional symbol; the emulated library exports every name.\n\
    - **A chip without the runtime feature** (batched copies, stream value\n  \
    operations and device-to-device 2D copies: Atlas 350, A3, A2; copies\n  \
    with an offset: also Atlas training; memcpy descriptors: also Atlas\n  \
    200I/500 A2; `vaFlag` host memory: A2, A3): 207000 after the ACL layer's\n  \
    checks, from the documented product lists.\n\
    - **`aclrtValueWrite` at an address not 8-byte aligned**: refused\n  \
    (`ValueWriteUnaligned`); documented as required, no check found in the\n  \
    runtime's code, so code that passes here passes there.\n\
    - **`aclrtValueWait` whose condition does not hold**: every stream's work\n  \
    has run when a call returns, so only another thread or process can make\n  \
    it true; the value is polled for 2 s, then `ValueWaitTimeout` (the\n  \
    stream's timeout, 507046).\n\
    - **Batched copies**: every copy is checked before any is made (a\n  \
    refusal copies nothing); arrays of more than 2^24 entries are 100000; in\n  \
    the synchronous form a copy of 0 bytes among others copies nothing (only\n  \
    the asynchronous form refuses it, as the runtime does).\n\
    - **`aclrtMemcpyAsyncWithOffset`**: a NULL `dst` or `src`, or a base\n  \
    pointer not held in device memory of the process, is 107000.\n\
    - **Memcpy descriptors**: `aclrtSetMemcpyDesc` writes the emulator's own\n  \
    32-byte record into the device memory of `desc`; a descriptor it did not\n  \
    write is 107000 at `aclrtMemcpyAsyncWithDesc`.\n\
    - **Allocation configurations**: at most 1024 attributes are read (more is\n  \
    107000); with `vaFlag` 1 the host memory's device address is its own\n  \
    address, as `aclrtHostRegister` answers for any host memory here.\n\
    - **`aclrtReduceAsync`**: a type or kind the product does not document,\n  \
    and EQUAL (whose result is not documented), are 207000; an unknown\n  \
    kind, an address or count not aligned to the type, or memory other than\n  \
    device memory, 107000; integer sums wrap.\n\
    - **2D copies**: made row by row through the checked copy path; a last\n  \
    row beyond the address space is 107000.\n";

/// The choices of the memory chapter's later calls (pools, managed memory,
/// caches, the allocator, symbols, links), after the first ones.
const MORE_CHOICES: &str = "\n\
    ## Choices of pools, managed memory and the rest of the chapter\n\
    \n\
    Where CANN's runtime or documentation leaves the answer open, the calls\n\
    of `docs/facts.md` \"The memory chapter, continued\" answer:\n\
    \n\
    - **Stream order**: every stream's work is done when its call returns,\n  \
    so a block freed with `aclrtMemPoolFreeAsync` is free at once. Which\n  \
    stream may take it again follows the pool's attributes: the freeing\n  \
    stream always; any stream with opportunistic or internal-dependency\n  \
    reuse (the free is complete); with event-dependency reuse, a stream\n  \
    that waited (`aclrtStreamWaitEvent`) for an event recorded on the\n  \
    freeing stream after the free. A stream takes its own blocks first.\n\
    - **Pool blocks**: each block is device memory made as `aclrtMalloc`'s\n  \
    (charged to the device, seen by leak reports), a multiple of 2 MiB,\n  \
    handed out whole: a cached block of the size asked first, else new\n  \
    memory while the pool has room, else the smallest larger cached block\n  \
    (USED then counts all of it; the runtime splits it). `aclrtMemPoolTrimTo`\n  \
    and the release threshold release cached blocks whole, smallest first,\n  \
    and keep a block larger than what is left to release (RESERVED stays\n  \
    above the target by less than that block). The threshold applies at\n  \
    `aclrtSynchronizeStream` and `aclrtSynchronizeDevice` on the pool's\n  \
    device. A device out of memory is 207001. `aclrtFree` of a block in use\n  \
    takes it out of its pool and frees it; of any other address inside a\n  \
    pool, 107000. `aclrtMemPoolDestroy` frees the blocks still in use (the\n  \
    runtime checks none). Pools exist on Atlas A2 only (documented); POSIX\n  \
    handle types from CANN 9.1 (recorded nowhere: no call exports a pool).\n\
    - **Managed memory**: device memory of the current device that the host\n  \
    reaches at the same address; advice and prefetches move nothing and are\n  \
    recorded per 2 MiB page; a range not inside one managed allocation, or\n  \
    advice and prefetches whose size is not a multiple of 2 MiB, are 107000.\n  \
    `aclrtMemP2PMap` needs peer access enabled between the memory's device\n  \
    and `dstDevId` (either way), else 107000. Peer access enabled and\n  \
    disabled is recorded (`aclrtDevicePeerAccessStatus`).\n\
    - **Cache maintenance**: the emulated device has no cache; PREFETCH is the\n  \
    only type documented as supported, so the others are 207000 (the\n  \
    runtime's code accepts WRITEBACK, INVALID and FLUSH); the address must\n  \
    be device memory of the process (107000). A CMO descriptor holds the\n  \
    runtime's 32-byte record (64 bytes on Atlas 350, the first 32 the same);\n  \
    a barrier id with a type other than INVALID, a barrier wait with a type\n  \
    other than INVALID or a flag other than 0, are 107000. The products are\n  \
    the documented ones (207000 elsewhere); `aclrtDeviceL2CacheFlush`,\n  \
    undocumented, answers on the CMO products.\n\
    - **Uncorrectable memory errors**: there are none; `aclrtGetMemUceInfo`\n  \
    answers no entries, `aclrtMemUceRepair` of no entries succeeds and of any\n  \
    entry (an address without a recorded error) is 107000.\n\
    - **Custom allocator**: stored per stream as the runtime stores it; the\n  \
    emulated operators need no device workspace, so no allocator function is\n  \
    ever called.\n\
    - **Device variables**: no kernel binary is ever loaded, so every symbol\n  \
    is unknown, 107043, after the ACL layer's checks and the thread's device\n  \
    (107002).\n\
    - **Links and IPC**: A3 has SIO and HCCS, Atlas 350 the UB paths (207021\n  \
    for a link the product lacks, 207000 on other products); a link changes\n  \
    nothing. `aclrtIpcMemSetAttr` checks that the key is one the emulator\n  \
    writes. `aclrtIpcMemImportPidInterServer` whitelists every pid of every\n  \
    server as `aclrtIpcMemSetImportPid` does: the emulated machine is one\n  \
    server. `aclrtReserveMemAddressNoUCMemory` takes a 1 GiB aligned address\n  \
    of the caller's, outside the release's window rule (NULL is 207000, as\n  \
    the header says).\n\
    - **`aclrtHostMemMapCapabilities`**: every accelerator type reaches\n  \
    registered host memory on A2, A3 and Atlas 350 (SUPPORTED), none on the\n  \
    other products (NOT_SUPPORTED).\n\
    - **`aclrtPointerGetAttributes` of managed memory under CANN 9.0**: 107000,\n  \
    as the 9.0 runtime's code answers a memory type it has no case for.\n";

/// The table in `format`.
pub fn render(format: Format) -> String {
    match format {
        Format::Table => {
            let rows: Vec<[String; 5]> = Situation::ALL
                .iter()
                .map(|s| {
                    let code = s.code();
                    [
                        format!("{s:?}"),
                        code.code().to_string(),
                        code.name().unwrap_or("?").to_owned(),
                        basis(s.basis()).to_owned(),
                        s.what().to_owned(),
                    ]
                })
                .collect();
            let head = ["situation", "code", "name", "basis", "meaning"].map(str::to_owned);
            let width = |i: usize| {
                rows.iter()
                    .chain([&head])
                    .map(|r| r[i].len())
                    .max()
                    .unwrap_or(0)
            };
            let (w0, w1, w2, w3) = (width(0), width(1), width(2), width(3));
            let mut out = String::new();
            for r in [&head].into_iter().chain(&rows) {
                out += &format!(
                    "{:<w0$}  {:>w1$}  {:<w2$}  {:<w3$}  {}\n",
                    r[0], r[1], r[2], r[3], r[4]
                );
            }
            out
        }
        Format::Json => {
            let rows: Vec<serde_json::Value> = Situation::ALL
                .iter()
                .map(|s| {
                    serde_json::json!({
                        "situation": format!("{s:?}"),
                        "code": s.code().code(),
                        "name": s.code().name(),
                        "basis": basis(s.basis()),
                        "what": s.what(),
                    })
                })
                .collect();
            serde_json::to_string_pretty(&rows).unwrap_or_default() + "\n"
        }
        Format::Markdown => {
            let mut out = String::from(
                "# The emulator's error table\n\n\
                 Generated by `cargo run -p aclmem-cli -- errors --format markdown` from\n\
                 `aclmem_emu::errors::Situation`; `cargo xtask ci` checks it is current.\n\n\
                 The codes CANN's runtime fixes before any driver is involved (argument\n\
                 checks: 100000, 107000, 107001, 107016) are facts, listed with their\n\
                 sources in `docs/facts.md`. The situations below are decided by the\n\
                 closed driver on real hardware. Where a code is documented the row\n\
                 says so; elsewhere the emulator follows one scheme: an invalid value or\n\
                 state is 107000 (the runtime maps the driver's `EINVAL` to it), a dead\n\
                 handle 107017, a missing feature 207000, a whitelist refusal 207006, an\n\
                 emulator limit 207012, a host resource (file descriptors) 207005, out\n\
                 of device memory 207001.\n\n\
                 | situation | code | name | basis | meaning |\n|---|---|---|---|---|\n",
            );
            for s in Situation::ALL {
                out += &format!(
                    "| `{s:?}` | {} | `{}` | {} | {} |\n",
                    s.code().code(),
                    s.code().name().unwrap_or("?"),
                    basis(s.basis()),
                    s.what()
                );
            }
            out += MEMORY_CHOICES;
            out += MORE_CHOICES;
            out
        }
    }
}
