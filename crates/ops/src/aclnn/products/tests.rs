//! Products read straight from memory against the operator path's kernel
//! on gathered copies: the same values, bit for bit.

use std::sync::Mutex;

use super::*;
use crate::aclnn::testing::Flat;
use crate::kernels::{self, Call, HostInputs, Spec};
use crate::objects::OpAttr;
use crate::tensor::Tensor;

/// `values` of `dtype` as a tensor placed at `at`; its contiguous view.
fn place(m: &mut Vec<u8>, at: usize, dtype: DType, dims: &[usize], values: &[f64]) -> View {
    let t = Tensor::from_nums(dtype, dims.to_vec(), values.iter().map(|&v| Num::F(v)));
    if m.len() < at + t.bytes.len() {
        m.resize(at + t.bytes.len(), 0);
    }
    m[at..at + t.bytes.len()].copy_from_slice(&t.bytes);
    View::contiguous_at(dtype, dims.to_vec(), at)
}

fn values(n: usize, seed: usize) -> Vec<f64> {
    (0..n)
        .map(|i| ((i * 7 + seed) % 23) as f64 * 0.25 - 2.5)
        .collect()
}

/// The operator path's `MatMul` of contiguous copies.
fn kernel_product(dtype: DType, a: &Tensor, b: &Tensor) -> Vec<u8> {
    let host = HostInputs(
        [a, b]
            .iter()
            .map(|t| {
                (
                    Spec {
                        dtype,
                        dims: t.dims.clone(),
                    },
                    t.bytes.clone(),
                )
            })
            .collect(),
    );
    let out = Spec {
        dtype,
        dims: vec![a.dims[0], b.dims[1]],
    };
    let call = Call::new(&host, vec![out], OpAttr::new());
    kernels::find("MatMul").unwrap()(&call)
        .unwrap()
        .pop()
        .unwrap()
}

#[test]
fn products_read_from_memory_are_the_kernels_bit_for_bit() {
    // Large enough to be split into bands (more than 2^21 products). The
    // values are quarters, so every sum is exact in `f32` whatever its
    // order: bfloat16 through oneDNN (where present) agrees bit for bit.
    let (m, k, n) = (96, 200, 150);
    for dtype in [DType::F32, DType::F16, DType::Bf16] {
        let mut mem = Vec::new();
        let (av, bv) = (values(m * k, 1), values(k * n, 5));
        let a = place(&mut mem, 0, dtype, &[m, k], &av);
        // b stored transposed (n x k) and viewed as k x n: a `.t()`.
        let bt = place(&mut mem, 1 << 20, dtype, &[n, k], &values(k * n, 5));
        let mut b = bt.clone();
        b.dims = vec![k, n];
        b.strides = vec![1, k];
        let out = View::contiguous_at(dtype, vec![m, n], 2 << 20);
        mem.resize((2 << 20) + m * n * dtype.size(), 0);
        let flat = Flat(Mutex::new(mem));
        let plan = Plan::new(
            "aclnnMm",
            Kind::Matmul,
            vec![Arg::Tensor(a.clone()), Arg::Tensor(b.clone())],
            out.clone(),
        )
        .unwrap();
        run(&plan, &flat).expect("this module's form").unwrap();
        // The kernel on gathered copies: b made contiguous k x n.
        let at = Tensor::from_nums(dtype, vec![m, k], av.iter().map(|&v| Num::F(v)));
        let bvals: Vec<f64> = (0..k * n).map(|x| bv[(x % n) * k + x / n]).collect();
        let bc = Tensor::from_nums(dtype, vec![k, n], bvals.iter().map(|&v| Num::F(v)));
        let want = kernel_product(dtype, &at, &bc);
        let got = flat.0.lock().unwrap()[2 << 20..(2 << 20) + m * n * dtype.size()].to_vec();
        assert_eq!(got, want, "{dtype:?}");
    }
}

#[test]
fn addmm_adds_a_row_after_rounding_the_product() {
    let (m, k, n) = (3, 4, 5);
    let dtype = DType::F16;
    let mut mem = Vec::new();
    let a = place(&mut mem, 0, dtype, &[m, k], &values(m * k, 2));
    let b = place(&mut mem, 256, dtype, &[k, n], &values(k * n, 3));
    let c = place(&mut mem, 512, dtype, &[n], &values(n, 4));
    let out = place(&mut mem, 768, dtype, &[m, n], &vec![0.0; m * n]);
    let flat = Flat(Mutex::new(mem));
    let kind = Kind::Addmm {
        beta: Num::F(0.5),
        alpha: Num::F(2.0),
    };
    let plan = Plan::new(
        "aclnnAddmm",
        kind,
        vec![
            Arg::Tensor(c.clone()),
            Arg::Tensor(a.clone()),
            Arg::Tensor(b.clone()),
        ],
        out.clone(),
    )
    .unwrap();
    run(&plan, &flat).expect("this module's form").unwrap();
    let m8 = flat.0.lock().unwrap().clone();
    let get = |v: &View, i: usize| dtype.get(&m8[v.data + i * 2..]).f64();
    for r in 0..m {
        for j in 0..n {
            let p: f64 = (0..k)
                .map(|x| get(&a, r * k + x) * get(&b, x * n + j))
                .sum();
            let p = dtype.get(&dtype.bytes_of(Num::F(p))).f64();
            let want = dtype
                .get(&dtype.bytes_of(Num::F(0.5 * get(&c, j) + 2.0 * p)))
                .f64();
            assert_eq!(get(&out, r * n + j), want, "({r}, {j})");
        }
    }
}

#[test]
fn other_forms_take_the_general_path() {
    let mut mem = vec![0u8; 4096];
    let a = place(&mut mem, 0, DType::F32, &[2, 3, 4], &values(24, 1));
    let b = place(&mut mem, 512, DType::F32, &[3, 4, 5], &values(60, 1));
    let out = View::contiguous_at(DType::F32, vec![2, 3, 3, 5], 1536);
    let flat = Flat(Mutex::new(mem));
    // Batches that broadcast against each other.
    let a4 = View {
        dims: vec![2, 1, 3, 4],
        strides: vec![12, 12, 4, 1],
        ..a.clone()
    };
    let plan = Plan::new(
        "aclnnMatmul",
        Kind::Matmul,
        vec![Arg::Tensor(a4), Arg::Tensor(b.clone())],
        out,
    )
    .unwrap();
    assert!(run(&plan, &flat).is_none());
    // A vector.
    let v = View::contiguous_at(DType::F32, vec![4], 0);
    let plan = Plan::new(
        "aclnnMatmul",
        Kind::Matmul,
        vec![Arg::Tensor(v), Arg::Tensor(b)],
        View::contiguous_at(DType::F32, vec![3, 5], 1536),
    )
    .unwrap();
    assert!(run(&plan, &flat).is_none());
    // float64.
    let a64 = View::contiguous_at(DType::F64, vec![2, 4], 0);
    let b64 = View::contiguous_at(DType::F64, vec![4, 5], 256);
    let o64 = View::contiguous_at(DType::F64, vec![2, 5], 1024);
    let plan = Plan::new(
        "aclnnMm",
        Kind::Matmul,
        vec![Arg::Tensor(a64), Arg::Tensor(b64)],
        o64,
    )
    .unwrap();
    assert!(run(&plan, &flat).is_none());
}

/// `a · b` of views of `mem` (f64 definition, batch by batch as torch's
/// `matmul` broadcasts a missing batch), each element rounded once to the
/// output's type.
fn defined(mem: &[u8], a: &View, b: &View, out: &View) -> Vec<u8> {
    let get = |v: &View, at: usize| v.dtype.get(&mem[v.data + at * v.dtype.size()..]).f64();
    let (da, db) = (a.dims.len(), b.dims.len());
    let (m, k, n) = (a.dims[da - 2], a.dims[da - 1], b.dims[db - 1]);
    let batches = out.numel() / (m * n);
    let mut bytes = vec![0u8; out.numel() * out.dtype.size()];
    let size = out.dtype.size();
    // Element (i, j) of batch `t` of a view: its batch dims row-major.
    let at = |v: &View, t: usize, i: usize, j: usize| {
        let d = v.dims.len();
        let (mut t, mut off) = (t, v.offset + i * v.strides[d - 2] + j * v.strides[d - 1]);
        for x in (0..d - 2).rev() {
            off += (t % v.dims[x]) * v.strides[x];
            t /= v.dims[x];
        }
        off
    };
    for t in 0..batches {
        for i in 0..m {
            for j in 0..n {
                let sum: f64 = (0..k)
                    .map(|x| get(a, at(a, t, i, x)) * get(b, at(b, t, x, j)))
                    .sum();
                let o = (t * m + i) * n + j;
                out.dtype
                    .put(Num::F(sum), &mut bytes[o * size..(o + 1) * size]);
            }
        }
    }
    bytes
}

#[test]
fn batched_products_fold_or_run_batch_by_batch_and_match_their_definition() {
    // (a's dims, b's dims, b's batch stride 0: an expanded b)
    let cases: [(&[usize], &[usize], bool); 5] = [
        // Rows of a batch folded into one product (nn.Linear on 3-D).
        (&[4, 6, 8], &[8, 5], false),
        // Batches on both sides (bmm), small: a band of batches per thread.
        (&[64, 6, 8], &[64, 8, 5], false),
        // Large enough per batch to be split into bands.
        (&[2, 160, 128], &[2, 128, 144], false),
        // An expanded b (batch stride 0), a matrix a over a batch of b.
        (&[3, 6, 8], &[3, 8, 5], true),
        (&[6, 8], &[3, 8, 5], false),
    ];
    for dtype in [DType::F32, DType::F16, DType::Bf16] {
        for (ad, bd, expanded) in cases {
            let (na, nb): (usize, usize) = (ad.iter().product(), bd.iter().product());
            let mut mem = Vec::new();
            let a = place(&mut mem, 0, dtype, ad, &values(na, 1));
            let b_at = (na * 8).next_multiple_of(64);
            let mut b = place(&mut mem, b_at, dtype, bd, &values(nb, 5));
            if expanded {
                b.strides[0] = 0;
            }
            let da = ad.len().max(bd.len());
            let mut od: Vec<usize> = if ad.len() >= bd.len() {
                ad[..da - 1].to_vec()
            } else {
                bd[..da - 1].to_vec()
            };
            od[da - 2] = ad[ad.len() - 2];
            od.push(bd[bd.len() - 1]);
            let o_at = (b_at + nb * 8).next_multiple_of(64);
            let out = View::contiguous_at(dtype, od, o_at);
            mem.resize(o_at + out.numel() * dtype.size(), 0);
            let want = defined(&mem, &a, &b, &out);
            let flat = Flat(Mutex::new(mem));
            let plan = Plan::new(
                "aclnnMatmul",
                Kind::Matmul,
                vec![Arg::Tensor(a), Arg::Tensor(b)],
                out.clone(),
            )
            .unwrap();
            run(&plan, &flat).expect("this module's form").unwrap();
            let got = flat.0.lock().unwrap()[o_at..o_at + want.len()].to_vec();
            assert_eq!(
                got, want,
                "{dtype:?} {ad:?} · {bd:?} (expanded: {expanded})"
            );
        }
    }
}
