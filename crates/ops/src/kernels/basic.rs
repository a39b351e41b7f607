//! The kernels that make or convert a tensor whole: fills (`Fill`,
//! `ZerosLike`, `OnesLike`), `Cast`, `Identity` and `Range`.

#![allow(non_snake_case)]

use super::call::*;

/// Every element of output `o` is `n`.
pub(crate) fn filled(call: &Call<'_>, o: usize, n: Num) -> Result<Written, AclError> {
    let out = call.out(o);
    Ok(vec![Tensor::full(out.dtype, out.dims.clone(), n)?.bytes])
}

/// `ZerosLike(x) -> y`: zeros of `y`'s type and shape.
pub(crate) fn ZerosLike(call: &Call<'_>) -> Result<Written, AclError> {
    call.expect(1, 1)?;
    same_count(call.spec(0)?, call.out(0))?;
    filled(call, 0, Num::I(0))
}

/// `OnesLike(x) -> y`: ones.
pub(crate) fn OnesLike(call: &Call<'_>) -> Result<Written, AclError> {
    call.expect(1, 1)?;
    same_count(call.spec(0)?, call.out(0))?;
    filled(call, 0, Num::I(1))
}

pub(crate) fn same_count(a: &Spec, b: &Spec) -> Result<(), AclError> {
    if a.numel() == b.numel() {
        Ok(())
    } else {
        Err(AclError::OP_OUTPUT_NOT_MATCH)
    }
}

/// `Fill(dims, value) -> y`: `value` everywhere (`dims` is `[1]` for a
/// 0-dim `y`).
pub(crate) fn Fill(call: &Call<'_>) -> Result<Written, AclError> {
    call.expect(2, 1)?;
    let dims = call.sizes(0)?;
    let count = Tensor::numel_of(&dims)?;
    if count != call.out(0).numel() {
        return Err(AclError::OP_OUTPUT_NOT_MATCH);
    }
    filled(call, 0, call.scalar(1)?)
}

/// `Cast(x) -> y`, attribute `dst_type`: each element converted as a C
/// cast converts it.
pub(crate) fn Cast(call: &Call<'_>) -> Result<Written, AclError> {
    call.expect(1, 1)?;
    let out = call.out(0);
    if let Some(t) = call.attr_type("dst_type")?
        && t != out.dtype
    {
        return Err(AclError::OP_TYPE_NOT_MATCH);
    }
    let x = call.tensor(0)?;
    same_count(call.spec(0)?, out)?;
    Ok(vec![
        Tensor::from_nums(out.dtype, out.dims.clone(), x.nums()).bytes,
    ])
}

/// `Identity(x) -> y`: a copy.
pub(crate) fn Identity(call: &Call<'_>) -> Result<Written, AclError> {
    call.expect(1, 1)?;
    let x = call.tensor(0)?;
    if x.dtype != call.out(0).dtype {
        return Err(AclError::OP_TYPE_NOT_MATCH);
    }
    same_count(call.spec(0)?, call.out(0))?;
    Ok(vec![x.bytes])
}

/// `Range(start, limit, delta) -> y`: `start + i·delta` for each `i` of
/// `y`.
pub(crate) fn Range(call: &Call<'_>) -> Result<Written, AclError> {
    call.expect(3, 1)?;
    let (start, limit, delta) = (call.scalar(0)?, call.scalar(1)?, call.scalar(2)?);
    let out = call.out(0);
    if out.dims.len() != 1 || !delta.truthy() {
        return Err(AclError::INVALID_PARAM);
    }
    let count = out.dims[0];
    let expected = ((limit.f64() - start.f64()) / delta.f64()).ceil().max(0.0);
    if expected as usize != count {
        return Err(AclError::OP_OUTPUT_NOT_MATCH);
    }
    let nums = (0..count).map(|i| match (start, delta) {
        (Num::I(s), Num::I(d)) => Num::I(s + d * i as i64),
        _ => Num::F(start.f64() + delta.f64() * i as f64),
    });
    Ok(vec![
        Tensor::from_nums(out.dtype, out.dims.clone(), nums).bytes,
    ])
}
