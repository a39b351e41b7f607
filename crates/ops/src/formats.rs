//! The NPU's private storage formats: how a tensor of a logical shape is
//! laid out in them, padded, and converted from and to its plain
//! (row-major) layout. An operand whose descriptor names one of these as
//! its storage format is converted to plain for the kernels and back when
//! written, so every kernel accepts them (docs/operators.md).
//!
//! The storage shapes are torch_npu's (`FormatHelper`, which allocates
//! them): with `c0 = 16` blocks of channels,
//! * `FRACTAL_NZ` (29) of `[.., m, n]`: `[.., ceil(n/C0), ceil(m/16), 16,
//!   C0]`, `C0` 16 for 2- and 4-byte types, 32 for 1-byte ones;
//! * `NC1HWC0` (3) of `[N, C, H, W]`: `[N, ceil(C/16), H, W, 16]`;
//! * `FRACTAL_Z` (4) of `[N, C, H, W]`: `[ceil(C/16)·H·W, ceil(N/16), 16,
//!   16]`;
//! * `NDC1HWC0` (32) of `[N, C, D, H, W]`: `[N, D, ceil(C/16), H, W, 16]`;
//! * `FRACTAL_Z_3D` (33) of `[N, C, D, H, W]`: `[D·ceil(C/16)·H·W,
//!   ceil(N/16), 16, 16]`.
//!
//! Shapes of fewer dimensions are first expanded as torch_npu does (to
//! `[1, C, H, W]` forms; `[m, n]` from a vector). Padding is zero.

use aclmem_core::AclError;

/// `ACL_FORMAT_NC1HWC0`.
pub const NC1HWC0: i32 = 3;
/// `ACL_FORMAT_FRACTAL_Z`.
pub const FRACTAL_Z: i32 = 4;
/// `ACL_FORMAT_FRACTAL_NZ`.
pub const FRACTAL_NZ: i32 = 29;
/// `ACL_FORMAT_NDC1HWC0`.
pub const NDC1HWC0: i32 = 32;
/// `ACL_FORMAT_FRACTAL_Z_3D`.
pub const FRACTAL_Z_3D: i32 = 33;

/// Whether `format` is a private format this module converts.
pub fn is_private(format: i32) -> bool {
    matches!(
        format,
        NC1HWC0 | FRACTAL_Z | FRACTAL_NZ | NDC1HWC0 | FRACTAL_Z_3D
    )
}

fn up(x: usize, to: usize) -> usize {
    x.div_ceil(to)
}

/// `[N, C, H, W]` of a shape of at most 4 dims (torch_npu's
/// `InferShapeLessTo4`).
fn nchw(dims: &[usize]) -> Result<[usize; 4], AclError> {
    Ok(match *dims {
        [] => [1, 1, 1, 1],
        [c] => [1, c, 1, 1],
        [c, h] => [1, c, h, 1],
        [c, h, w] => [1, c, h, w],
        [n, c, h, w] => [n, c, h, w],
        _ => return Err(AclError::FORMAT_NOT_MATCH),
    })
}

fn ncdhw(dims: &[usize]) -> Result<[usize; 5], AclError> {
    match *dims {
        [n, c, d, h, w] => Ok([n, c, d, h, w]),
        _ => Err(AclError::FORMAT_NOT_MATCH),
    }
}

/// `C0` of `FRACTAL_NZ` for elements of `size` bytes.
fn nz_c0(size: usize) -> usize {
    32 / size.min(2)
}

/// The storage shape of a tensor of logical `dims` in `format`.
pub fn storage_dims(format: i32, dims: &[usize], size: usize) -> Result<Vec<usize>, AclError> {
    Ok(match format {
        FRACTAL_NZ => {
            let (batch, m, n) = matrix(dims)?;
            let c0 = nz_c0(size);
            let mut s = batch.to_vec();
            s.extend([up(n, c0), up(m, 16), 16, c0]);
            s
        }
        NC1HWC0 => {
            let [n, c, h, w] = nchw(dims)?;
            vec![n, up(c, 16), h, w, 16]
        }
        FRACTAL_Z => {
            let [n, c, h, w] = nchw(dims)?;
            vec![up(c, 16) * h * w, up(n, 16), 16, 16]
        }
        NDC1HWC0 => {
            let [n, c, d, h, w] = ncdhw(dims)?;
            vec![n, d, up(c, 16), h, w, 16]
        }
        FRACTAL_Z_3D => {
            let [n, c, d, h, w] = ncdhw(dims)?;
            vec![d * up(c, 16) * h * w, up(n, 16), 16, 16]
        }
        _ => return Err(AclError::FORMAT_NOT_MATCH),
    })
}

/// The batch dims, rows and columns of a matrix (a vector is one column).
fn matrix(dims: &[usize]) -> Result<(&[usize], usize, usize), AclError> {
    match dims {
        [] => Ok((&[], 1, 1)),
        [n] => Ok((&[], *n, 1)),
        [batch @ .., m, n] => Ok((batch, *m, *n)),
    }
}

/// For each element of the logical tensor, in row-major order, its index
/// in the storage (elements).
fn placement(format: i32, dims: &[usize], size: usize) -> Result<Vec<usize>, AclError> {
    let total: usize = dims.iter().product();
    let mut out = Vec::with_capacity(total);
    match format {
        FRACTAL_NZ => {
            let (batch, m, n) = matrix(dims)?;
            let c0 = nz_c0(size);
            let (n1, m1) = (up(n, c0), up(m, 16));
            let per = n1 * m1 * 16 * c0;
            let batches: usize = batch.iter().product();
            for b in 0..batches {
                for i in 0..m {
                    for j in 0..n {
                        out.push(b * per + (((j / c0) * m1 + i / 16) * 16 + i % 16) * c0 + j % c0);
                    }
                }
            }
        }
        NC1HWC0 => {
            let [n, c, h, w] = nchw(dims)?;
            let c1 = up(c, 16);
            for a in 0..n {
                for ch in 0..c {
                    for y in 0..h {
                        for x in 0..w {
                            out.push(((((a * c1 + ch / 16) * h + y) * w + x) * 16) + ch % 16);
                        }
                    }
                }
            }
        }
        FRACTAL_Z | FRACTAL_Z_3D => {
            let [n, c, d, h, w] = if format == FRACTAL_Z {
                let [n, c, h, w] = nchw(dims)?;
                [n, c, 1, h, w]
            } else {
                ncdhw(dims)?
            };
            let (c1, n1) = (up(c, 16), up(n, 16));
            for co in 0..n {
                for ci in 0..c {
                    for z in 0..d {
                        for y in 0..h {
                            for x in 0..w {
                                let row = ((z * c1 + ci / 16) * h + y) * w + x;
                                out.push(((row * n1 + co / 16) * 16 + co % 16) * 16 + ci % 16);
                            }
                        }
                    }
                }
            }
        }
        NDC1HWC0 => {
            let [n, c, d, h, w] = ncdhw(dims)?;
            let c1 = up(c, 16);
            for a in 0..n {
                for ch in 0..c {
                    for z in 0..d {
                        for y in 0..h {
                            for x in 0..w {
                                out.push(
                                    ((((a * d + z) * c1 + ch / 16) * h + y) * w + x) * 16 + ch % 16,
                                );
                            }
                        }
                    }
                }
            }
        }
        _ => return Err(AclError::FORMAT_NOT_MATCH),
    }
    Ok(out)
}

/// The plain (row-major) bytes of a tensor of logical `dims` stored in
/// `format` as `storage`.
pub fn to_plain(
    format: i32,
    dims: &[usize],
    size: usize,
    storage: &[u8],
) -> Result<Vec<u8>, AclError> {
    let places = placement(format, dims, size)?;
    let mut plain = Vec::with_capacity(places.len() * size);
    for p in places {
        let at = p * size;
        plain.extend_from_slice(storage.get(at..at + size).ok_or(AclError::INVALID_PARAM)?);
    }
    Ok(plain)
}

/// The storage bytes in `format` (padding zero) of a tensor of logical
/// `dims` whose plain bytes are `plain`.
pub fn from_plain(
    format: i32,
    dims: &[usize],
    size: usize,
    plain: &[u8],
) -> Result<Vec<u8>, AclError> {
    let storage: usize = storage_dims(format, dims, size)?.iter().product();
    let mut out = vec![0u8; storage * size];
    for (k, p) in placement(format, dims, size)?.into_iter().enumerate() {
        let src = plain
            .get(k * size..(k + 1) * size)
            .ok_or(AclError::INVALID_PARAM)?;
        out[p * size..(p + 1) * size].copy_from_slice(src);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn storage_shapes_are_torch_npus() {
        assert_eq!(
            storage_dims(FRACTAL_NZ, &[33, 20], 2).unwrap(),
            [2, 3, 16, 16]
        );
        assert_eq!(
            storage_dims(FRACTAL_NZ, &[2, 5, 40], 1).unwrap(),
            [2, 2, 1, 16, 32]
        );
        assert_eq!(
            storage_dims(NC1HWC0, &[2, 17, 3, 3], 4).unwrap(),
            [2, 2, 3, 3, 16]
        );
        assert_eq!(
            storage_dims(FRACTAL_Z, &[20, 17, 3, 3], 4).unwrap(),
            [18, 2, 16, 16]
        );
        assert_eq!(
            storage_dims(NDC1HWC0, &[1, 3, 2, 4, 4], 2).unwrap(),
            [1, 2, 1, 4, 4, 16]
        );
        assert_eq!(
            storage_dims(FRACTAL_Z_3D, &[4, 3, 2, 1, 1], 2).unwrap(),
            [2, 1, 16, 16]
        );
        assert_eq!(
            storage_dims(NC1HWC0, &[1, 2, 3, 4, 5], 4),
            Err(AclError::FORMAT_NOT_MATCH)
        );
    }

    #[test]
    fn an_nz_element_lands_in_its_fractal_and_back() {
        // [m=18, n=20] of 2-byte elements: C0 16; element (17, 19) is in
        // column block 1, row block 1, row 1, column 3.
        let dims = [18, 20];
        let plain: Vec<u8> = (0..18 * 20u16).flat_map(u16::to_le_bytes).collect();
        let nz = from_plain(FRACTAL_NZ, &dims, 2, &plain).unwrap();
        assert_eq!(nz.len(), 2 * 2 * 16 * 16 * 2);
        // [column block 1][row block 1 of 2][row 1][column 3].
        let (n1, m1, row, col, m_blocks) = (1, 1, 1, 3, 2);
        let at = ((n1 * m_blocks + m1) * 16 + row) * 16 + col;
        assert_eq!(
            u16::from_le_bytes([nz[at * 2], nz[at * 2 + 1]]),
            17 * 20 + 19
        );
        assert_eq!(to_plain(FRACTAL_NZ, &dims, 2, &nz).unwrap(), plain);
    }

    #[test]
    fn every_format_round_trips_and_pads_with_zeros() {
        for (format, dims) in [
            (FRACTAL_NZ, vec![3, 18, 33]),
            (NC1HWC0, vec![2, 19, 3, 2]),
            (FRACTAL_Z, vec![17, 18, 2, 3]),
            (NDC1HWC0, vec![2, 17, 2, 2, 3]),
            (FRACTAL_Z_3D, vec![17, 3, 2, 2, 2]),
        ] {
            let n: usize = dims.iter().product();
            let plain: Vec<u8> = (0..n as u32).flat_map(|v| (v + 1).to_le_bytes()).collect();
            let stored = from_plain(format, &dims, 4, &plain).unwrap();
            let slots: usize = storage_dims(format, &dims, 4).unwrap().iter().product();
            assert_eq!(stored.len(), slots * 4, "{format}");
            let nonzero = stored.chunks(4).filter(|c| c != &[0, 0, 0, 0]).count();
            assert_eq!(nonzero, n, "{format}: every element once, the rest padding");
            assert_eq!(
                to_plain(format, &dims, 4, &stored).unwrap(),
                plain,
                "{format}"
            );
        }
    }
}
