//! Random fills (`aclnnInplaceNormal`, `aclnnInplaceUniform` and their
//! captured forms) written through device memory a chunk at a time, in
//! bands per core: each band seeks the stream to its first element (the
//! stream's words per element are fixed), so the values are those of the
//! operator path's `StatelessRandomNormalV2` / `StatelessRandomUniformV2`
//! for the same key and counter, whatever the split, with O(chunk) host
//! memory where the general path held the whole tensor in `f64`.

use aclmem_core::AclError;
use rand_chacha::ChaCha8Rng;

use super::View;
use super::memory::Memory;
use super::stream::{BAND, CHUNK, in_bands, start};
use crate::kernels::{generator, standard_normal, unit, words_per_element};
use crate::tensor::Num;

/// `out` = normal values (mean `a`, standard deviation `b`) or uniform ones
/// in `[a, b)`, from the stream of `seed` and `offset`; `None` when `out`
/// is not a contiguous floating tensor (the caller takes the general path).
pub(super) fn fill(
    normal: bool,
    a: f64,
    b: f64,
    seed: i64,
    offset: i64,
    out: &View,
    mem: &dyn Memory,
) -> Option<Result<(), AclError>> {
    if !out.is_contiguous() || !out.dtype.is_float() {
        return None;
    }
    let dtype = out.dtype;
    let size = dtype.size();
    let to = start(out);
    Some(in_bands(out.numel(), BAND, |band| {
        let mut rng: ChaCha8Rng = generator([seed, offset, 0]);
        rng.set_word_pos(words_per_element(normal) * band.start as u128);
        let mut bytes = vec![0u8; CHUNK.min(band.len()) * size];
        let mut done = band.start;
        while done < band.end {
            let k = CHUNK.min(band.end - done);
            for slot in bytes[..k * size].chunks_exact_mut(size) {
                let v = if normal {
                    a + b * standard_normal(&mut rng)
                } else {
                    a + (b - a) * unit(&mut rng)
                };
                dtype.put(Num::F(v), slot);
                // A narrow type may round a uniform value up to `b`: keep
                // `[a, b)`.
                if !normal && dtype.get(slot).f64() >= b {
                    dtype.put(Num::F(a), slot);
                }
            }
            mem.write(to + done * size, &bytes[..k * size])?;
            done += k;
        }
        Ok(())
    }))
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;
    use crate::aclnn::plan::{Kind, Plan};
    use crate::aclnn::testing::Flat;
    use crate::tensor::DType;

    /// The operator path's values: the kernel on host memory, as the
    /// general path computed them before this module.
    fn kernel_values(normal: bool, seed: i64, offset: i64, n: usize) -> Vec<f64> {
        let mut rng = generator([seed, offset, 0]);
        (0..n)
            .map(|_| {
                if normal {
                    standard_normal(&mut rng)
                } else {
                    unit(&mut rng)
                }
            })
            .collect()
    }

    #[test]
    fn streamed_values_are_the_operator_paths_across_bands() {
        // More than two bands in float32, so that two cores split and
        // seek; a chunk and more in the other types.
        for normal in [true, false] {
            for dtype in [DType::F32, DType::F16, DType::F64] {
                let n = if dtype == DType::F32 {
                    2 * BAND + 7
                } else {
                    CHUNK + 7
                };
                let mem = Flat(Mutex::new(vec![0u8; n * dtype.size()]));
                let out = View::contiguous_at(dtype, vec![n], 0);
                let (a, b) = if normal { (1.0, 2.0) } else { (-3.0, 5.0) };
                let kind = Kind::Random {
                    normal,
                    a,
                    b,
                    seed: Some(42),
                    offset: 7,
                };
                let plan = Plan::new("aclnnInplaceX", kind, Vec::new(), out).unwrap();
                plan.run(&mem).unwrap();
                let want = kernel_values(normal, 42, 7, n);
                let m = mem.0.lock().unwrap();
                for i in [0, 1, CHUNK - 1, CHUNK, CHUNK + 1, n / 2, n - 1] {
                    let v = if normal {
                        a + b * want[i]
                    } else {
                        a + (b - a) * want[i]
                    };
                    let mut expect = dtype.bytes_of(Num::F(v));
                    if !normal && dtype.get(&expect).f64() >= b {
                        expect = dtype.bytes_of(Num::F(a));
                    }
                    let s = dtype.size();
                    assert_eq!(
                        &m[i * s..(i + 1) * s],
                        &expect[..],
                        "{normal} {dtype:?} at {i}"
                    );
                }
            }
        }
    }
}
