//! A strided view copied into a contiguous tensor (what `contiguous()`
//! of a transposed or sliced tensor launches), tile by tile through device
//! memory: O(N) time and O(tile) host memory, where the general path
//! gathers the view's whole storage into host memory first.
//!
//! The view's dimensions are first merged where they are contiguous with
//! each other (size-1 dimensions dropped), which leaves the two forms that
//! matter:
//!
//! - **rows**: the last dimension is contiguous (a slice, a broadcast of
//!   whole rows, a permutation of the outer dimensions): each row is read
//!   whole, a tile of rows at a time;
//! - **transposes**: the second-to-last dimension is the contiguous one
//!   (`t()`, a permutation swapping the last two): a tile of `TILE × TILE`
//!   is read as `TILE` runs, transposed in host memory and written as
//!   `TILE` runs.
//!
//! Other views (no contiguous dimension among the last two, rows too short
//! to be worth a read each) take the general path.

use aclmem_core::AclError;
use bytemuck::Pod;

use super::View;
use super::memory::Memory;
use super::stream::{BAND, CHUNK, buffer, convert, in_bands, start};

/// A run shorter than this many elements is not worth a read of its own.
const MIN_RUN: usize = 32;

/// A transposed tile's side, in elements.
const TILE: usize = 512;

/// The view's dimensions and strides with size-1 dimensions dropped and
/// neighbours that are contiguous with each other merged.
fn merged(v: &View) -> (Vec<usize>, Vec<usize>) {
    let mut dims: Vec<usize> = Vec::new();
    let mut strides: Vec<usize> = Vec::new();
    for (&d, &s) in v.dims.iter().zip(&v.strides) {
        if d == 1 {
            continue;
        }
        match (dims.last_mut(), strides.last_mut()) {
            (Some(pd), Some(ps)) if *ps == s * d => {
                *pd *= d;
                *ps = s;
            }
            _ => {
                dims.push(d);
                strides.push(s);
            }
        }
    }
    (dims, strides)
}

/// How the view is read, tile by tile.
struct Tiling {
    /// The merged dimensions.
    dims: Vec<usize>,
    /// Their strides.
    strides: Vec<usize>,
    /// Whether the last dimension is the contiguous one (rows) or the one
    /// before it (a transpose).
    rows: bool,
}

impl Tiling {
    fn of(v: &View) -> Option<Tiling> {
        let (dims, strides) = merged(v);
        let r = dims.len();
        if r < 2 {
            // One run (contiguous, the streamed path's) or one stride.
            return None;
        }
        let rows = if strides[r - 1] == 1 && dims[r - 1] >= MIN_RUN {
            true
        } else if strides[r - 2] == 1 && dims[r - 2] >= MIN_RUN {
            false
        } else {
            return None;
        };
        Some(Tiling {
            dims,
            strides,
            rows,
        })
    }

    /// The dimensions that are not tiled.
    fn outer(&self) -> usize {
        self.dims.len() - if self.rows { 1 } else { 2 }
    }

    /// The input offset (elements from the view's first) of outer index
    /// `o` (row-major over the outer dimensions).
    fn outer_offset(&self, mut o: usize) -> usize {
        let mut at = 0;
        for d in (0..self.outer()).rev() {
            at += (o % self.dims[d]) * self.strides[d];
            o /= self.dims[d];
        }
        at
    }
}

/// One tile: `count` runs of `len` input elements each, run `k` at input
/// offset `input(k)`, laid out in the output as `rows` rows of `cols`
/// (the runs themselves, or their transpose), row `i` at output offset
/// `output(i)`.
struct Tile<'a> {
    count: usize,
    len: usize,
    input: &'a dyn Fn(usize) -> usize,
    transposed: bool,
    output: &'a dyn Fn(usize) -> usize,
}

/// `out = a` (converted to `out`'s type) for a strided `a` of `out`'s
/// shape, when `a` has one of the forms of this module; `None` otherwise.
pub(super) fn copy(a: &View, out: &View, mem: &dyn Memory) -> Option<Result<(), AclError>> {
    let tiling = Tiling::of(a)?;
    let r = tiling.dims.len();
    let outer: usize = tiling.dims[..tiling.outer()].iter().product();
    let (si, so) = (a.dtype.size(), out.dtype.size());
    let (from, to) = (start(a), start(out));
    let run = |tile: Tile<'_>, bufs: &mut Buffers| -> Result<(), AclError> {
        let n = tile.count * tile.len;
        let runs = &mut bytemuck::cast_slice_mut::<u64, u8>(&mut bufs.runs)[..n * si];
        for (k, chunk) in runs.chunks_exact_mut(tile.len * si).enumerate() {
            mem.read(from + (tile.input)(k) * si, chunk)?;
        }
        let laid = &mut bytemuck::cast_slice_mut::<u64, u8>(&mut bufs.tile)[..n * si];
        let (rows, cols) = if tile.transposed {
            transpose(si, runs, laid, tile.count, tile.len);
            (tile.len, tile.count)
        } else {
            laid.copy_from_slice(runs);
            (tile.count, tile.len)
        };
        let output = &mut bytemuck::cast_slice_mut::<u64, u8>(&mut bufs.output)[..n * so];
        convert(a.dtype, out.dtype, laid, output, &mut bufs.wide[..n]);
        // Rows that follow one another in the output are written at once.
        let mut i = 0;
        while i < rows {
            let mut k = i + 1;
            while k < rows && (tile.output)(k) == (tile.output)(i) + (k - i) * cols {
                k += 1;
            }
            let bytes = &output[i * cols * so..k * cols * so];
            mem.write(to + (tile.output)(i) * so, bytes)?;
            i = k;
        }
        Ok(())
    };
    if tiling.rows {
        // Tiles of whole rows (or of pieces of rows longer than a chunk).
        let np = tiling.dims[r - 1];
        let tp = np.min(CHUNK);
        let rows_per = (CHUNK / tp).max(1);
        let (bp, br) = (np.div_ceil(tp), outer.div_ceil(rows_per));
        let size = tp * rows_per;
        return Some(in_bands(br * bp, (BAND / size).max(1), |tiles| {
            let mut bufs = Buffers::new(size, si, so);
            for t in tiles {
                let (o0, p0) = ((t / bp) * rows_per, (t % bp) * tp);
                let (kr, kp) = (rows_per.min(outer - o0), tp.min(np - p0));
                let input = |k: usize| tiling.outer_offset(o0 + k) + p0;
                let output = |i: usize| (o0 + i) * np + p0;
                let tile = Tile {
                    count: kr,
                    len: kp,
                    input: &input,
                    transposed: false,
                    output: &output,
                };
                run(tile, &mut bufs)?;
            }
            Ok(())
        }));
    }
    // Transposes: tiles of `tp` elements of the contiguous dimension by
    // `tj` of the last, read as `tj` runs of `tp`.
    let (np, nj, stride_j) = (
        tiling.dims[r - 2],
        tiling.dims[r - 1],
        tiling.strides[r - 1],
    );
    let tp = np.min(TILE);
    let tj = nj.min((CHUNK / tp).max(TILE));
    let (bp, bj) = (np.div_ceil(tp), nj.div_ceil(tj));
    Some(in_bands(
        outer * bp * bj,
        (BAND / (tp * tj)).max(1),
        |tiles| {
            let mut bufs = Buffers::new(tp * tj, si, so);
            for t in tiles {
                let (o, rest) = (t / (bp * bj), t % (bp * bj));
                let (p0, j0) = ((rest / bj) * tp, (rest % bj) * tj);
                let (kp, kj) = (tp.min(np - p0), tj.min(nj - j0));
                let base = tiling.outer_offset(o);
                // Run k: kp elements of the contiguous dimension at column j0 + k.
                let input = |k: usize| base + p0 + (j0 + k) * stride_j;
                // Output element (o, p, j) is at o·np·nj + p·nj + j.
                let output = |i: usize| o * np * nj + (p0 + i) * nj + j0;
                let tile = Tile {
                    count: kj,
                    len: kp,
                    input: &input,
                    transposed: true,
                    output: &output,
                };
                run(tile, &mut bufs)?;
            }
            Ok(())
        },
    ))
}

/// One thread's buffers for tiles of up to `n` elements.
struct Buffers {
    runs: Vec<u64>,
    tile: Vec<u64>,
    output: Vec<u64>,
    wide: Vec<f32>,
}

impl Buffers {
    fn new(n: usize, si: usize, so: usize) -> Buffers {
        Buffers {
            runs: buffer(n * si),
            tile: buffer(n * si),
            output: buffer(n * so),
            wide: vec![0f32; n],
        }
    }
}

/// `dst` (`cols × rows`, row-major) = `src` (`rows × cols`) transposed,
/// for elements of `size` bytes.
fn transpose(size: usize, src: &[u8], dst: &mut [u8], rows: usize, cols: usize) {
    match size {
        1 => transpose_as::<u8>(src, dst, rows, cols),
        2 => transpose_as::<u16>(src, dst, rows, cols),
        4 => transpose_as::<u32>(src, dst, rows, cols),
        8 => transpose_as::<u64>(src, dst, rows, cols),
        _ => {
            for r in 0..rows {
                for c in 0..cols {
                    let (s, d) = ((r * cols + c) * size, (c * rows + r) * size);
                    dst[d..d + size].copy_from_slice(&src[s..s + size]);
                }
            }
        }
    }
}

/// [`transpose`] of elements of type `T`, in blocks that stay in cache.
fn transpose_as<T: Pod>(src: &[u8], dst: &mut [u8], rows: usize, cols: usize) {
    const BLOCK: usize = 32;
    let src: &[T] = bytemuck::cast_slice(src);
    let dst: &mut [T] = bytemuck::cast_slice_mut(dst);
    for r0 in (0..rows).step_by(BLOCK) {
        for c0 in (0..cols).step_by(BLOCK) {
            for r in r0..(r0 + BLOCK).min(rows) {
                for c in c0..(c0 + BLOCK).min(cols) {
                    dst[c * rows + r] = src[r * cols + c];
                }
            }
        }
    }
}

#[cfg(test)]
mod tests;
