//! Matrix products on the CPU, through the `gemm` crate (a kept, fast
//! kernel library), behind one safe function that checks every view
//! against its slice: the only `unsafe` of the compute kernels.
//!
//! Products are computed in `f32` (the inputs of half-precision operators
//! are widened first, and the result rounded once, as the NPU's cube unit
//! accumulates in fp32) or `f64`.
//!
//! A large product is split into bands of the output's rows (or columns),
//! one per core, each computed by `gemm` on a thread of its own
//! ([`crate::parallel`]: no thread pool, which would not survive a fork).

use aclmem_core::AclError;

use crate::parallel;

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
    pub(crate) fn fits(&self, len: usize) -> bool {
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

    /// Whether no two elements of the view are one element of the slice:
    /// one stride steps over the whole extent of the other dimension.
    /// Bands of such a view's rows (or columns) are disjoint.
    pub(crate) fn injective(&self) -> bool {
        let span = |n: usize, stride: usize| (n.saturating_sub(1)).saturating_mul(stride);
        (self.col_stride >= 1 && self.row_stride > span(self.cols, self.col_stride))
            || (self.row_stride >= 1 && self.col_stride > span(self.rows, self.row_stride))
            || self.rows <= 1 && (self.cols <= 1 || self.col_stride >= 1)
            || self.cols <= 1 && self.row_stride >= 1
    }

    /// Rows `start..start + rows` of the view.
    pub(crate) fn row_band(self, start: usize, rows: usize) -> View {
        View {
            rows,
            offset: self.offset + start * self.row_stride,
            ..self
        }
    }

    fn strides(&self) -> Option<(isize, isize)> {
        Some((
            isize::try_from(self.col_stride).ok()?,
            isize::try_from(self.row_stride).ok()?,
        ))
    }
}

/// An element type `gemm` multiplies here.
pub trait Element: Copy + Default + Send + Sync + 'static {
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
    d.strides().ok_or(AclError::INVALID_PARAM)?;
    av.strides().ok_or(AclError::INVALID_PARAM)?;
    bv.strides().ok_or(AclError::INVALID_PARAM)?;
    // Split along the longer side of the output, into bands of at least
    // `MIN_BAND` rows or columns, each worth at least `MIN_WORK` products.
    let (long, work) = (m.max(n), m.saturating_mul(n).saturating_mul(k));
    let parts = if d.injective() {
        parallel::parts(long, MIN_BAND).min(work / MIN_WORK).max(1)
    } else {
        1
    };
    let dst = Shared(dst.as_mut_ptr());
    parallel::bands(long, parts, |r| {
        let (d, av, bv) = if m >= n {
            (
                d.row_band(r.start, r.len()),
                av.row_band(r.start, r.len()),
                bv,
            )
        } else {
            let t = |v: View| v.t().row_band(r.start, r.len()).t();
            (t(d), av, t(bv))
        };
        // SAFETY: `d`, `av` and `bv` are bands of views checked above to lie
        // inside their slices (a band names a subset of its view's
        // elements); `dst`'s slice outlives the bands, which are joined
        // before `bands` returns; the bands of `d` are disjoint (`injective`,
        // or one band only), so no two threads write one element, and no
        // thread reads `dst` except its own band's elements (when
        // accumulating); `a` and `b` are only read.
        unsafe { product(dst, d, a, av, b, bv, accumulate) }
    });
    Ok(())
}

/// Products below this many multiply-adds stay on the calling thread.
pub(crate) const MIN_WORK: usize = 1 << 21;

/// A band is at least this many rows or columns of the output.
const MIN_BAND: usize = 32;

/// The output's first element, shared by the threads of one product.
#[derive(Clone, Copy)]
struct Shared<T>(*mut T);

// SAFETY: the threads of one product write disjoint bands through it
// (see `gemm`), and the slice it points into outlives them.
unsafe impl<T: Send> Send for Shared<T> {}
// SAFETY: as above; the pointer itself is only copied.
unsafe impl<T: Send> Sync for Shared<T> {}

/// One band of a product, by `gemm`.
///
/// # Safety
///
/// Every element `d`, `av` and `bv` name lies inside `dst`'s slice, `a`
/// and `b` respectively; no other thread reads or writes `d`'s elements of
/// `dst` meanwhile; the views' strides fit `isize`.
unsafe fn product<T: Element>(
    dst: Shared<T>,
    d: View,
    a: &[T],
    av: View,
    b: &[T],
    bv: View,
    accumulate: bool,
) {
    let (m, k, n) = (av.rows, av.cols, bv.cols);
    if m == 0 || n == 0 {
        return;
    }
    let strides = |v: View| v.strides().unwrap_or((0, 0));
    let ((d_cs, d_rs), (a_cs, a_rs), (b_cs, b_rs)) = (strides(d), strides(av), strides(bv));
    // SAFETY: the caller's conditions: every element each view names lies
    // inside its slice, and this thread alone touches `d`'s elements. `gemm`
    // reads `a` and `b` and writes `dst` only at the elements the views
    // name; with `read_dst` false it never reads `dst`.
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            dst.0.add(d.offset),
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
    fn products_split_into_bands_match_the_definition() {
        // Worth splitting (more than `MIN_WORK` multiply-adds), along the
        // rows (tall) and along the columns (wide), into a dense and a
        // transposed (column-major) output, accumulating and not.
        for (m, k, n) in [(300, 90, 100), (90, 100, 300)] {
            assert!(m * n * k > MIN_WORK);
            let a: Vec<f64> = (0..m * k)
                .map(|i| f64::from((i % 13) as u32) - 6.0)
                .collect();
            let b: Vec<f64> = (0..k * n)
                .map(|i| f64::from((i % 7) as u32) * 0.5)
                .collect();
            let (av, bv) = (View::dense(m, k, 0), View::dense(k, n, 0));
            let want = naive(&a, av, &b, bv);
            for d in [View::dense(m, n, 0), View::dense(n, m, 0).t()] {
                let mut dst = vec![1.0; m * n];
                gemm(&mut dst, d, &a, av, &b, bv, true).unwrap();
                for r in 0..m {
                    for c in 0..n {
                        let got = dst[d.offset + r * d.row_stride + c * d.col_stride];
                        assert_eq!(got, want[r * n + c] + 1.0, "({r}, {c}) of {d:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn only_views_without_aliases_are_split() {
        assert!(View::dense(4, 5, 0).injective());
        assert!(View::dense(4, 5, 0).t().injective());
        assert!(View::dense(1, 5, 3).injective());
        let aliased = View {
            row_stride: 0,
            ..View::dense(4, 5, 0)
        };
        assert!(!aliased.injective());
        let overlapping = View {
            row_stride: 3,
            ..View::dense(4, 5, 0)
        };
        assert!(!overlapping.injective());
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
