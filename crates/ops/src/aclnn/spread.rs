//! The variance of `aclnnVarMean`, on the operator path's kernels: the
//! mean (`ReduceMean`, kept) and the spread about it
//! (`ReduceStdV2Update`), both in f64 and rounded once to the output's
//! type.

use aclmem_core::AclError;

use crate::kernels::Spec;
use crate::objects::{AttrValue, OpAttr};
use crate::tensor::{DType, Num, Tensor};

use super::host::kernel_on;

/// `Σ (a - mean)² / max(0, n - correction)` over `axes` (all when empty)
/// into `out` (reduced axes kept as 1s with `keep`).
pub(super) fn var(
    a: &Tensor,
    axes: &[i64],
    correction: i64,
    keep: bool,
    out: Spec,
) -> Result<Tensor, AclError> {
    let wide = Tensor::from_nums(
        DType::F64,
        a.dims.clone(),
        a.nums().map(|n| Num::F(n.f64())),
    );
    let list = Tensor::from_nums(
        DType::I64,
        vec![axes.len()],
        axes.iter().map(|&x| Num::I(x)),
    );
    let rank = a.dims.len() as i64;
    let reduced = |k: usize| {
        axes.is_empty()
            || axes
                .iter()
                .any(|&x| (if x < 0 { x + rank } else { x }) == k as i64)
    };
    let kept: Vec<usize> = (0..a.dims.len())
        .map(|k| if reduced(k) { 1 } else { a.dims[k] })
        .collect();
    let mut attrs = OpAttr::new();
    attrs.insert("keep_dims".into(), AttrValue::Bool(true));
    let mean = kernel_on(
        "ReduceMean",
        &[wide.clone(), list],
        Spec {
            dtype: DType::F64,
            dims: kept,
        },
        attrs,
    )?;
    let mut attrs = OpAttr::new();
    attrs.insert("dim".into(), AttrValue::ListInt(axes.to_vec()));
    attrs.insert("if_std".into(), AttrValue::Bool(false));
    attrs.insert("unbiased".into(), AttrValue::Bool(true));
    attrs.insert("keepdim".into(), AttrValue::Bool(keep));
    attrs.insert("correction".into(), AttrValue::Int(correction));
    let spec = Spec {
        dtype: DType::F64,
        dims: out.dims.clone(),
    };
    let v = kernel_on("ReduceStdV2Update", &[wide, mean], spec, attrs)?;
    Ok(Tensor::from_nums(out.dtype, out.dims, v.nums()))
}
