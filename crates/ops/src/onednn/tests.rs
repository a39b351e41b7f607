//! oneDNN's bfloat16 products against their definition, on whatever kernel
//! the library picks here (so the driving of the library is tested on any
//! CPU that has it); `ACLMEM_TEST_REQUIRE_ONEDNN=1` (set by `cargo xtask
//! ci` on x86-64, which installs the library) makes its absence a failure.

use half::bf16;

use super::*;

/// The library, for these tests; `None` (said) where it is absent and not
/// required.
fn library() -> Option<Api> {
    match load(true) {
        Ok(api) => Some(api),
        Err(why) => {
            let required = std::env::var("ACLMEM_TEST_REQUIRE_ONEDNN").is_ok_and(|v| v == "1");
            assert!(!required, "oneDNN required here: {why}");
            eprintln!("oneDNN not tested: {why}");
            None
        }
    }
}

/// Deterministic bfloat16 values (exact small fractions), as raw bits.
fn values(n: usize, seed: usize) -> Vec<u16> {
    (0..n)
        .map(|i| bf16::from_f32(((i * 7 + seed * 13) % 23) as f32 / 8.0 - 1.375).to_bits())
        .collect()
}

/// `a · b` in `f64` of the views' elements.
fn definition(a: &[u16], av: View, b: &[u16], bv: View) -> Vec<f64> {
    let at = |s: &[u16], v: View, r: usize, c: usize| {
        f64::from(bf16::from_bits(s[v.offset + r * v.row_stride + c * v.col_stride]).to_f32())
    };
    let mut out = Vec::with_capacity(av.rows * bv.cols);
    for r in 0..av.rows {
        for c in 0..bv.cols {
            out.push(
                (0..av.cols)
                    .map(|i| at(a, av, r, i) * at(b, bv, i, c))
                    .sum(),
            );
        }
    }
    out
}

#[test]
fn products_match_their_definition_in_every_layout_and_size() {
    let Some(api) = library() else { return };
    // (m, k, n, a transposed, b transposed): one element, odd sizes, a
    // product split into row bands (m ≥ n) and into column bands (m < n).
    for (m, k, n, at, bt) in [
        (1, 1, 1, false, false),
        (7, 13, 5, false, false),
        (7, 13, 5, true, false),
        (7, 13, 5, false, true),
        (300, 200, 96, false, false),
        (64, 300, 257, true, true),
    ] {
        let a = values(m * k + 3, 1);
        let b = values(k * n + 5, 2);
        let av = if at {
            View {
                offset: 3,
                ..View::dense(k, m, 0)
            }
            .t()
        } else {
            View {
                offset: 3,
                ..View::dense(m, k, 0)
            }
        };
        let bv = if bt {
            View {
                offset: 5,
                ..View::dense(n, k, 0)
            }
            .t()
        } else {
            View {
                offset: 5,
                ..View::dense(k, n, 0)
            }
        };
        let d = View::dense(m, n, 0);
        let mut dst = vec![f32::NAN; m * n];
        check(&dst, d, &a, av, &b, bv).expect("views that fit");
        assert!(product(&api, &mut dst, d, &a, av, &b, bv), "{m}×{k}×{n}");
        for (i, (got, want)) in dst.iter().zip(definition(&a, av, &b, bv)).enumerate() {
            // Products of bfloat16 values are exact in f32; the sum of k
            // of them rounds at most k times.
            let tolerance = 1e-6 * k as f64 * (1.0 + want.abs());
            assert!(
                (f64::from(*got) - want).abs() <= tolerance,
                "{m}×{k}×{n} ({at}, {bt}) element {i}: {got} against {want}"
            );
        }
    }
}

#[test]
fn the_kernel_is_named_and_the_process_wide_status_agrees_with_the_library() {
    let Some(api) = library() else {
        assert!(status().is_err());
        return;
    };
    assert!(!api.kernel.is_empty());
    if let Ok(kernel) = status() {
        assert!(
            kernel.contains("bf16") || kernel.contains("amx"),
            "{kernel}"
        );
    }
}

#[test]
fn views_outside_their_slices_or_shapes_that_disagree_are_refused() {
    let (a, b) = (values(6, 1), values(6, 2));
    let mut dst = vec![0f32; 4];
    let (av, bv, d) = (
        View::dense(2, 3, 0),
        View::dense(3, 2, 0),
        View::dense(2, 2, 0),
    );
    assert_eq!(
        bf16_product(&mut dst, d, &a, av, &b, View::dense(2, 3, 0)),
        Err(AclError::INVALID_PARAM)
    );
    assert_eq!(
        bf16_product(&mut dst, d, &a, View { offset: 1, ..av }, &b, bv),
        Err(AclError::INVALID_PARAM)
    );
    assert_eq!(
        bf16_product(&mut dst[..3], d, &a, av, &b, bv),
        Err(AclError::INVALID_PARAM)
    );
    // A good call: computed by oneDNN or left to the caller, never refused.
    assert!(bf16_product(&mut dst, d, &a, av, &b, bv).is_ok());
}
