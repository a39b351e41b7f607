//! Strided copies against the element-by-element definition.

use std::sync::Mutex;

use super::*;
use crate::aclnn::testing::Flat;
use crate::tensor::DType;

/// `n` float32 source elements (element `i` is `i`, exact in float32 up to
/// 2^24) then room for `n` elements of the output, poisoned.
fn memory(n: usize) -> Flat {
    let mut m: Vec<u8> = (0..n).flat_map(|i| (i as f32).to_ne_bytes()).collect();
    m.extend(std::iter::repeat_n(0xAB, n * 8 + 64));
    Flat(Mutex::new(m))
}

fn view(dims: &[usize], strides: &[usize], offset: usize, n: usize) -> View {
    View {
        dtype: DType::F32,
        dims: dims.to_vec(),
        strides: strides.to_vec(),
        offset,
        format: 2,
        data: 0,
        storage: n,
        complex: false,
    }
}

/// Copies `a` into a contiguous output of `to` after the source and checks
/// every element against the view's definition, and the byte after the
/// last untouched.
fn check(a: View, to: DType, n: usize) {
    let mem = memory(n);
    let out = View::contiguous_at(to, a.dims.clone(), n * 4);
    copy(&a, &out, &mem)
        .expect("a form of this module")
        .unwrap();
    let m = mem.0.lock().unwrap();
    let count = a.numel();
    let mut index = vec![0usize; a.dims.len()];
    for k in 0..count {
        let at: usize = a.offset
            + index
                .iter()
                .zip(&a.strides)
                .map(|(i, s)| i * s)
                .sum::<usize>();
        let got = to
            .get(&m[n * 4 + k * to.size()..n * 4 + (k + 1) * to.size()])
            .f64();
        let want = to.get(&to.bytes_of(crate::tensor::Num::F(at as f64))).f64();
        assert_eq!(
            got, want,
            "element {k} ({index:?}) of {:?} / {:?}",
            a.dims, a.strides
        );
        for d in (0..index.len()).rev() {
            index[d] += 1;
            if index[d] < a.dims[d] {
                break;
            }
            index[d] = 0;
        }
    }
    assert_eq!(
        m[n * 4 + count * to.size()],
        0xAB,
        "nothing past the output"
    );
}

#[test]
fn transposes_are_copied_tile_by_tile_in_every_type() {
    // A 700 x 600 matrix transposed: tiles at the edges are partial.
    let n = 700 * 600;
    for to in [DType::F32, DType::F16, DType::Bf16, DType::F64] {
        check(view(&[600, 700], &[1, 600], 0, n), to, n);
    }
}

#[test]
fn batched_transposes_and_permutations_with_offsets() {
    let n = 3 * 50 * 40 + 5;
    // permute(0, 2, 1) of [3, 50, 40], from element 5.
    check(view(&[3, 40, 50], &[2000, 1, 40], 5, n), DType::F32, n);
    // permute(1, 0, 2) of [50, 3, 40]: rows of 40 in another order.
    check(view(&[3, 50, 40], &[40, 120, 1], 5, n), DType::F32, n);
    // A size-1 dimension in between merges away.
    check(
        view(&[3, 1, 40, 50], &[2000, 7, 1, 40], 0, n),
        DType::F16,
        n,
    );
}

#[test]
fn slices_are_copied_a_tile_of_rows_at_a_time() {
    // Columns 10..90 of a 500 x 100 matrix.
    let n = 500 * 100;
    check(view(&[500, 80], &[100, 1], 10, n), DType::F32, n);
    check(view(&[500, 80], &[100, 1], 10, n), DType::Bf16, n);
}

#[test]
fn large_transposes_split_into_bands_match() {
    // More than two bands' worth of tiles, so that two cores split it.
    let (r, c) = (2048, 2100);
    let n = r * c;
    check(view(&[c, r], &[1, c], 0, n), DType::F32, n);
}

#[test]
fn other_views_take_the_general_path() {
    let mem = memory(100);
    let out = View::contiguous_at(DType::F32, vec![4, 5], 400);
    // No contiguous dimension among the last two.
    assert!(copy(&view(&[4, 5], &[10, 2], 0, 100), &out, &mem).is_none());
    // Rows too short to be worth a read each.
    assert!(copy(&view(&[4, 5], &[20, 1], 0, 100), &out, &mem).is_none());
    // One dimension.
    let out = View::contiguous_at(DType::F32, vec![40], 400);
    assert!(copy(&view(&[40], &[2], 0, 100), &out, &mem).is_none());
}
