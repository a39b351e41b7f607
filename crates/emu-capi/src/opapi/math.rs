//! The operator API's elementwise math and reductions: the unary
//! operators (`aclnnSin`, `aclnnExp`, `aclnnLogicalNot`, ... each also in
//! place) on the `aclop` kernels of the same names, and the reductions
//! (`aclnnMax`, `aclnnMin` over every element, `aclnnAmax`, `aclnnAmin`,
//! `aclnnReduceSum`, `aclnnMean` over a list of axes, `aclnnVarMean`,
//! `aclnnAminmax`), and `aclnnSWhere` (`torch.where`) on the `aclop`
//! kernel `Select`.

use aclmem_ops::aclnn::plan::{Arg, Kind, Plan};

use super::marshal::tensor;
use super::ops::{Exec, Out, T, checked, plan, runners};

runners!(
    aclnnRelu,
    aclnnInplaceRelu,
    aclnnSigmoid,
    aclnnInplaceSigmoid,
    aclnnTanh,
    aclnnInplaceTanh,
    aclnnGelu,
    aclnnNeg,
    aclnnInplaceNeg,
    aclnnAbs,
    aclnnSin,
    aclnnInplaceSin,
    aclnnCos,
    aclnnInplaceCos,
    aclnnExp,
    aclnnInplaceExp,
    aclnnLog,
    aclnnInplaceLog,
    aclnnSqrt,
    aclnnInplaceSqrt,
    aclnnRsqrt,
    aclnnInplaceRsqrt,
    aclnnReciprocal,
    aclnnInplaceReciprocal,
    aclnnLogicalNot,
    aclnnInplaceLogicalNot,
    aclnnFloor,
    aclnnInplaceFloor,
    aclnnMax,
    aclnnMin,
    aclnnAmax,
    aclnnAmin,
    aclnnReduceSum,
    aclnnMean,
    aclnnVarMean,
    aclnnAminmax,
    aclnnSWhere,
);

/// `aclnnStatus aclnnSWhereGetWorkspaceSize(const aclTensor *condition,
/// const aclTensor *self, const aclTensor *other, aclTensor *out, ...)`:
/// `self` where `condition` is true, else `other`, broadcast (the
/// operator path's `Select`).
#[unsafe(no_mangle)]
pub extern "C" fn aclnnSWhereGetWorkspaceSize(
    condition: T,
    this: T,
    other: T,
    out: T,
    workspace: Out,
    executor: Exec,
) -> i32 {
    plan("aclnnSWhereGetWorkspaceSize", workspace, executor, || {
        let args = vec![
            Arg::Tensor(tensor(condition)?),
            Arg::Tensor(tensor(this)?),
            Arg::Tensor(tensor(other)?),
        ];
        checked(Plan::new("aclnnSWhere", Kind::Select, args, tensor(out)?))
    })
}

/// The unary operators: `aclnnXGetWorkspaceSize(const aclTensor *self,
/// aclTensor *out, ...)` and, where named, the in-place
/// `aclnnInplaceXGetWorkspaceSize(aclTensor *selfRef, ...)`.
macro_rules! unary {
    ($($gws:ident / $name:literal: $kernel:literal $(, $inplace:ident / $iname:literal)?;)*) => {$(
        #[doc = concat!("`aclnnStatus ", stringify!($gws), "(const aclTensor *self, aclTensor *out, ...)`: the operator path's `", $kernel, "`.")]
        #[unsafe(no_mangle)]
        pub extern "C" fn $gws(this: T, out: T, workspace: Out, executor: Exec) -> i32 {
            plan(stringify!($gws), workspace, executor, || {
                checked(Plan::new($name, Kind::Unary($kernel), vec![Arg::Tensor(tensor(this)?)], tensor(out)?))
            })
        }
        $(
            #[doc = concat!("`aclnnStatus ", stringify!($inplace), "(aclTensor *selfRef, ...)`.")]
            #[unsafe(no_mangle)]
            pub extern "C" fn $inplace(this: T, workspace: Out, executor: Exec) -> i32 {
                plan(stringify!($inplace), workspace, executor, || {
                    checked(Plan::new($iname, Kind::Unary($kernel), vec![Arg::Tensor(tensor(this)?)], tensor(this)?))
                })
            }
        )?
    )*};
}

unary! {
    aclnnReluGetWorkspaceSize / "aclnnRelu": "Relu", aclnnInplaceReluGetWorkspaceSize / "aclnnInplaceRelu";
    aclnnSigmoidGetWorkspaceSize / "aclnnSigmoid": "Sigmoid", aclnnInplaceSigmoidGetWorkspaceSize / "aclnnInplaceSigmoid";
    aclnnTanhGetWorkspaceSize / "aclnnTanh": "Tanh", aclnnInplaceTanhGetWorkspaceSize / "aclnnInplaceTanh";
    aclnnGeluGetWorkspaceSize / "aclnnGelu": "Gelu";
    aclnnNegGetWorkspaceSize / "aclnnNeg": "Neg", aclnnInplaceNegGetWorkspaceSize / "aclnnInplaceNeg";
    aclnnAbsGetWorkspaceSize / "aclnnAbs": "Abs";
    aclnnSinGetWorkspaceSize / "aclnnSin": "Sin", aclnnInplaceSinGetWorkspaceSize / "aclnnInplaceSin";
    aclnnCosGetWorkspaceSize / "aclnnCos": "Cos", aclnnInplaceCosGetWorkspaceSize / "aclnnInplaceCos";
    aclnnExpGetWorkspaceSize / "aclnnExp": "Exp", aclnnInplaceExpGetWorkspaceSize / "aclnnInplaceExp";
    aclnnLogGetWorkspaceSize / "aclnnLog": "Log", aclnnInplaceLogGetWorkspaceSize / "aclnnInplaceLog";
    aclnnSqrtGetWorkspaceSize / "aclnnSqrt": "Sqrt", aclnnInplaceSqrtGetWorkspaceSize / "aclnnInplaceSqrt";
    aclnnRsqrtGetWorkspaceSize / "aclnnRsqrt": "Rsqrt", aclnnInplaceRsqrtGetWorkspaceSize / "aclnnInplaceRsqrt";
    aclnnReciprocalGetWorkspaceSize / "aclnnReciprocal": "Reciprocal", aclnnInplaceReciprocalGetWorkspaceSize / "aclnnInplaceReciprocal";
    aclnnLogicalNotGetWorkspaceSize / "aclnnLogicalNot": "LogicalNot", aclnnInplaceLogicalNotGetWorkspaceSize / "aclnnInplaceLogicalNot";
    aclnnFloorGetWorkspaceSize / "aclnnFloor": "Floor", aclnnInplaceFloorGetWorkspaceSize / "aclnnInplaceFloor";
}

/// A reduction's plan: `kernel` over `axes`, into `out`.
fn reduction(
    name: &'static str,
    kernel: &'static str,
    this: T,
    axes: Vec<i64>,
    keep: bool,
    out: T,
) -> Result<Plan, i32> {
    let kind = Kind::Reduce { kernel, axes, keep };
    checked(Plan::new(
        name,
        kind,
        vec![Arg::Tensor(tensor(this)?)],
        tensor(out)?,
    ))
}

/// A live integer array's values (161001 for NULL or a dead handle).
fn axes(p: T) -> Result<Vec<i64>, i32> {
    aclmem_ops::aclnn::int_array(p as usize).ok_or(aclmem_ops::aclnn::ERR_PARAM_NULLPTR)
}

/// `aclnnStatus aclnnMaxGetWorkspaceSize(const aclTensor *self, aclTensor
/// *out, ...)`: the greatest element (NaN wins).
#[unsafe(no_mangle)]
pub extern "C" fn aclnnMaxGetWorkspaceSize(this: T, out: T, workspace: Out, executor: Exec) -> i32 {
    plan("aclnnMaxGetWorkspaceSize", workspace, executor, || {
        reduction("aclnnMax", "ReduceMax", this, Vec::new(), false, out)
    })
}

/// `aclnnStatus aclnnMinGetWorkspaceSize(const aclTensor *self, aclTensor
/// *out, ...)`: the least element (NaN wins).
#[unsafe(no_mangle)]
pub extern "C" fn aclnnMinGetWorkspaceSize(this: T, out: T, workspace: Out, executor: Exec) -> i32 {
    plan("aclnnMinGetWorkspaceSize", workspace, executor, || {
        reduction("aclnnMin", "ReduceMin", this, Vec::new(), false, out)
    })
}

/// `aclnnStatus aclnnAmaxGetWorkspaceSize(const aclTensor *self, const
/// aclIntArray *dim, bool keepDim, aclTensor *out, ...)`.
#[unsafe(no_mangle)]
pub extern "C" fn aclnnAmaxGetWorkspaceSize(
    this: T,
    dim: T,
    keep: u8,
    out: T,
    workspace: Out,
    executor: Exec,
) -> i32 {
    plan("aclnnAmaxGetWorkspaceSize", workspace, executor, || {
        reduction("aclnnAmax", "ReduceMax", this, axes(dim)?, keep != 0, out)
    })
}

/// `aclnnStatus aclnnAminGetWorkspaceSize(const aclTensor *self, const
/// aclIntArray *dim, bool keepDim, aclTensor *out, ...)`.
#[unsafe(no_mangle)]
pub extern "C" fn aclnnAminGetWorkspaceSize(
    this: T,
    dim: T,
    keep: u8,
    out: T,
    workspace: Out,
    executor: Exec,
) -> i32 {
    plan("aclnnAminGetWorkspaceSize", workspace, executor, || {
        reduction("aclnnAmin", "ReduceMin", this, axes(dim)?, keep != 0, out)
    })
}

/// `aclnnStatus aclnnReduceSumGetWorkspaceSize(const aclTensor *self,
/// const aclIntArray *dims, bool keepDims, aclDataType dtype, aclTensor
/// *out, ...)`: summed in the output's type (which `dtype` names).
#[unsafe(no_mangle)]
pub extern "C" fn aclnnReduceSumGetWorkspaceSize(
    this: T,
    dims: T,
    keep: u8,
    _dtype: i32,
    out: T,
    workspace: Out,
    executor: Exec,
) -> i32 {
    plan(
        "aclnnReduceSumGetWorkspaceSize",
        workspace,
        executor,
        || {
            reduction(
                "aclnnReduceSum",
                "ReduceSum",
                this,
                axes(dims)?,
                keep != 0,
                out,
            )
        },
    )
}

/// `aclnnStatus aclnnMeanGetWorkspaceSize(const aclTensor *self, const
/// aclIntArray *dim, bool keepDim, aclDataType dtype, aclTensor *out,
/// ...)`: averaged in the output's type.
#[unsafe(no_mangle)]
pub extern "C" fn aclnnMeanGetWorkspaceSize(
    this: T,
    dim: T,
    keep: u8,
    _dtype: i32,
    out: T,
    workspace: Out,
    executor: Exec,
) -> i32 {
    plan("aclnnMeanGetWorkspaceSize", workspace, executor, || {
        reduction("aclnnMean", "ReduceMean", this, axes(dim)?, keep != 0, out)
    })
}

/// `aclnnStatus aclnnVarMeanGetWorkspaceSize(const aclTensor *self, const
/// aclIntArray *dim, int64_t correction, bool keepdim, aclTensor *varOut,
/// aclTensor *meanOut, ...)`: the variance (divided by `n - correction`)
/// and the mean over `dim` (all when empty; torch_npu lists every axis),
/// in the outputs' (float) type.
#[unsafe(no_mangle)]
pub extern "C" fn aclnnVarMeanGetWorkspaceSize(
    this: T,
    dim: T,
    correction: i64,
    keep: u8,
    var: T,
    mean: T,
    workspace: Out,
    executor: Exec,
) -> i32 {
    plan("aclnnVarMeanGetWorkspaceSize", workspace, executor, || {
        let axes = axes(dim)?;
        let keep = keep != 0;
        let kind = Kind::Var {
            axes: axes.clone(),
            correction,
            keep,
        };
        let var = checked(Plan::new(
            "aclnnVarMean",
            kind,
            vec![Arg::Tensor(tensor(this)?)],
            tensor(var)?,
        ))?;
        let mean = reduction("aclnnVarMean", "ReduceMean", this, axes, keep, mean)?;
        if mean.out.dtype != var.out.dtype {
            return Err(aclmem_ops::aclnn::ERR_PARAM_INVALID);
        }
        checked(Plan::each("aclnnVarMean", vec![var, mean]))
    })
}

/// `aclnnStatus aclnnAminmaxGetWorkspaceSize(const aclTensor *self, const
/// aclIntArray *dim, bool keepDim, aclTensor *minOut, aclTensor *maxOut,
/// ...)`: the least and the greatest element over `dim` (torch_npu lists
/// every axis for the whole tensor; NaN wins), the operator path's
/// `ReduceMin` then `ReduceMax`; both outputs of `self`'s type (161002
/// otherwise) and of its shape reduced.
#[unsafe(no_mangle)]
pub extern "C" fn aclnnAminmaxGetWorkspaceSize(
    this: T,
    dim: T,
    keep: u8,
    min: T,
    max: T,
    workspace: Out,
    executor: Exec,
) -> i32 {
    plan("aclnnAminmaxGetWorkspaceSize", workspace, executor, || {
        let axes = axes(dim)?;
        let keep = keep != 0;
        let lo = reduction("aclnnAminmax", "ReduceMin", this, axes.clone(), keep, min)?;
        let hi = reduction("aclnnAminmax", "ReduceMax", this, axes, keep, max)?;
        let dtype = tensor(this)?.dtype;
        if lo.out.dtype != dtype || hi.out.dtype != dtype {
            return Err(aclmem_ops::aclnn::ERR_PARAM_INVALID);
        }
        checked(Plan::each("aclnnAminmax", vec![lo, hi]))
    })
}
