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
            out
        }
    }
}
