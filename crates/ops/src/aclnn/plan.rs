//! What an `aclnnXGetWorkspaceSize` checks and its `aclnnX` does: a
//! [`Plan`] made from the call's objects (every view, scalar and value
//! copied, so destroying the objects afterwards changes nothing) and run
//! on the device's memory later, once per `aclnnX`, or once per replay of
//! a graph that captured it.
//!
//! A plan gathers its input views into contiguous tensors, computes with
//! the operator path's kernels (the matrix products through the kept
//! kernel library, as `MatMul` does), converts to the output's type and
//! scatters the result into the output view. Types follow the operator
//! API: the inputs are promoted to the output's type before computing.

use aclmem_core::AclError;

use crate::kernels::Spec;
use crate::objects::{AttrValue, OpAttr};
use crate::tensor::{DType, Num, Tensor};

use super::attention::Attention;
use super::host::kernel_on;
use super::{Scalar, View};

pub use super::memory::Memory;

/// An input of a plan.
#[derive(Debug, Clone, PartialEq)]
pub enum Arg {
    /// A tensor view.
    Tensor(View),
    /// A scalar.
    Scalar(Scalar),
}

/// What a plan computes.
#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    /// `out = a op alpha·b`, broadcast; `op` one of the operator path's
    /// binary kernels (`Add`, `Sub`, `Mul`, `RealDiv`).
    Binary {
        /// The kernel.
        kernel: &'static str,
        /// The factor of the second operand (add and sub only).
        alpha: Option<Num>,
    },
    /// `out = f(a)`, `f` one of the operator path's unary kernels
    /// (`Relu`, `Sin`, `Exp`, `LogicalNot`, ...).
    Unary(&'static str),
    /// `out = a` reduced over `axes` (all when empty; negative ones count
    /// from the end), the reduced axes kept as 1s with `keep`; `kernel`
    /// one of the operator path's reductions (`ReduceSum`, `ReduceMean`,
    /// `ReduceMax`, `ReduceMin`).
    Reduce {
        /// The kernel.
        kernel: &'static str,
        /// The axes.
        axes: Vec<i64>,
        /// Whether the reduced axes stay, as 1s.
        keep: bool,
    },
    /// `out = f(args...)`, every argument broadcast to the output's shape
    /// and converted to its (float) type; `f` one of the operator path's
    /// pointwise kernels taking them in order (`Lerp`, `Addcmul`,
    /// `Addcdiv`, `Maximum`, `ClipByValueV2`, ...).
    Pointwise(&'static str),
    /// `out = condition ? a : b` (`aclnnSWhere`), the three broadcast to
    /// the output's shape, `a` and `b` converted to its type and the
    /// condition read in its own (true: not zero): the operator path's
    /// `Select`.
    Select,
    /// `out = ‖a‖_p` over `axes` (all when empty), the reduced axes kept
    /// as 1s with `keep`: the operator path's `LpNormReduceV2` then
    /// `LpNormUpdateV2`, in the output's (float) type.
    Norm {
        /// The order (the infinities too).
        p: f64,
        /// The axes.
        axes: Vec<i64>,
        /// Whether the reduced axes stay, as 1s.
        keep: bool,
    },
    /// One plan per tensor of a list (the `aclnnForeach*` operators), run
    /// in order; the plan's own `args` are empty and its `out` is the
    /// first part's.
    Each(Vec<Plan>),
    /// `out = a · b` (matrix, batched, vector products, as
    /// `torch.matmul`).
    Matmul,
    /// `out = beta·c + alpha·(a · b)`.
    Addmm {
        /// The factor of `c`.
        beta: Num,
        /// The factor of the product.
        alpha: Num,
    },
    /// `out = a`, converted to the output's type and broadcast to its
    /// shape (`aclnnInplaceCopy`, `aclnnCast`).
    Copy,
    /// Fused attention, forward or backward (`aclnnFlashAttentionScore`,
    /// `aclnnFlashAttentionScoreGrad`): its tensors are the call's own, the
    /// plan's `args` are empty and its `out` the attention (or the query's
    /// gradient).
    Attention(Box<Attention>),
    /// Every element of `out` is `value`.
    Fill(Num),
    /// Random values from the key `seed` and the counter `offset` (the
    /// operator path's stateless generators): normal with mean `a` and
    /// standard deviation `b`, or uniform in `[a, b)`. `seed: None` reads
    /// the seed and an offset to add from the plan's two tensors when it
    /// runs (the captured form: a replay takes the generator's state of
    /// then).
    Random {
        /// Normal, or uniform.
        normal: bool,
        /// Mean, or the lower bound.
        a: f64,
        /// Standard deviation, or the upper bound.
        b: f64,
        /// The key, or `None` for the first tensor's value.
        seed: Option<i64>,
        /// The counter (added to the second tensor's value without a seed).
        offset: i64,
    },
    /// `out = Σ (a - mean)² / max(0, n - correction)` over `axes` (all
    /// when empty), kept as 1s with `keep` (`aclnnVarMean`'s variance).
    Var {
        /// The axes.
        axes: Vec<i64>,
        /// Subtracted from the count.
        correction: i64,
        /// Whether the reduced axes stay, as 1s.
        keep: bool,
    },
}

/// One operator API call, ready to run.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// The `aclnn` function (for reports).
    pub name: &'static str,
    /// What it computes.
    pub kind: Kind,
    /// Its inputs.
    pub args: Vec<Arg>,
    /// Where it writes.
    pub out: View,
}

/// The shape `a` and `b` broadcast to.
fn broadcast(a: &[usize], b: &[usize]) -> Result<Vec<usize>, AclError> {
    let n = a.len().max(b.len());
    let at = |d: &[usize], i: usize| {
        if i < n - d.len() {
            1
        } else {
            d[i - (n - d.len())]
        }
    };
    (0..n)
        .map(|i| match (at(a, i), at(b, i)) {
            (x, y) if x == y || y == 1 => Ok(x),
            (1, y) => Ok(y),
            _ => Err(AclError::INVALID_PARAM),
        })
        .collect()
}

fn shape_of(arg: &Arg) -> Vec<usize> {
    match arg {
        Arg::Tensor(v) => v.dims.clone(),
        Arg::Scalar(_) => Vec::new(),
    }
}

/// The output shape the product of `a` and `b` has (`torch.matmul`).
fn matmul_shape(a: &[usize], b: &[usize]) -> Result<Vec<usize>, AclError> {
    let (a2, b2) = (promote_vector(a, true), promote_vector(b, false));
    let (m, k) = (a2[a2.len() - 2], a2[a2.len() - 1]);
    let (k2, n) = (b2[b2.len() - 2], b2[b2.len() - 1]);
    if k != k2 {
        return Err(AclError::INVALID_PARAM);
    }
    let batch = broadcast(&a2[..a2.len() - 2], &b2[..b2.len() - 2])?;
    let mut out = batch;
    if a.len() > 1 {
        out.push(m);
    }
    if b.len() > 1 {
        out.push(n);
    }
    Ok(out)
}

/// A vector as a matrix: a row (`left`) or a column.
fn promote_vector(d: &[usize], left: bool) -> Vec<usize> {
    match (d.len(), left) {
        (0, _) => vec![1, 1],
        (1, true) => vec![1, d[0]],
        (1, false) => vec![d[0], 1],
        _ => d.to_vec(),
    }
}

impl Plan {
    /// A plan of `kind` with its checks: the shapes must fit the output's
    /// (`ACLNN_ERR_PARAM_INVALID` otherwise).
    ///
    /// Complex tensors ([`View::complex`]) are taken by copies and casts
    /// (between complex types, from a real one, whose imaginary parts are
    /// then 0, and to a real one, which keeps the real parts, as torch
    /// does) and fills; any other plan of one is `ACLNN_ERR_PARAM_INVALID`.
    pub fn new(
        name: &'static str,
        kind: Kind,
        args: Vec<Arg>,
        out: View,
    ) -> Result<Plan, AclError> {
        let complex = |v: &View| v.complex;
        if complex(&out)
            || args
                .iter()
                .any(|a| matches!(a, Arg::Tensor(v) if complex(v)))
        {
            return Plan::of_complex(name, kind, args, out);
        }
        Plan::checked(name, kind, args, out)
    }

    /// [`Plan::new`] of real views.
    pub(super) fn checked(
        name: &'static str,
        kind: Kind,
        args: Vec<Arg>,
        out: View,
    ) -> Result<Plan, AclError> {
        let shapes: Vec<Vec<usize>> = args.iter().map(shape_of).collect();
        let want = match (&kind, shapes.as_slice()) {
            (Kind::Binary { .. }, [a, b]) => broadcast(a, b)?,
            (Kind::Unary(_), [a]) => a.clone(),
            (Kind::Pointwise(_), [_, ..]) => {
                let mut shape = Vec::new();
                for s in &shapes {
                    shape = broadcast(&shape, s)?;
                }
                shape
            }
            (Kind::Select, [c, a, b]) => broadcast(&broadcast(c, a)?, b)?,
            (Kind::Norm { axes, keep, .. }, [a]) | (Kind::Var { axes, keep, .. }, [a]) => {
                reduced(a, axes, *keep)?
            }
            (Kind::Each(parts), []) => match parts.first() {
                Some(first) if first.out == out => out.dims.clone(),
                _ => return Err(AclError::INVALID_PARAM),
            },
            (Kind::Reduce { axes, keep, .. }, [a]) => reduced(a, axes, *keep)?,
            (Kind::Matmul, [a, b]) if !a.is_empty() && !b.is_empty() => matmul_shape(a, b)?,
            (Kind::Addmm { .. }, [c, a, b]) if a.len() == 2 && b.len() == 2 => {
                let p = matmul_shape(a, b)?;
                broadcast(c, &p)?;
                p
            }
            (Kind::Copy, [a]) => {
                if broadcast(a, &out.dims)? != out.dims {
                    return Err(AclError::INVALID_PARAM);
                }
                out.dims.clone()
            }
            (Kind::Fill(_), []) | (Kind::Random { seed: Some(_), .. }, []) => out.dims.clone(),
            (Kind::Attention(a), []) => {
                a.check(&out)?;
                out.dims.clone()
            }
            (Kind::Random { seed: None, .. }, [_, _]) => out.dims.clone(),
            _ => return Err(AclError::INVALID_PARAM),
        };
        if want != out.dims {
            return Err(AclError::INVALID_PARAM);
        }
        if matches!(
            kind,
            Kind::Matmul
                | Kind::Addmm { .. }
                | Kind::Random { .. }
                | Kind::Pointwise(_)
                | Kind::Norm { .. }
                | Kind::Var { .. }
        ) && !out.dtype.is_float()
        {
            return Err(AclError::INVALID_PARAM);
        }
        Ok(Plan {
            name,
            kind,
            args,
            out,
        })
    }

    /// One plan per tensor of a list: `parts` (at least one), run in
    /// order (`ACLNN_ERR_PARAM_INVALID` for none).
    pub fn each(name: &'static str, parts: Vec<Plan>) -> Result<Plan, AclError> {
        let out = parts.first().ok_or(AclError::INVALID_PARAM)?.out.clone();
        Plan::new(name, Kind::Each(parts), Vec::new(), out)
    }

    /// The memory it reads and writes: each view's extent.
    pub fn ranges(&self) -> Vec<(usize, usize)> {
        if let Kind::Each(parts) = &self.kind {
            return parts.iter().flat_map(Plan::ranges).collect();
        }
        if let Kind::Attention(a) = &self.kind {
            let views = a.views();
            return views
                .iter()
                .chain([&self.out])
                .filter_map(View::extent)
                .collect();
        }
        let views = self.args.iter().filter_map(|a| match a {
            Arg::Tensor(v) => Some(v),
            Arg::Scalar(_) => None,
        });
        views.chain([&self.out]).filter_map(View::extent).collect()
    }

    /// Runs the plan on `mem`.
    pub fn run(&self, mem: &dyn Memory) -> Result<(), AclError> {
        if let Kind::Each(parts) = &self.kind {
            return parts.iter().try_for_each(|p| p.run(mem));
        }
        if let Kind::Attention(a) = &self.kind {
            return a.run(&self.out, mem);
        }
        if let Some(done) = super::stream::run(self, mem) {
            return done;
        }
        if let Some(done) = super::products::run(self, mem) {
            return done;
        }
        if let Kind::Random {
            normal,
            a,
            b,
            seed,
            offset,
        } = self.kind
        {
            let (seed, offset) = match (seed, self.args.as_slice()) {
                (Some(s), _) => (s, offset),
                (None, [Arg::Tensor(s), Arg::Tensor(o)]) => {
                    let first = |v: &View| {
                        v.gather(mem)
                            .map(|t| t.nums().next().map_or(0, |n| n.i64()))
                    };
                    (first(s)?, first(o)?.wrapping_add(offset))
                }
                _ => return Err(AclError::INVALID_PARAM),
            };
            if let Some(done) = super::random::fill(normal, a, b, seed, offset, &self.out, mem) {
                return done;
            }
            let t = random(normal, a, b, seed, offset, &self.out)?;
            return self.out.scatter(mem, &t.bytes);
        }
        let dtype = self.out.dtype;
        let inputs = self
            .args
            .iter()
            .enumerate()
            .map(|(i, a)| match a {
                // Select's condition keeps its own type.
                Arg::Tensor(v) if i == 0 && self.kind == Kind::Select => v.gather(mem),
                Arg::Tensor(v) => v.gather(mem).and_then(|t| convert(t, dtype)),
                Arg::Scalar(s) => Ok(Tensor::from_nums(dtype, Vec::new(), [s.value])),
            })
            .collect::<Result<Vec<_>, _>>()?;
        let dims = self.out.dims.clone();
        let result = match (&self.kind, inputs.as_slice()) {
            (Kind::Binary { kernel, alpha }, [a, b]) => {
                let b = match alpha {
                    Some(alpha) if alpha.f64() != 1.0 => {
                        let factor = Tensor::from_nums(dtype, Vec::new(), [*alpha]);
                        kernel_on(
                            "Mul",
                            &[b.clone(), factor],
                            Spec {
                                dtype,
                                dims: b.dims.clone(),
                            },
                            OpAttr::new(),
                        )?
                    }
                    _ => b.clone(),
                };
                kernel_on(kernel, &[a.clone(), b], Spec { dtype, dims }, OpAttr::new())?
            }
            (Kind::Unary(kernel), [a]) => kernel_on(
                kernel,
                std::slice::from_ref(a),
                Spec { dtype, dims },
                OpAttr::new(),
            )?,
            (Kind::Reduce { kernel, axes, keep }, [a]) => {
                let axes = Tensor::from_nums(
                    DType::I64,
                    vec![axes.len()],
                    axes.iter().map(|&x| Num::I(x)),
                );
                let mut attrs = OpAttr::new();
                attrs.insert("keep_dims".into(), AttrValue::Bool(*keep));
                kernel_on(kernel, &[a.clone(), axes], Spec { dtype, dims }, attrs)?
            }
            (Kind::Pointwise(kernel), args) => {
                kernel_on(kernel, args, Spec { dtype, dims }, OpAttr::new())?
            }
            (Kind::Select, args) => kernel_on("Select", args, Spec { dtype, dims }, OpAttr::new())?,
            (Kind::Norm { p, axes, keep }, [a]) => norm(a, *p, axes, *keep, Spec { dtype, dims })?,
            (
                Kind::Var {
                    axes,
                    correction,
                    keep,
                },
                [a],
            ) => super::spread::var(a, axes, *correction, *keep, Spec { dtype, dims })?,
            (Kind::Matmul, [a, b]) => matmul(a, b, dtype, dims)?,
            (Kind::Addmm { beta, alpha }, [c, a, b]) => {
                let p = matmul(a, b, dtype, dims.clone())?;
                let c = broadcast_to(c, &dims)?;
                let nums = c
                    .nums()
                    .zip(p.nums())
                    .map(|(c, p)| Num::F(beta.f64() * c.f64() + alpha.f64() * p.f64()));
                Tensor::from_nums(dtype, dims, nums)
            }
            (Kind::Copy, [a]) => broadcast_to(a, &dims)?,
            (Kind::Fill(value), []) => Tensor::full(dtype, dims, *value)?,
            _ => return Err(AclError::INVALID_PARAM),
        };
        self.out.scatter(mem, &result.bytes)
    }
}

/// The shape of `dims` reduced over `axes` (all when empty), kept as 1s
/// with `keep`; an axis outside the rank is `ACLNN_ERR_PARAM_INVALID`.
fn reduced(dims: &[usize], axes: &[i64], keep: bool) -> Result<Vec<usize>, AclError> {
    let rank = i64::try_from(dims.len()).map_err(|_| AclError::INVALID_PARAM)?;
    let mut gone = vec![axes.is_empty(); dims.len()];
    for &a in axes {
        let a = if a < 0 { a + rank } else { a };
        let slot = usize::try_from(a)
            .ok()
            .and_then(|a| gone.get_mut(a))
            .ok_or(AclError::INVALID_PARAM)?;
        *slot = true;
    }
    Ok(dims
        .iter()
        .zip(&gone)
        .filter_map(|(&d, &g)| match (g, keep) {
            (false, _) => Some(d),
            (true, true) => Some(1),
            (true, false) => None,
        })
        .collect())
}

/// `‖a‖_p` over `axes` into `out`: `LpNormReduceV2` and `LpNormUpdateV2`
/// (the infinities passed as torch_npu passes them, `INT_MAX`/`INT_MIN`).
fn norm(a: &Tensor, p: f64, axes: &[i64], keep: bool, out: Spec) -> Result<Tensor, AclError> {
    let p = if p == f64::INFINITY {
        i32::MAX as f32
    } else if p == f64::NEG_INFINITY {
        i32::MIN as f32
    } else {
        p as f32
    };
    let mut attrs = OpAttr::new();
    attrs.insert("p".into(), AttrValue::Float(p));
    attrs.insert("axes".into(), AttrValue::ListInt(axes.to_vec()));
    attrs.insert("keepdim".into(), AttrValue::Bool(keep));
    let sums = kernel_on(
        "LpNormReduceV2",
        std::slice::from_ref(a),
        out.clone(),
        attrs,
    )?;
    let mut attrs = OpAttr::new();
    attrs.insert("p".into(), AttrValue::Float(p));
    kernel_on("LpNormUpdateV2", &[sums], out, attrs)
}

/// `t` as `dtype` (each element converted as a C cast converts it).
fn convert(t: Tensor, dtype: DType) -> Result<Tensor, AclError> {
    if t.dtype == dtype {
        return Ok(t);
    }
    let mut attrs = OpAttr::new();
    attrs.insert("dst_type".into(), AttrValue::DataType(dtype.acl()));
    let dims = t.dims.clone();
    kernel_on("Cast", &[t], Spec { dtype, dims }, attrs)
}

/// `t` broadcast to `dims`.
fn broadcast_to(t: &Tensor, dims: &[usize]) -> Result<Tensor, AclError> {
    if t.dims == dims {
        return Ok(t.clone());
    }
    let shape = Tensor::from_nums(
        DType::I64,
        vec![dims.len()],
        dims.iter().map(|&d| Num::I(d as i64)),
    );
    kernel_on(
        "BroadcastTo",
        &[t.clone(), shape],
        Spec {
            dtype: t.dtype,
            dims: dims.to_vec(),
        },
        OpAttr::new(),
    )
}

/// `a · b` as `torch.matmul`: vectors as rows or columns, 2-D products by
/// `MatMul`, batched ones (batch dims broadcast) by `BatchMatMulV2`.
fn matmul(a: &Tensor, b: &Tensor, dtype: DType, dims: Vec<usize>) -> Result<Tensor, AclError> {
    let mut a = a.clone();
    let mut b = b.clone();
    a.dims = promote_vector(&a.dims, true);
    b.dims = promote_vector(&b.dims, false);
    let batch = broadcast(&a.dims[..a.dims.len() - 2], &b.dims[..b.dims.len() - 2])?;
    let mut full = batch;
    full.push(a.dims[a.dims.len() - 2]);
    full.push(b.dims[b.dims.len() - 1]);
    let kernel = if full.len() == 2 {
        "MatMul"
    } else {
        "BatchMatMulV2"
    };
    let mut t = kernel_on(kernel, &[a, b], Spec { dtype, dims: full }, OpAttr::new())?;
    t.dims = dims;
    Ok(t)
}

/// `out`'s shape of random values (see [`Kind::Random`]), by the operator
/// path's stateless generators.
fn random(
    normal: bool,
    a: f64,
    b: f64,
    seed: i64,
    offset: i64,
    out: &View,
) -> Result<Tensor, AclError> {
    let ints =
        |v: &[i64]| Tensor::from_nums(DType::I64, vec![v.len()], v.iter().map(|&x| Num::I(x)));
    let shape: Vec<i64> = out.dims.iter().map(|&d| d as i64).collect();
    let mut attrs = OpAttr::new();
    attrs.insert("dtype".into(), AttrValue::DataType(DType::F64.acl()));
    let kernel = if normal {
        "StatelessRandomNormalV2"
    } else {
        "StatelessRandomUniformV2"
    };
    let spec = Spec {
        dtype: DType::F64,
        dims: out.dims.clone(),
    };
    let unit = kernel_on(
        kernel,
        &[ints(&shape), ints(&[seed]), ints(&[offset, 0]), ints(&[1])],
        spec,
        attrs,
    )?;
    let nums = unit.nums().map(|x| {
        Num::F(if normal {
            a + b * x.f64()
        } else {
            a + (b - a) * x.f64()
        })
    });
    let mut t = Tensor::from_nums(out.dtype, out.dims.clone(), nums);
    // A narrow type may round a uniform value up to `b`: keep `[a, b)`.
    if !normal {
        let size = out.dtype.size();
        for i in 0..t.numel() {
            if t.at(i).f64() >= b {
                out.dtype.put(Num::F(a), &mut t.bytes[i * size..]);
            }
        }
    }
    Ok(t)
}
