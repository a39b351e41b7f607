//! Index arithmetic the kernels share: broadcasting two shapes, the
//! element an output index reads of a broadcast input, walks over strided
//! views, and the strides of a contiguous tensor.

use super::call::*;

/// The broadcast of two shapes (NumPy's rule), or 100021.
pub(super) fn broadcast(a: &[usize], b: &[usize]) -> Result<Vec<usize>, AclError> {
    let n = a.len().max(b.len());
    (0..n)
        .map(|i| {
            let x = if i + a.len() >= n {
                a[i + a.len() - n]
            } else {
                1
            };
            let y = if i + b.len() >= n {
                b[i + b.len() - n]
            } else {
                1
            };
            match (x, y) {
                (x, y) if x == y => Ok(x),
                (1, y) => Ok(y),
                (x, 1) => Ok(x),
                _ => Err(AclError::OP_INPUT_NOT_MATCH),
            }
        })
        .collect()
}

/// For each element of `out` (row-major), the flat index of the element of
/// a tensor of shape `dims` broadcast to it.
pub(super) fn broadcast_index(dims: &[usize], out: &[usize]) -> impl Iterator<Item = usize> {
    let n = out.len();
    let mut strides = vec![0usize; n];
    let mut s = 1;
    for (k, &d) in dims.iter().enumerate().rev() {
        let at = k + n - dims.len();
        strides[at] = if d == 1 { 0 } else { s };
        s *= d;
    }
    Strided::new(out.to_vec(), strides, 0)
}

/// Walks a shape row-major, yielding `offset + Σ index_k·stride_k`.
pub(super) struct Strided {
    dims: Vec<usize>,
    strides: Vec<usize>,
    index: Vec<usize>,
    at: usize,
    left: usize,
}

impl Strided {
    pub(super) fn new(dims: Vec<usize>, strides: Vec<usize>, offset: usize) -> Strided {
        let left = dims.iter().product();
        Strided {
            index: vec![0; dims.len()],
            dims,
            strides,
            at: offset,
            left,
        }
    }
}

impl Iterator for Strided {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let here = self.at;
        for k in (0..self.dims.len()).rev() {
            self.index[k] += 1;
            self.at += self.strides[k];
            if self.index[k] < self.dims[k] {
                break;
            }
            self.at -= self.strides[k] * self.dims[k];
            self.index[k] = 0;
        }
        Some(here)
    }
}

/// Row-major strides of a shape.
pub(super) fn contiguous_strides(dims: &[usize]) -> Vec<usize> {
    let mut strides = vec![0; dims.len()];
    let mut s = 1;
    for (k, &d) in dims.iter().enumerate().rev() {
        strides[k] = s;
        s *= d;
    }
    strides
}
