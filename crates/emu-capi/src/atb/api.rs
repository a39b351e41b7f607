//! The exported functions of `libatb.so` and the virtual methods of the
//! objects they hand out (see the module's documentation for what each
//! does and [`super::objects`] for the objects' layout and lifetime).

use std::ffi::c_void;
use std::panic::{AssertUnwindSafe, catch_unwind};

use aclmem_ops::tensor::DType;

use super::abi;
use super::objects::{self, Context, ContextSlots, Operation, OperationSlots, StdString, VTable};
use super::paged::{self, Paged};
use super::status::*;

/// `$slot`, the [`objects::ByValue`] slot of `$imp`, an
/// `extern "C" fn(ret: *mut c_void, this: *const c_void) -> *mut c_void`
/// writing the result into `ret`.
macro_rules! by_value_slot {
    ($slot:ident => $imp:ident) => {
        #[cfg(not(target_arch = "aarch64"))]
        #[allow(non_upper_case_globals)]
        const $slot: objects::ByValue = $imp;

        /// The aarch64 entry of a method returning a class by value:
        /// moves `this` (x0) to the second argument and the caller's
        /// storage (x8) to the first, then tail-calls the implementation,
        /// whose answer (the storage) the C++ caller ignores.
        #[cfg(target_arch = "aarch64")]
        #[unsafe(naked)]
        extern "C" fn $slot() {
            ::core::arch::naked_asm!("mov x1, x0", "mov x0, x8", "b {imp}", imp = sym $imp)
        }
    };
}

by_value_slot!(get_execute_streams_slot => get_execute_streams);
by_value_slot!(get_name_slot => get_name);

/// Runs an entry point: `f`'s status; a panic is `ERROR_INTERNAL_ERROR`.
fn status(f: impl FnOnce() -> Result<(), i32>) -> i32 {
    catch_unwind(AssertUnwindSafe(f)).map_or(ERROR_INTERNAL_ERROR, |r| r.err().unwrap_or(NO_ERROR))
}

/// `atb::Context`'s virtual table.
static CONTEXT_VTABLE: VTable<ContextSlots> = VTable::new(ContextSlots {
    complete_dtor: context_complete_dtor,
    deleting_dtor: context_deleting_dtor,
    set_execute_stream,
    get_execute_stream,
    set_async_tiling_copy_status,
    get_async_tiling_copy_status,
    set_execute_streams,
    get_execute_streams: get_execute_streams_slot,
    set_execute_type,
    get_execute_type,
    set_launch_mode,
    get_launch_mode,
});

/// `atb::Operation`'s virtual table (every operation is a paged attention).
static OPERATION_VTABLE: VTable<OperationSlots> = VTable::new(OperationSlots {
    complete_dtor: operation_complete_dtor,
    deleting_dtor: operation_deleting_dtor,
    get_name: get_name_slot,
    infer_shape,
    get_input_num,
    get_output_num,
    setup,
    execute,
});

/// `atb::Status atb::CreateContext(atb::Context **context)`: a new context
/// on the default stream.
#[unsafe(no_mangle)]
#[allow(non_snake_case)]
// Every pointer is read and written through `cptr` (checked).
#[allow(clippy::not_unsafe_ptr_arg_deref)]
pub extern "C" fn _ZN3atb13CreateContextEPPNS_7ContextE(context: *mut *mut c_void) -> i32 {
    status(|| {
        let made = objects::new_context(CONTEXT_VTABLE.slots());
        // SAFETY: the caller's out parameter; the write is checked.
        unsafe {
            crate::cptr::hand_out(context, made.cast(), || {
                objects::free_context(made);
            })
        }
        .map_err(|_| ERROR_INVALID_PARAM)
    })
}

/// `atb::Status atb::DestroyContext(atb::Context *context)`.
#[unsafe(no_mangle)]
#[allow(non_snake_case)]
pub extern "C" fn _ZN3atb14DestroyContextEPNS_7ContextE(context: *mut c_void) -> i32 {
    status(|| {
        objects::free_context(context.cast())
            .then_some(())
            .ok_or(ERROR_INVALID_CONTEXT_ADDR)
    })
}

/// `template <> atb::Status atb::CreateOperation(const
/// atb::infer::PagedAttentionParam &opParam, atb::Operation **operation)`.
#[unsafe(no_mangle)]
#[allow(non_snake_case)]
// Every pointer is read and written through `cptr` (checked).
#[allow(clippy::not_unsafe_ptr_arg_deref)]
pub extern "C" fn _ZN3atb15CreateOperationINS_5infer19PagedAttentionParamEEEiRKT_PPNS_9OperationE(
    param: *const c_void,
    operation: *mut *mut c_void,
) -> i32 {
    status(|| {
        let param = abi::paged_attention_param(param).map_err(|_| ERROR_INVALID_PARAM)?;
        let made = objects::new_operation(OPERATION_VTABLE.slots(), Paged::new(&param)?);
        // SAFETY: the caller's out parameter; the write is checked.
        unsafe {
            crate::cptr::hand_out(operation, made.cast(), || {
                objects::free_operation(made);
            })
        }
        .map_err(|_| ERROR_INVALID_PARAM)
    })
}

/// `atb::Status atb::DestroyOperation(atb::Operation *operation)`.
#[unsafe(no_mangle)]
#[allow(non_snake_case)]
pub extern "C" fn _ZN3atb16DestroyOperationEPNS_9OperationE(operation: *mut c_void) -> i32 {
    status(|| {
        objects::free_operation(operation.cast())
            .then_some(())
            .ok_or(ERROR_INVALID_OPERATION_ADDR)
    })
}

/// `static uint64_t atb::Utils::GetTensorSize(const atb::Tensor &tensor)`:
/// the bytes of its elements (0 for an unreadable tensor, a type without a
/// size, or bad dimensions).
#[unsafe(no_mangle)]
#[allow(non_snake_case)]
pub extern "C" fn _ZN3atb5Utils13GetTensorSizeERKNS_6TensorE(tensor: *const c_void) -> u64 {
    catch_unwind(|| {
        let t = abi::tensor(tensor).ok()?;
        let dtype = DType::from_acl(t.dtype).ok()?;
        let numel = t
            .dims()?
            .iter()
            .try_fold(1usize, |n, &d| n.checked_mul(d))?;
        u64::try_from(numel.checked_mul(dtype.size())?).ok()
    })
    .ok()
    .flatten()
    .unwrap_or(0)
}

// `atb::Context`'s virtual methods.

/// `~Context()`, complete object: frees nothing (see [`objects`]).
extern "C" fn context_complete_dtor(_this: *mut Context) {}

/// `~Context()`, deleting (`delete context`): as `DestroyContext`.
extern "C" fn context_deleting_dtor(this: *mut Context) {
    let _ = catch_unwind(|| objects::free_context(this));
}

/// `Status SetExecuteStream(aclrtStream stream)`.
extern "C" fn set_execute_stream(this: *mut Context, stream: *mut c_void) -> i32 {
    status(|| {
        objects::with_context(this, |c| c.set_stream(stream as usize as u64))
            .ok_or(ERROR_INVALID_CONTEXT_ADDR)
    })
}

/// `aclrtStream GetExecuteStream() const` (NULL for a dead context).
extern "C" fn get_execute_stream(this: *const Context) -> *mut c_void {
    catch_unwind(|| objects::with_context(this, |c| c.stream() as usize as *mut c_void))
        .ok()
        .flatten()
        .unwrap_or(std::ptr::null_mut())
}

/// `Status SetAsyncTilingCopyStatus(bool enable)`: kept (nothing to tile).
extern "C" fn set_async_tiling_copy_status(this: *mut Context, enable: bool) -> i32 {
    status(|| {
        objects::with_context(this, |c| c.set_tiling_copy(enable)).ok_or(ERROR_INVALID_CONTEXT_ADDR)
    })
}

/// `bool GetAsyncTilingCopyStatus() const`.
extern "C" fn get_async_tiling_copy_status(this: *const Context) -> bool {
    catch_unwind(|| objects::with_context(this, Context::tiling_copy))
        .ok()
        .flatten()
        .unwrap_or(false)
}

/// `Status SetExecuteStreams(const std::vector<aclrtStream> &)` (newer
/// headers): `ERROR_INVALID_PARAM`, one stream only.
extern "C" fn set_execute_streams(_this: *mut Context, _streams: *const c_void) -> i32 {
    ERROR_INVALID_PARAM
}

/// `std::vector<aclrtStream> GetExecuteStreams()` (newer headers): an
/// empty vector (three NULL pointers, which libstdc++'s destructor frees
/// nothing of) written into the caller's storage `ret`.
extern "C" fn get_execute_streams(ret: *mut c_void, _this: *const c_void) -> *mut c_void {
    // SAFETY: the caller's storage for the returned vector; checked.
    let _ = unsafe { crate::cptr::write(ret.cast::<[usize; 3]>(), [0; 3]) };
    ret
}

/// `Status SetExecuteType(ExecuteType)` (newer headers):
/// `ERROR_INVALID_PARAM`.
extern "C" fn set_execute_type(_this: *mut Context, _type: i32) -> i32 {
    ERROR_INVALID_PARAM
}

/// `ExecuteType GetExecuteType()` (newer headers): 0, `EXECUTE_NORMAL`.
extern "C" fn get_execute_type(_this: *mut Context) -> i32 {
    0
}

/// `Status SetLaunchMode(LaunchMode)` (newer headers):
/// `ERROR_INVALID_PARAM`.
extern "C" fn set_launch_mode(_this: *mut Context, _mode: i32) -> i32 {
    ERROR_INVALID_PARAM
}

/// `LaunchMode GetLaunchMode()` (newer headers): 0, `GRAPH_LAUNCH_MODE`.
extern "C" fn get_launch_mode(_this: *mut Context) -> i32 {
    0
}

// `atb::Operation`'s virtual methods.

/// `~Operation()`, complete object: frees nothing (see [`objects`]).
extern "C" fn operation_complete_dtor(_this: *mut Operation) {}

/// `~Operation()`, deleting (`delete operation`): as `DestroyOperation`.
extern "C" fn operation_deleting_dtor(this: *mut Operation) {
    let _ = catch_unwind(|| objects::free_operation(this));
}

/// `std::string GetName() const`: `"PagedAttention"` (in place, see
/// [`StdString`]; the real library's name is `PagedAttentionOperation`,
/// longer than libstdc++ keeps in place), written into the caller's
/// storage `ret`.
extern "C" fn get_name(ret: *mut c_void, _this: *const c_void) -> *mut c_void {
    let ret_string = ret.cast::<StdString>();
    if let Some(s) = StdString::short(ret_string, "PagedAttention") {
        // SAFETY: the caller's storage for the returned string; checked.
        let _ = unsafe { crate::cptr::write(ret_string, s) };
    }
    ret
}

/// `Status InferShape(const SVector<TensorDesc> &, SVector<TensorDesc> &)
/// const`: `ERROR_OPERATION_NULL_RUNNER` (op-plugin does not call it).
extern "C" fn infer_shape(_this: *const Operation, _ins: *const c_void, _outs: *mut c_void) -> i32 {
    ERROR_OPERATION_NULL_RUNNER
}

/// `uint32_t GetInputNum() const`: 5.
extern "C" fn get_input_num(_this: *const Operation) -> u32 {
    5
}

/// `uint32_t GetOutputNum() const`: 1.
extern "C" fn get_output_num(_this: *const Operation) -> u32 {
    1
}

/// `Status Setup(const VariantPack &, uint64_t &workspaceSize, Context *)`:
/// checks the pack; workspace 0.
extern "C" fn setup(
    this: *mut Operation,
    pack: *const c_void,
    workspace: *mut u64,
    _context: *mut Context,
) -> i32 {
    status(|| {
        let paged =
            objects::with_operation(this, |o| o.paged).ok_or(ERROR_INVALID_OPERATION_ADDR)?;
        paged.plan(pack)?;
        // SAFETY: the caller's out parameter; the write is checked.
        unsafe { crate::cptr::write(workspace, 0) }.map_err(|_| ERROR_INVALID_PARAM)
    })
}

/// `Status Execute(const VariantPack &, uint8_t *workspace, uint64_t
/// workspaceSize, Context *)`: the paged attention, on the context's
/// stream (no workspace is used).
extern "C" fn execute(
    this: *mut Operation,
    pack: *const c_void,
    _workspace: *mut u8,
    _workspace_size: u64,
    context: *mut Context,
) -> i32 {
    status(|| {
        let paged =
            objects::with_operation(this, |o| o.paged).ok_or(ERROR_INVALID_OPERATION_ADDR)?;
        let stream =
            objects::with_context(context, Context::stream).ok_or(ERROR_INVALID_CONTEXT_ADDR)?;
        paged::execute(paged.plan(pack)?, stream)
    })
}
