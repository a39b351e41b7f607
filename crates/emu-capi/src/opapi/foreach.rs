//! The operator API's list operators (`aclnnForeach*`), which torch_npu's
//! `_foreach_*` functions (the optimizers' multi-tensor steps and
//! `clip_grad_norm_`) launch: one plan per tensor of the lists (every list
//! of the same length, 161002 otherwise), each the plan of the operator of
//! one tensor (`Add`, `Mul`, `Addcmul`, `Lerp`, `Sqrt`, the norm, ...),
//! run in order by one `aclnnForeachX`. The in-place forms are the same
//! functions with the output list the input's.

use aclmem_ops::aclnn::plan::{Arg, Kind, Plan};
use aclmem_ops::aclnn::{self, ERR_PARAM_INVALID, ERR_PARAM_NULLPTR, View};

use super::marshal::{scalar_arg, tensor};
use super::ops::{Exec, Out, T, checked, plan, runners};

runners!(
    aclnnForeachAddScalarV2,
    aclnnForeachSubScalarV2,
    aclnnForeachMulScalarV2,
    aclnnForeachDivScalarV2,
    aclnnForeachMaximumScalarV2,
    aclnnForeachMinimumScalarV2,
    aclnnForeachAddScalar,
    aclnnForeachSubScalar,
    aclnnForeachMulScalar,
    aclnnForeachDivScalar,
    aclnnForeachAddScalarList,
    aclnnForeachSubScalarList,
    aclnnForeachMulScalarList,
    aclnnForeachDivScalarList,
    aclnnForeachAddListV2,
    aclnnForeachSubListV2,
    aclnnForeachMulList,
    aclnnForeachDivList,
    aclnnForeachMaximumList,
    aclnnForeachMinimumList,
    aclnnForeachAddcmulScalarV2,
    aclnnForeachAddcdivScalarV2,
    aclnnForeachAddcmulScalar,
    aclnnForeachAddcdivScalar,
    aclnnForeachLerpScalar,
    aclnnForeachLerpList,
    aclnnForeachSqrt,
    aclnnForeachNeg,
    aclnnForeachAbs,
    aclnnForeachExp,
    aclnnForeachReciprocal,
    aclnnForeachNorm,
);

/// A live tensor list's views (161001 for NULL or a dead handle).
fn list(p: T) -> Result<Vec<View>, i32> {
    aclnn::tensor_list(p as usize).ok_or(ERR_PARAM_NULLPTR)
}

/// A one-element tensor as a scalar of the broadcast (a 0-d view; 161002
/// for another count).
fn one(p: T) -> Result<Arg, i32> {
    let mut v = tensor(p)?;
    if v.dims.iter().product::<usize>() != 1 {
        return Err(ERR_PARAM_INVALID);
    }
    v.dims.clear();
    v.strides.clear();
    Ok(Arg::Tensor(v))
}

/// The lists' plans: `part(i, tensors of index i)` for every index, into
/// `out`'s tensor `i` (lists of one length, at least one tensor).
fn each(
    name: &'static str,
    lists: &[T],
    out: T,
    part: impl Fn(usize, Vec<Arg>) -> (Kind, Vec<Arg>),
) -> Result<Plan, i32> {
    let lists = lists
        .iter()
        .map(|&p| list(p))
        .collect::<Result<Vec<_>, _>>()?;
    let out = list(out)?;
    if lists.iter().any(|l| l.len() != out.len()) {
        return Err(ERR_PARAM_INVALID);
    }
    let parts = out
        .into_iter()
        .enumerate()
        .map(|(i, o)| {
            let args = lists.iter().map(|l| Arg::Tensor(l[i].clone())).collect();
            let (kind, args) = part(i, args);
            checked(Plan::new(name, kind, args, o))
        })
        .collect::<Result<Vec<_>, _>>()?;
    checked(Plan::each(name, parts))
}

fn binary(kernel: &'static str) -> Kind {
    Kind::Binary {
        kernel,
        alpha: None,
    }
}

/// `(const aclTensorList *x, const aclScalar *scalar, aclTensorList *out)`.
macro_rules! with_scalar {
    ($($gws:ident / $name:literal: $kind:expr;)*) => {$(
        #[doc = concat!("`aclnnStatus ", stringify!($gws), "(const aclTensorList *x, const aclScalar *scalar, aclTensorList *out, ...)`.")]
        #[unsafe(no_mangle)]
        pub extern "C" fn $gws(x: T, scalar: T, out: T, workspace: Out, executor: Exec) -> i32 {
            plan(stringify!($gws), workspace, executor, || {
                let s = Arg::Scalar(scalar_arg(scalar)?);
                each($name, &[x], out, |_, mut a| { a.push(s.clone()); ($kind, a) })
            })
        }
    )*};
}

with_scalar! {
    aclnnForeachAddScalarV2GetWorkspaceSize / "aclnnForeachAddScalarV2": binary("Add");
    aclnnForeachSubScalarV2GetWorkspaceSize / "aclnnForeachSubScalarV2": binary("Sub");
    aclnnForeachMulScalarV2GetWorkspaceSize / "aclnnForeachMulScalarV2": binary("Mul");
    aclnnForeachDivScalarV2GetWorkspaceSize / "aclnnForeachDivScalarV2": binary("RealDiv");
    aclnnForeachMaximumScalarV2GetWorkspaceSize / "aclnnForeachMaximumScalarV2": binary("Maximum");
    aclnnForeachMinimumScalarV2GetWorkspaceSize / "aclnnForeachMinimumScalarV2": binary("Minimum");
}

/// `(const aclTensorList *x, const aclTensor *scalar, aclTensorList
/// *out)`, the scalar a one-element device tensor.
macro_rules! with_scalar_tensor {
    ($($gws:ident / $name:literal: $kernel:literal;)*) => {$(
        #[doc = concat!("`aclnnStatus ", stringify!($gws), "(const aclTensorList *x, const aclTensor *scalar, aclTensorList *out, ...)`.")]
        #[unsafe(no_mangle)]
        pub extern "C" fn $gws(x: T, scalar: T, out: T, workspace: Out, executor: Exec) -> i32 {
            plan(stringify!($gws), workspace, executor, || {
                let s = one(scalar)?;
                each($name, &[x], out, |_, mut a| { a.push(s.clone()); (binary($kernel), a) })
            })
        }
    )*};
}

with_scalar_tensor! {
    aclnnForeachAddScalarGetWorkspaceSize / "aclnnForeachAddScalar": "Add";
    aclnnForeachSubScalarGetWorkspaceSize / "aclnnForeachSubScalar": "Sub";
    aclnnForeachMulScalarGetWorkspaceSize / "aclnnForeachMulScalar": "Mul";
    aclnnForeachDivScalarGetWorkspaceSize / "aclnnForeachDivScalar": "RealDiv";
}

/// `(const aclTensorList *x, const aclScalarList *scalars, aclTensorList
/// *out)`: tensor `i` with scalar `i`.
macro_rules! with_scalar_list {
    ($($gws:ident / $name:literal: $kernel:literal;)*) => {$(
        #[doc = concat!("`aclnnStatus ", stringify!($gws), "(const aclTensorList *x, const aclScalarList *scalars, aclTensorList *out, ...)`.")]
        #[unsafe(no_mangle)]
        pub extern "C" fn $gws(x: T, scalars: T, out: T, workspace: Out, executor: Exec) -> i32 {
            plan(stringify!($gws), workspace, executor, || {
                let s = aclnn::scalars(scalars as usize).ok_or(ERR_PARAM_NULLPTR)?;
                if s.len() != list(x)?.len() {
                    return Err(ERR_PARAM_INVALID);
                }
                each($name, &[x], out, |i, mut a| { a.push(Arg::Scalar(s[i])); (binary($kernel), a) })
            })
        }
    )*};
}

with_scalar_list! {
    aclnnForeachAddScalarListGetWorkspaceSize / "aclnnForeachAddScalarList": "Add";
    aclnnForeachSubScalarListGetWorkspaceSize / "aclnnForeachSubScalarList": "Sub";
    aclnnForeachMulScalarListGetWorkspaceSize / "aclnnForeachMulScalarList": "Mul";
    aclnnForeachDivScalarListGetWorkspaceSize / "aclnnForeachDivScalarList": "RealDiv";
}

/// `(const aclTensorList *x1, const aclTensorList *x2, aclTensorList
/// *out)`, element by element.
macro_rules! two_lists {
    ($($gws:ident / $name:literal: $kind:expr;)*) => {$(
        #[doc = concat!("`aclnnStatus ", stringify!($gws), "(const aclTensorList *x1, const aclTensorList *x2, aclTensorList *out, ...)`.")]
        #[unsafe(no_mangle)]
        pub extern "C" fn $gws(x1: T, x2: T, out: T, workspace: Out, executor: Exec) -> i32 {
            plan(stringify!($gws), workspace, executor, || each($name, &[x1, x2], out, |_, a| ($kind, a)))
        }
    )*};
}

two_lists! {
    aclnnForeachMulListGetWorkspaceSize / "aclnnForeachMulList": binary("Mul");
    aclnnForeachDivListGetWorkspaceSize / "aclnnForeachDivList": binary("RealDiv");
    aclnnForeachMaximumListGetWorkspaceSize / "aclnnForeachMaximumList": binary("Maximum");
    aclnnForeachMinimumListGetWorkspaceSize / "aclnnForeachMinimumList": binary("Minimum");
}

/// `(const aclTensorList *x1, const aclTensorList *x2, const aclScalar
/// *alpha, aclTensorList *out)`: `x1 ± alpha·x2`.
macro_rules! with_alpha {
    ($($gws:ident / $name:literal: $kernel:literal;)*) => {$(
        #[doc = concat!("`aclnnStatus ", stringify!($gws), "(const aclTensorList *x1, const aclTensorList *x2, const aclScalar *alpha, aclTensorList *out, ...)`.")]
        #[unsafe(no_mangle)]
        pub extern "C" fn $gws(x1: T, x2: T, alpha: T, out: T, workspace: Out, executor: Exec) -> i32 {
            plan(stringify!($gws), workspace, executor, || {
                let alpha = Some(scalar_arg(alpha)?.value);
                each($name, &[x1, x2], out, |_, a| (Kind::Binary { kernel: $kernel, alpha }, a))
            })
        }
    )*};
}

with_alpha! {
    aclnnForeachAddListV2GetWorkspaceSize / "aclnnForeachAddListV2": "Add";
    aclnnForeachSubListV2GetWorkspaceSize / "aclnnForeachSubListV2": "Sub";
}

/// `(const aclTensorList *x, const aclTensorList *x1, const aclTensorList
/// *x2, scalar, aclTensorList *out)`: `x + scalar·x1·x2` or `x +
/// scalar·x1/x2`, the scalar an `aclScalar` (V2) or a one-element tensor.
macro_rules! ternary {
    ($($gws:ident / $name:literal: $kernel:literal, $scalar:ident;)*) => {$(
        #[doc = concat!("`aclnnStatus ", stringify!($gws), "(const aclTensorList *x, const aclTensorList *x1, const aclTensorList *x2, scalar, aclTensorList *out, ...)`.")]
        #[unsafe(no_mangle)]
        pub extern "C" fn $gws(x: T, x1: T, x2: T, scalar: T, out: T, workspace: Out, executor: Exec) -> i32 {
            plan(stringify!($gws), workspace, executor, || {
                let s = $scalar(scalar)?;
                each($name, &[x, x1, x2], out, |_, mut a| { a.push(s.clone()); (Kind::Pointwise($kernel), a) })
            })
        }
    )*};
}

fn aclscalar(p: T) -> Result<Arg, i32> {
    scalar_arg(p).map(Arg::Scalar)
}

ternary! {
    aclnnForeachAddcmulScalarV2GetWorkspaceSize / "aclnnForeachAddcmulScalarV2": "Addcmul", aclscalar;
    aclnnForeachAddcdivScalarV2GetWorkspaceSize / "aclnnForeachAddcdivScalarV2": "Addcdiv", aclscalar;
    aclnnForeachAddcmulScalarGetWorkspaceSize / "aclnnForeachAddcmulScalar": "Addcmul", one;
    aclnnForeachAddcdivScalarGetWorkspaceSize / "aclnnForeachAddcdivScalar": "Addcdiv", one;
}

/// `aclnnStatus aclnnForeachLerpScalarGetWorkspaceSize(const
/// aclTensorList *x1, const aclTensorList *x2, const aclScalar *weight,
/// aclTensorList *out, ...)`: `x1 + weight·(x2 - x1)`.
#[unsafe(no_mangle)]
pub extern "C" fn aclnnForeachLerpScalarGetWorkspaceSize(
    x1: T,
    x2: T,
    weight: T,
    out: T,
    workspace: Out,
    executor: Exec,
) -> i32 {
    plan(
        "aclnnForeachLerpScalarGetWorkspaceSize",
        workspace,
        executor,
        || {
            let w = aclscalar(weight)?;
            each("aclnnForeachLerpScalar", &[x1, x2], out, |_, mut a| {
                a.push(w.clone());
                (Kind::Pointwise("Lerp"), a)
            })
        },
    )
}

/// `aclnnStatus aclnnForeachNormGetWorkspaceSize(const aclTensorList *x,
/// const aclScalar *scalar, aclTensorList *out, ...)`: the `scalar`-norm
/// of each tensor over all its elements (0-d outputs).
#[unsafe(no_mangle)]
pub extern "C" fn aclnnForeachNormGetWorkspaceSize(
    x: T,
    scalar: T,
    out: T,
    workspace: Out,
    executor: Exec,
) -> i32 {
    plan(
        "aclnnForeachNormGetWorkspaceSize",
        workspace,
        executor,
        || {
            let p = scalar_arg(scalar)?.value.f64();
            each("aclnnForeachNorm", &[x], out, |_, a| {
                let kind = Kind::Norm {
                    p,
                    axes: Vec::new(),
                    keep: false,
                };
                (kind, a)
            })
        },
    )
}

/// `aclnnStatus aclnnForeachLerpListGetWorkspaceSize(const aclTensorList
/// *x1, const aclTensorList *x2, const aclTensorList *weight, aclTensorList
/// *out, ...)`: `x1 + weight·(x2 - x1)`, element by element.
#[unsafe(no_mangle)]
pub extern "C" fn aclnnForeachLerpListGetWorkspaceSize(
    x1: T,
    x2: T,
    weight: T,
    out: T,
    workspace: Out,
    executor: Exec,
) -> i32 {
    plan(
        "aclnnForeachLerpListGetWorkspaceSize",
        workspace,
        executor,
        || {
            each("aclnnForeachLerpList", &[x1, x2, weight], out, |_, a| {
                (Kind::Pointwise("Lerp"), a)
            })
        },
    )
}

/// `(const aclTensorList *x, aclTensorList *out)`: the operator path's
/// unary kernel on each tensor.
macro_rules! unary {
    ($($gws:ident / $name:literal: $kernel:literal;)*) => {$(
        #[doc = concat!("`aclnnStatus ", stringify!($gws), "(const aclTensorList *x, aclTensorList *out, ...)`: `", $kernel, "` of each.")]
        #[unsafe(no_mangle)]
        pub extern "C" fn $gws(x: T, out: T, workspace: Out, executor: Exec) -> i32 {
            plan(stringify!($gws), workspace, executor, || each($name, &[x], out, |_, a| (Kind::Unary($kernel), a)))
        }
    )*};
}

unary! {
    aclnnForeachSqrtGetWorkspaceSize / "aclnnForeachSqrt": "Sqrt";
    aclnnForeachNegGetWorkspaceSize / "aclnnForeachNeg": "Neg";
    aclnnForeachAbsGetWorkspaceSize / "aclnnForeachAbs": "Abs";
    aclnnForeachExpGetWorkspaceSize / "aclnnForeachExp": "Exp";
    aclnnForeachReciprocalGetWorkspaceSize / "aclnnForeachReciprocal": "Reciprocal";
}
