//! `aclopCompileAndExecute(V2)`'s work: the operator's tensors resolved,
//! checked and, in compute mode, computed by its kernel on the device's
//! memory; in plan mode (`ACLMEM_EMU_OPS=plan`) every operator, with a
//! kernel or not, is checked and accepted without computing and without
//! touching device memory.

use std::ffi::{c_char, c_int, c_void};

use aclmem_core::AclError;
use aclmem_sys::catalogue::{Answer, Library, Returns};

use aclmem_ops::kernels;
use aclmem_ops::objects::{self, Placement};
use aclmem_ops::operand::{self, Operand};

use crate::state::with_global;
use crate::{capture, cptr, record, shared};

/// The longest attribute name or string value read (bytes).
pub(super) const MAX_NAME: usize = 4096;
/// The most inputs or outputs of one operator call.
const MAX_TENSORS: usize = 4096;

pub(super) fn handle<T>(p: *const T) -> usize {
    p as usize
}

/// Reads `n` handles from a C array of pointers.
fn read_handles(n: c_int, p: *const *const c_void) -> Result<Vec<usize>, AclError> {
    let n = usize::try_from(n).map_err(|_| AclError::INVALID_PARAM)?;
    if n == 0 {
        return Ok(Vec::new());
    }
    // SAFETY: addresses accept any bytes; the read is checked by the kernel.
    unsafe { cptr::read_array(p.cast::<usize>(), n, MAX_TENSORS, AclError::INVALID_PARAM) }
}

/// A call's inputs, read from the device or the host when a kernel asks.
struct Buffers<'e> {
    emu: &'e aclmem_emu::Emulator,
    operands: Vec<Operand>,
    specs: Vec<kernels::Spec>,
}

impl kernels::Inputs for Buffers<'_> {
    fn count(&self) -> usize {
        self.operands.len()
    }

    fn spec(&self, i: usize) -> Result<&kernels::Spec, AclError> {
        self.specs.get(i).ok_or(AclError::OP_INPUT_NOT_MATCH)
    }

    fn prefix(&self, i: usize, elements: usize) -> Result<Vec<u8>, AclError> {
        let o = self.operands.get(i).ok_or(AclError::OP_INPUT_NOT_MATCH)?;
        let len = o.prefix_len(self.spec(i)?, elements)?;
        if len == 0 {
            return Ok(Vec::new());
        }
        match o.desc.placement {
            Placement::Device => {
                let mut bytes = vec![0u8; o.stored_len(self.spec(i)?, len)?];
                shared::read_reachable(self.emu, o.buffer.data, &mut bytes)?;
                o.plain(self.spec(i)?, bytes, len)
            }
            // SAFETY: bytes accept any value; the kernel checks the read.
            Placement::Host => unsafe {
                cptr::read_array(
                    o.buffer.data as *const u8,
                    len,
                    len,
                    AclError::INVALID_PARAM,
                )
            },
        }
    }
}

/// The operator names recorded so far (refused in compute mode, accepted
/// in plan mode), kept once each for the record (bounded: a program cannot
/// grow it without limit).
fn recorded_name(op: &str, plan: bool) -> &'static str {
    use aclmem_fork::ForkMutex;
    use std::collections::BTreeSet;
    static NAMES: ForkMutex<BTreeSet<&'static str>> = ForkMutex::new(BTreeSet::new);
    const MAX_NAMES: usize = 512;
    let name = if plan {
        format!("operator {op} (plan mode)")
    } else {
        format!("operator {op}")
    };
    let mut names = NAMES.lock();
    if let Some(n) = names.get(name.as_str()) {
        return n;
    }
    if names.len() >= MAX_NAMES || op.len() > 128 {
        return if plan {
            "operator (other, plan mode)"
        } else {
            "operator (other)"
        };
    }
    let leaked: &'static str = Box::leak(name.into_boxed_str());
    names.insert(leaked);
    leaked
}

/// What `aclopCompileAndExecute(V2)` does, for both.
#[allow(clippy::too_many_arguments)]
pub(super) fn execute(
    op_type: *const c_char,
    num_inputs: c_int,
    input_desc: *const *const c_void,
    inputs: *const *const c_void,
    num_outputs: c_int,
    output_desc: *const *const c_void,
    outputs: *const *const c_void,
    attr: *const c_void,
    stream: *mut c_void,
    entry: usize,
    v2: bool,
) -> Result<(), AclError> {
    let name = cptr::read_cstr(op_type, MAX_NAME)?;
    let plan = with_global(|g| Ok(g.emu.ops())).is_ok_and(|m| m.is_plan());
    let kernel = kernels::find(&name);
    if kernel.is_none() && !plan {
        record::record(
            recorded_name(&name, false),
            Library::OpCompiler,
            Answer::Unsupported,
            Returns::OpStatus,
            entry,
        );
        return Err(AclError::OP_NOT_FOUND);
    }
    let in_desc = read_handles(num_inputs, input_desc)?;
    let in_buf = read_handles(num_inputs, inputs)?;
    let out_desc = read_handles(num_outputs, output_desc)?;
    let out_buf = read_handles(num_outputs, outputs.cast())?;
    // An operator without attributes may pass NULL.
    let attrs = if attr.is_null() {
        objects::OpAttr::new()
    } else {
        objects::attr(handle(attr))?
    };
    let ins = in_desc
        .iter()
        .zip(&in_buf)
        .map(|(&d, &b)| Operand::resolve(d, b))
        .collect::<Result<Vec<_>, _>>()?;
    let outs = out_desc
        .iter()
        .zip(&out_buf)
        .map(|(&d, &b)| Operand::resolve(d, b))
        .collect::<Result<Vec<_>, _>>()?;
    let stream = stream as usize as u64;
    with_global(|g| {
        g.emu.check_stream(stream)?;
        g.emu.current_device().map(drop)
    })?;
    let Some(kernel) = kernel.filter(|_| !plan) else {
        check_plan(&ins, &outs)?;
        record::record(
            recorded_name(&name, true),
            Library::OpCompiler,
            Answer::Accepted,
            Returns::OpStatus,
            entry,
        );
        // Captured as a task that does nothing when replayed.
        if capture::capturing(stream) {
            return capture::enqueue(
                stream,
                "KERNEL",
                || format!("{name} (plan mode)"),
                |_| Ok(()),
            );
        }
        return Ok(());
    };
    if capture::capturing(stream) {
        let ranges: Vec<(usize, usize)> = (ins.iter().chain(&outs))
            .filter(|o| o.desc.placement == Placement::Device)
            .map(|o| (o.buffer.data, o.buffer.size))
            .collect();
        capture::touched(stream, &ranges);
        // Recorded: a replay runs the kernel on the operands as captured
        // (V2's output shapes are not handed back from a replay).
        return capture::enqueue(
            stream,
            "KERNEL",
            || name,
            move |_| run(kernel, &ins, &outs, attrs.clone()).map(drop),
        );
    }
    let reshaped = run(kernel, &ins, &outs, attrs)?;
    // V2 hands the real shape of a data-dependent output back through its
    // descriptor (V1's descriptors are the caller's constants).
    if v2 {
        for (o, dims) in reshaped {
            let dims = dims.iter().map(|&d| d as i64).collect();
            objects::with_desc(out_desc[o], |d| d.dims = dims)?;
        }
    }
    Ok(())
}

/// Runs `kernel` on `ins` into `outs` (all checked before any is written;
/// an output in a private format written in it): the outputs whose shape
/// the kernel decided (index, dims).
fn run(
    kernel: kernels::Kernel,
    ins: &[Operand],
    outs: &[Operand],
    attrs: objects::OpAttr,
) -> Result<Vec<(usize, Vec<usize>)>, AclError> {
    with_global(|g| {
        let (specs, outputs) = operand::check(ins, outs)?;
        let buffers = Buffers {
            emu: &g.emu,
            operands: ins.to_vec(),
            specs,
        };
        let call = kernels::Call::new(&buffers, outputs.clone(), attrs);
        let written = kernel(&call)?;
        let written = (outs.iter().zip(&outputs).zip(&written))
            .map(|((o, spec), bytes)| {
                if bytes.is_empty() {
                    Ok(Vec::new())
                } else {
                    o.stored(spec, bytes)
                }
            })
            .collect::<Result<Vec<_>, _>>()?;
        operand::check_written(outs, &written)?;
        for (o, bytes) in outs.iter().zip(&written).filter(|(_, b)| !b.is_empty()) {
            shared::write_reachable(&g.emu, o.buffer.data, bytes)?;
        }
        Ok(call.reshaped.take())
    })
}

/// Plan mode's check of a call: every tensor's descriptor and buffer
/// (`operand::check_plan`), and every device buffer mapped in this process,
/// asked without reading or writing it (so no page of it is touched).
fn check_plan(ins: &[Operand], outs: &[Operand]) -> Result<(), AclError> {
    let bytes = operand::check_plan(ins, outs)?;
    with_global(|g| {
        ins.iter()
            .chain(outs)
            .zip(bytes)
            .filter(|(o, n)| o.desc.placement == Placement::Device && *n > 0)
            .try_for_each(|(o, n)| {
                g.emu
                    .hold(o.buffer.data, n)
                    .map(drop)
                    .map_err(|_| AclError::INVALID_PARAM)
            })
    })
}
