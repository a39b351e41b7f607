//! `atb::infer::PagedAttentionParam`'s operation: its parameters, and its
//! `Setup` and `Execute` on a `VariantPack` of
//! `(query, keyCache, valueCache, blockTables, contextLens) -> (out)`
//! (the order of op-plugin's `_npu_paged_attention`); the computation is
//! `aclmem_ops::atb::paged`.

use std::ffi::c_void;

use aclmem_core::AclError;
use aclmem_ops::atb::paged::{PagedAttention, Shape};
use aclmem_ops::tensor::DType;

use super::abi::{self, PagedAttentionParam, Tensor};
use super::status::*;
use crate::cptr;
use crate::state::with_global;

/// The most context lengths read from host memory.
const MAX_TOKENS: usize = 1 << 20;

/// What a paged attention operation was made with.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Paged {
    /// `headNum`.
    pub heads: usize,
    /// `kvHeadNum` (`headNum` when 0, as ATB reads it).
    pub kv_heads: usize,
    /// `qkScale`.
    pub scale: f32,
}

impl Paged {
    /// The operation of `param`, or `ERROR_INVALID_PARAM` for what the
    /// emulator does not compute: a mask, quantisation, compression,
    /// parallel decoding, LogN scaling, the `BNSD` layout, MLA's value
    /// head size, or head counts that do not group.
    pub(crate) fn new(p: &PagedAttentionParam) -> Result<Paged, i32> {
        let plain = p.mask_type == 0
            && p.batch_run_status_enable == 0
            && p.quant_type == 0
            && p.has_quant_offset == 0
            && p.compress_type == 0
            && p.calc_type == 0
            && p.scale_type == 0
            && p.input_layout == 0
            && p.mla_v_head_size == 0;
        let heads = usize::try_from(p.head_num).map_err(|_| ERROR_INVALID_PARAM)?;
        let kv_heads = match usize::try_from(p.kv_head_num) {
            Ok(0) => heads,
            Ok(n) => n,
            Err(_) => return Err(ERROR_INVALID_PARAM),
        };
        if !plain || heads == 0 || !heads.is_multiple_of(kv_heads) || !p.qk_scale.is_finite() {
            return Err(ERROR_INVALID_PARAM);
        }
        Ok(Paged {
            heads,
            kv_heads,
            scale: p.qk_scale,
        })
    }

    /// The computation a `VariantPack` asks for (its context lengths read
    /// from host memory now), or the ATB status of what is wrong with it.
    pub(crate) fn plan(&self, pack: *const c_void) -> Result<PagedAttention, i32> {
        let pack = abi::pack(pack).map_err(|_| ERROR_INVALID_PARAM)?;
        let ([q, k, v, tables, lens], [out]) = (&pack.inputs[..], &pack.outputs[..]) else {
            return Err(ERROR_INVALID_IN_TENSOR_NUM);
        };
        let dims = |t: &Tensor, n: usize| match t.dims() {
            Some(d) if d.len() == n => Ok(d),
            Some(_) => Err(ERROR_INVALID_TENSOR_DIM_NUM),
            None => Err(ERROR_INVALID_TENSOR_DIM),
        };
        let (qd, kd, vd, td, ld, od) = (
            dims(q, 3)?,
            dims(k, 4)?,
            dims(v, 4)?,
            dims(tables, 2)?,
            dims(lens, 1)?,
            dims(out, 3)?,
        );
        let dtype = DType::from_acl(q.dtype).map_err(|_| ERROR_INVALID_TENSOR_DTYPE)?;
        let same = [k.dtype, v.dtype, out.dtype].iter().all(|&d| d == q.dtype);
        let int32 = DType::I32.acl();
        if !same || tables.dtype != int32 || lens.dtype != int32 {
            return Err(ERROR_INVALID_TENSOR_DTYPE);
        }
        let shape = Shape {
            tokens: qd[0],
            heads: qd[1],
            kv_heads: kd[2],
            head_size: qd[2],
            head_size_v: vd[3],
            blocks: kd[0],
            block_size: kd[1],
            table_width: td[1],
            scale: self.scale,
        };
        let agree = shape.heads == self.heads
            && shape.kv_heads == self.kv_heads
            && kd[3] == shape.head_size
            && vd[..3] == kd[..3]
            && td[0] == shape.tokens
            && ld[0] == shape.tokens
            && od == [shape.tokens, shape.heads, shape.head_size_v];
        if !agree {
            return Err(ERROR_INVALID_TENSOR_DIM);
        }
        let device = [q, k, v, tables, out];
        if device.iter().any(|t| t.device_data == 0) || lens.host_data == 0 {
            return Err(ERROR_INVALID_TENSOR_ADDR);
        }
        let context_lens = if shape.tokens == 0 {
            Vec::new()
        } else {
            // SAFETY: plain C integers; the read is checked.
            unsafe {
                cptr::read_array(
                    lens.host_data as *const i32,
                    shape.tokens,
                    MAX_TOKENS,
                    AclError::INVALID_PARAM,
                )
            }
            .map_err(|_| ERROR_INVALID_TENSOR_ADDR)?
        };
        PagedAttention {
            shape,
            dtype,
            query: q.device_data,
            key_cache: k.device_data,
            value_cache: v.device_data,
            block_tables: tables.device_data,
            out: out.device_data,
            context_lens,
        }
        .checked()
        .map_err(|e| match e {
            AclError::UNSUPPORTED_DATA_TYPE => ERROR_INVALID_TENSOR_DTYPE,
            AclError::OP_ATTR_NOT_MATCH => ERROR_INVALID_PARAM,
            _ => ERROR_INVALID_TENSOR_DIM,
        })
    }
}

/// `Execute`: the computation enqueued on `stream` (recorded when it
/// captures or updates a task group; a replay computes with the context
/// lengths of this call). A bad length or block id found when it runs is
/// that run's error (the stream's, or the replay's).
pub(crate) fn execute(plan: PagedAttention, stream: u64) -> Result<(), i32> {
    let mode = with_global(|g| g.emu.check_stream(stream).map(|()| g.emu.ops()))
        .map_err(|_| ERROR_INVALID_STREAM)?;
    if mode.is_plan() {
        // Plan mode (`ACLMEM_EMU_OPS=plan`): checked, accepted, not run.
        return crate::capture::enqueue(
            stream,
            "KERNEL",
            || "PagedAttentionOperation (plan mode)".to_owned(),
            |_| Ok(()),
        )
        .map_err(|_| ERROR_RT_FAIL);
    }
    crate::capture::touched(stream, &plan.ranges());
    crate::capture::enqueue(
        stream,
        "KERNEL",
        || "PagedAttentionOperation".to_owned(),
        move |_| plan.run(&crate::shared::DeviceMemory),
    )
    .map_err(|_| ERROR_RT_FAIL)
}
