//! The ABI as C++ sees it: objects called through the virtual table their
//! first word points to, packs laid out as `types.h` lays them out, and
//! garbage refused.

use std::ffi::c_void;

use super::abi::{MAX_DIM, PagedAttentionParam, Tensor};
use super::objects::{ByValue, ContextSlots, OperationSlots, StdString};
use aclmem_ops::tensor::DType;
use aclmem_sys::catalogue::{self, Answer, Returns};

use super::api::*;
use super::status::*;

/// The slots of the object at `p` (its first word), as C++ reads them.
///
/// # Safety
/// `p` must be a live object of this library whose slots are `S`.
unsafe fn slots<S>(p: *mut c_void) -> &'static S {
    // SAFETY: the caller's contract: the first word is the vtable pointer
    // to a static.
    unsafe { &*(*(p as *const *const S)) }
}

/// Calls the by-value slot `slot` on `this` as C++ does, with `ret` the
/// storage for the result: a hidden first argument on x86-64, register x8
/// on aarch64. The storage's address, which x86-64 returns.
///
/// # Safety
/// `this` must be a live object whose slot `slot` is, and `ret` writable
/// storage for the class the method returns.
unsafe fn call_by_value(slot: ByValue, ret: *mut c_void, this: *mut c_void) -> *mut c_void {
    #[cfg(not(target_arch = "aarch64"))]
    {
        slot(ret, this)
    }
    #[cfg(target_arch = "aarch64")]
    {
        // SAFETY: the caller's contract; the call follows AAPCS64 for a
        // method returning a class by value (this in x0, the storage in
        // x8) and clobbers what a C call may.
        unsafe {
            std::arch::asm!(
                "blr {slot}",
                slot = in(reg) slot,
                in("x0") this,
                in("x8") ret,
                clobber_abi("C"),
            );
        }
        ret
    }
}

fn param(heads: i32, kv_heads: i32) -> PagedAttentionParam {
    PagedAttentionParam {
        head_num: heads,
        qk_scale: 0.5,
        kv_head_num: kv_heads,
        mask_type: 0,
        batch_run_status_enable: 0,
        quant_type: 0,
        out_data_type: -1,
        has_quant_offset: 0,
        compress_type: 0,
        calc_type: 0,
        scale_type: 0,
        input_layout: 0,
        mla_v_head_size: 0,
        rsv: [0; 68],
    }
}

fn tensor(dtype: DType, dims: &[i64], device: usize, host: usize) -> Tensor {
    let mut t = Tensor {
        dtype: dtype.acl(),
        dim_num: dims.len() as u64,
        device_data: device,
        host_data: host,
        ..Tensor::default()
    };
    t.dims[..dims.len()].copy_from_slice(dims);
    t
}

/// `atb::VariantPack` as C++ lays it out: two `SVector<Tensor>`s.
#[repr(C)]
struct Pack {
    in_capacity: u64,
    in_size: u64,
    ins: [Tensor; 65],
    in_heap: usize,
    out_capacity: u64,
    out_size: u64,
    outs: [Tensor; 65],
    out_heap: usize,
}

fn pack(ins: &[Tensor], outs: &[Tensor]) -> Box<Pack> {
    let mut p = Box::new(Pack {
        in_capacity: 0,
        in_size: ins.len() as u64,
        ins: [Tensor::default(); 65],
        in_heap: 0,
        out_capacity: 0,
        out_size: outs.len() as u64,
        outs: [Tensor::default(); 65],
        out_heap: 0,
    });
    p.ins[..ins.len()].copy_from_slice(ins);
    p.outs[..outs.len()].copy_from_slice(outs);
    p
}

#[test]
fn a_context_keeps_its_stream_through_its_virtual_table() {
    let mut ctx: *mut c_void = std::ptr::null_mut();
    assert_eq!(_ZN3atb13CreateContextEPPNS_7ContextE(&mut ctx), NO_ERROR);
    // SAFETY: a live context of this library.
    let s: &ContextSlots = unsafe { slots(ctx) };
    assert_eq!(
        (s.set_execute_stream)(ctx.cast(), 0x1234 as *mut c_void),
        NO_ERROR
    );
    assert_eq!((s.get_execute_stream)(ctx.cast()), 0x1234 as *mut c_void);
    assert_eq!((s.set_async_tiling_copy_status)(ctx.cast(), true), NO_ERROR);
    assert!((s.get_async_tiling_copy_status)(ctx.cast()));
    // `GetExecuteStreams` returns an empty std::vector by value: three
    // NULL words over the caller's storage.
    let mut streams = [usize::MAX; 3];
    // SAFETY: a live context; storage for a std::vector.
    let got = unsafe { call_by_value(s.get_execute_streams, (&raw mut streams).cast(), ctx) };
    assert_eq!((got, streams), ((&raw mut streams).cast(), [0; 3]));
    assert_eq!(_ZN3atb14DestroyContextEPNS_7ContextE(ctx), NO_ERROR);
    // Dead, NULL or garbage: refused, never read.
    assert_eq!(
        _ZN3atb14DestroyContextEPNS_7ContextE(ctx),
        ERROR_INVALID_CONTEXT_ADDR
    );
    assert_eq!(
        (s.set_execute_stream)(ctx.cast(), std::ptr::null_mut()),
        ERROR_INVALID_CONTEXT_ADDR
    );
    assert_eq!(
        _ZN3atb14DestroyContextEPNS_7ContextE(0xdead_0000 as *mut c_void),
        ERROR_INVALID_CONTEXT_ADDR
    );
    assert_eq!(
        _ZN3atb13CreateContextEPPNS_7ContextE(std::ptr::null_mut()),
        ERROR_INVALID_PARAM
    );
    assert_eq!(
        _ZN3atb13CreateContextEPPNS_7ContextE(0xdead_0000 as *mut *mut c_void),
        ERROR_INVALID_PARAM
    );
}

#[test]
fn a_paged_attention_operation_sets_up_a_good_pack_and_refuses_bad_ones() {
    let p = param(4, 2);
    let mut op: *mut c_void = std::ptr::null_mut();
    assert_eq!(
        _ZN3atb15CreateOperationINS_5infer19PagedAttentionParamEEEiRKT_PPNS_9OperationE(
            (&raw const p).cast(),
            &mut op
        ),
        NO_ERROR
    );
    // SAFETY: a live operation of this library.
    let s: &OperationSlots = unsafe { slots(op) };
    let mut name = std::mem::MaybeUninit::<StdString>::uninit();
    // SAFETY: a live operation; storage for a std::string.
    let got = unsafe { call_by_value(s.get_name, name.as_mut_ptr().cast(), op) };
    // SAFETY: GetName wrote a std::string there: pointer, length, text.
    let words = unsafe { *(got as *const [usize; 2]) };
    assert_eq!(words[0], got as usize + 16);
    // SAFETY: as above: the in-place text.
    let text = unsafe { std::slice::from_raw_parts(words[0] as *const u8, words[1]) };
    assert_eq!(text, b"PagedAttention");
    assert_eq!(
        ((s.get_input_num)(op.cast()), (s.get_output_num)(op.cast())),
        (5, 1)
    );

    let lens = [3i32, 7];
    let host = lens.as_ptr() as usize;
    let good = [
        tensor(DType::F16, &[2, 4, 8], 0x1000, 0),
        tensor(DType::F16, &[5, 4, 2, 8], 0x2000, 0),
        tensor(DType::F16, &[5, 4, 2, 3], 0x3000, 0),
        tensor(DType::I32, &[2, 2], 0x4000, 0),
        tensor(DType::I32, &[2], 0, host),
    ];
    let out = tensor(DType::F16, &[2, 4, 3], 0x5000, 0);
    let setup = |ins: &[Tensor], outs: &[Tensor]| {
        let mut ws = 99u64;
        let status = (s.setup)(
            op.cast(),
            (&raw const *pack(ins, outs)).cast(),
            &mut ws,
            std::ptr::null_mut(),
        );
        (status, ws)
    };
    assert_eq!(setup(&good, &[out]), (NO_ERROR, 0));
    assert_eq!(setup(&good[..4], &[out]).0, ERROR_INVALID_IN_TENSOR_NUM);
    let mut bad = good;
    bad[1].dtype = DType::Bf16.acl();
    assert_eq!(setup(&bad, &[out]).0, ERROR_INVALID_TENSOR_DTYPE);
    let mut bad = good;
    bad[0].dims[1] = 6;
    assert_eq!(setup(&bad, &[out]).0, ERROR_INVALID_TENSOR_DIM);
    let mut bad = good;
    bad[2].dim_num = 3;
    assert_eq!(setup(&bad, &[out]).0, ERROR_INVALID_TENSOR_DIM_NUM);
    let mut bad = good;
    bad[4].host_data = 0xdead_0000;
    assert_eq!(setup(&bad, &[out]).0, ERROR_INVALID_TENSOR_ADDR);
    let mut ws = 0u64;
    assert_eq!(
        (s.setup)(
            op.cast(),
            16 as *const c_void,
            &mut ws,
            std::ptr::null_mut()
        ),
        ERROR_INVALID_PARAM
    );
    // Execute on a dead context.
    assert_eq!(
        (s.execute)(
            op.cast(),
            (&raw const *pack(&good, &[out])).cast(),
            std::ptr::null_mut(),
            0,
            0x10 as *mut _
        ),
        ERROR_INVALID_CONTEXT_ADDR
    );
    assert_eq!(_ZN3atb16DestroyOperationEPNS_9OperationE(op), NO_ERROR);
    assert_eq!(
        _ZN3atb16DestroyOperationEPNS_9OperationE(op),
        ERROR_INVALID_OPERATION_ADDR
    );
    assert_eq!(
        (s.setup)(op.cast(), std::ptr::null(), &mut ws, std::ptr::null_mut()),
        ERROR_INVALID_OPERATION_ADDR
    );
}

#[test]
fn parameters_the_emulator_does_not_compute_and_other_operations_are_refused() {
    let mut op: *mut c_void = std::ptr::null_mut();
    let mut masked = param(4, 2);
    masked.mask_type = 1;
    for p in [param(4, 3), param(0, 0), param(-1, 1), masked] {
        assert_eq!(
            _ZN3atb15CreateOperationINS_5infer19PagedAttentionParamEEEiRKT_PPNS_9OperationE(
                (&raw const p).cast(),
                &mut op
            ),
            ERROR_INVALID_PARAM
        );
        assert!(op.is_null());
    }
    assert_eq!(
        _ZN3atb15CreateOperationINS_5infer19PagedAttentionParamEEEiRKT_PPNS_9OperationE(
            24 as *const c_void,
            &mut op
        ),
        ERROR_INVALID_PARAM
    );
    // The others: the catalogue's not-supported stand-ins, answering 10.
    for name in [
        "_ZN3atb15CreateOperationINS_5infer11LinearParamEEEiRKT_PPNS_9OperationE",
        "_ZN3atb15CreateOperationINS_5infer9RopeParamEEEiRKT_PPNS_9OperationE",
    ] {
        let e = catalogue::find(name).unwrap();
        assert_eq!(
            (e.answer, e.returns),
            (Answer::Unsupported, Returns::AtbStatus)
        );
        assert_eq!(
            e.returns.value(e.answer),
            i64::from(ERROR_OPERATION_NULL_RUNNER)
        );
    }
    assert!(op.is_null());
}

#[test]
fn tensor_sizes_are_elements_times_the_type() {
    let t = tensor(DType::Bf16, &[3, 5, 7], 1, 0);
    assert_eq!(
        _ZN3atb5Utils13GetTensorSizeERKNS_6TensorE((&raw const t).cast()),
        3 * 5 * 7 * 2
    );
    let mut bad = t;
    bad.dim_num = MAX_DIM as u64 + 1;
    assert_eq!(
        _ZN3atb5Utils13GetTensorSizeERKNS_6TensorE((&raw const bad).cast()),
        0
    );
    assert_eq!(
        _ZN3atb5Utils13GetTensorSizeERKNS_6TensorE(0xdead_0000 as *const c_void),
        0
    );
}
