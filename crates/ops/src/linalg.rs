//! Matrix products on the CPU, through the `gemm` crate (a kept, fast
//! kernel library), behind one safe function that checks every view
//! against its slice: the only `unsafe` of the compute kernels.
//!
//! Products are computed in `f32` (the inputs of half-precision operators
//! are widened first, and the result rounded once, as the NPU's cube unit
//! accumulates in fp32) or `f64`. Single-threaded: the emulated library
//! lives in programs that fork, and a thread pool does not survive a fork.

use aclmem_core::AclError;

/// A row-major matrix view of a slice: `rows × cols` elements, element
/// `(r, c)` at `offset + r * row_stride + c * col_stride` (a transposed
/// view swaps the strides).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct View {
    /// Rows.
    pub rows: usize,
    /// Columns.
    pub cols: usize,
    /// Where element (0, 0) is.
    pub offset: usize,
    /// Elements from one row to the next.
    pub row_stride: usize,
    /// Elements from one column to the next.
    pub col_stride: usize,
}

impl View {
    /// A contiguous `rows × cols` matrix at `offset`.
    pub fn dense(rows: usize, cols: usize, offset: usize) -> View {
        View {
            rows,
            cols,
            offset,
            row_stride: cols,
            col_stride: 1,
        }
    }

    /// The same elements, transposed.
    pub fn t(self) -> View {
        View {
            rows: self.cols,
            cols: self.rows,
            row_stride: self.col_stride,
            col_stride: self.row_stride,
            ..self
        }
    }

    /// Whether every element lies in a slice of `len` elements.
    fn fits(&self, len: usize) -> bool {
        if self.rows == 0 || self.cols == 0 {
            return true;
        }
        let last = (self.rows - 1)
            .checked_mul(self.row_stride)
            .and_then(|r| (self.cols - 1).checked_mul(self.col_stride).map(|c| (r, c)))
            .and_then(|(r, c)| r.checked_add(c))
            .and_then(|rc| rc.checked_add(self.offset));
        last.is_some_and(|l| l < len)
    }

    fn strides(&self) -> Option<(isize, isize)> {
        Some((
            isize::try_from(self.col_stride).ok()?,
            isize::try_from(self.row_stride).ok()?,
        ))
    }
}

/// An element type `gemm` multiplies here.
pub trait Element: Copy + Default + 'static {
    /// Zero.
    const ZERO: Self;
    /// One.
    const ONE: Self;
}

impl Element for f32 {
    const ZERO: f32 = 0.0;
    const ONE: f32 = 1.0;
}

impl Element for f64 {
    const ZERO: f64 = 0.0;
    const ONE: f64 = 1.0;
}

/// `dst = a · b`, or `dst += a · b` when `accumulate`: `a` is `m × k`,
/// `b` is `k × n`, `dst` is `m × n`. Views that do not fit their slices, or
/// shapes that do not agree, are `ACL_ERROR_INVALID_PARAM`; `dst` must not
/// overlap the inputs (it is a separate slice).
pub fn gemm<T: Element>(
    dst: &mut [T],
    d: View,
    a: &[T],
    av: View,
    b: &[T],
    bv: View,
    accumulate: bool,
) -> Result<(), AclError> {
    let (m, k, n) = (av.rows, av.cols, bv.cols);
    if bv.rows != k || d.rows != m || d.cols != n {
        return Err(AclError::INVALID_PARAM);
    }
    if !(d.fits(dst.len()) && av.fits(a.len()) && bv.fits(b.len())) {
        return Err(AclError::INVALID_PARAM);
    }
    if m == 0 || n == 0 {
        return Ok(());
    }
    if k == 0 {
        if !accumulate {
            for r in 0..m {
                for c in 0..n {
                    dst[d.offset + r * d.row_stride + c * d.col_stride] = T::ZERO;
                }
            }
        }
        return Ok(());
    }
    let ((d_cs, d_rs), (a_cs, a_rs), (b_cs, b_rs)) = (
        d.strides().ok_or(AclError::INVALID_PARAM)?,
        av.strides().ok_or(AclError::INVALID_PARAM)?,
        bv.strides().ok_or(AclError::INVALID_PARAM)?,
    );
    // SAFETY: every element each view names lies inside its slice (`fits`,
    // checked above with overflow-checked arithmetic); `dst` is a unique
    // borrow, so it overlaps neither input; `gemm` reads `a` and `b` and
    // writes `dst` only at the elements the views name. With `read_dst`
    // false it never reads `dst`.
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            dst.as_mut_ptr().add(d.offset),
            d_cs,
            d_rs,
            accumulate,
            a.as_ptr().add(av.offset),
            a_cs,
            a_rs,
            b.as_ptr().add(bv.offset),
            b_cs,
            b_rs,
            T::ONE,
            T::ONE,
            false,
            false,
            false,
            gemm::Parallelism::None,
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The product by definition, for reference.
    fn naive(a: &[f64], av: View, b: &[f64], bv: View) -> Vec<f64> {
        let at = |s: &[f64], v: View, r: usize, c: usize| {
            s[v.offset + r * v.row_stride + c * v.col_stride]
        };
        let mut out = vec![0.0; av.rows * bv.cols];
        for r in 0..av.rows {
            for c in 0..bv.cols {
                out[r * bv.cols + c] = (0..av.cols)
                    .map(|i| at(a, av, r, i) * at(b, bv, i, c))
                    .sum();
            }
        }
        out
    }

    #[test]
    fn products_of_views_and_transposes_match_the_definition() {
        let a: Vec<f64> = (0..12).map(|i| f64::from(i) - 5.0).collect();
        let b: Vec<f64> = (0..12).map(|i| f64::from(i * i % 7)).collect();
        // a as 3 × 4, b as 4 × 3; then a transposed (4 × 3 viewed as 3 × 4).
        for (av, bv) in [
            (View::dense(3, 4, 0), View::dense(4, 3, 0)),
            (View::dense(4, 3, 0).t(), View::dense(4, 3, 0)),
            (View::dense(3, 4, 0), View::dense(3, 4, 0).t()),
        ] {
            let mut dst = vec![7.0; 9];
            gemm(&mut dst, View::dense(3, 3, 0), &a, av, &b, bv, false).unwrap();
            assert_eq!(dst, naive(&a, av, &b, bv), "{av:?} {bv:?}");
            let mut acc = vec![1.0; 9];
            gemm(&mut acc, View::dense(3, 3, 0), &a, av, &b, bv, true).unwrap();
            let want: Vec<f64> = naive(&a, av, &b, bv).iter().map(|x| x + 1.0).collect();
            assert_eq!(acc, want);
        }
    }

    #[test]
    fn views_that_leave_their_slices_are_refused() {
        let a = vec![1.0f32; 6];
        let mut dst = vec![0.0f32; 4];
        let r = gemm(
            &mut dst,
            View::dense(2, 2, 0),
            &a,
            View::dense(2, 3, 1),
            &a,
            View::dense(3, 2, 0),
            false,
        );
        assert_eq!(r, Err(AclError::INVALID_PARAM));
        let r = gemm(
            &mut dst,
            View::dense(2, 2, 0),
            &a,
            View::dense(2, 3, 0),
            &a,
            View::dense(2, 2, 0),
            false,
        );
        assert_eq!(r, Err(AclError::INVALID_PARAM), "k disagrees");
    }
}
