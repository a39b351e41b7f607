//! Paged attention against its definition (gather each token's positions
//! through its block table, then softmax(scale·q·kᵀ)·v per head, computed
//! here in f64 with plain loops), on host values and on a flat memory in
//! `f16` and `bf16`, and its refusals.

use std::sync::Mutex;

use aclmem_core::AclError;
use half::{bf16, f16};

use super::paged::{Cache, PagedAttention, Shape, attend};
use crate::aclnn::testing::Flat;
use crate::tensor::DType;

/// Deterministic values in [-1, 1).
fn noise(n: usize, seed: u64) -> Vec<f32> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            ((x >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0) as f32
        })
        .collect()
}

fn shape(tokens: usize, heads: usize, kv_heads: usize) -> Shape {
    Shape {
        tokens,
        heads,
        kv_heads,
        head_size: 12,
        head_size_v: 5,
        blocks: 6,
        block_size: 4,
        table_width: 3,
        scale: 0.37,
    }
}

/// The inputs of a case: query, key cache, value cache, tables, lengths.
struct Case {
    s: Shape,
    q: Vec<f32>,
    k: Vec<f32>,
    v: Vec<f32>,
    tables: Vec<i32>,
    lens: Vec<i32>,
}

fn case(s: Shape, lens: Vec<i32>, seed: u64) -> Case {
    let cache = |d: usize, seed| noise(s.blocks * s.block_size * s.kv_heads * d, seed);
    let tables = (0..s.tokens * s.table_width)
        .map(|i| ((i * 5 + seed as usize) % s.blocks) as i32)
        .collect();
    Case {
        s,
        q: noise(s.tokens * s.heads * s.head_size, seed),
        k: cache(s.head_size, seed + 1),
        v: cache(s.head_size_v, seed + 2),
        tables,
        lens,
    }
}

/// The definition, in f64.
fn definition(c: &Case) -> Vec<f64> {
    let s = &c.s;
    let (n, nkv, d, dv) = (s.heads, s.kv_heads, s.head_size, s.head_size_v);
    let mut out = vec![0f64; s.tokens * n * dv];
    for t in 0..s.tokens {
        let len = c.lens[t] as usize;
        let at = |p: usize| {
            let block = c.tables[t * s.table_width + p / s.block_size] as usize;
            block * s.block_size + p % s.block_size
        };
        for h in 0..n {
            let kh = h / (n / nkv);
            let q = &c.q[(t * n + h) * d..][..d];
            let scores: Vec<f64> = (0..len)
                .map(|p| {
                    let k = &c.k[(at(p) * nkv + kh) * d..][..d];
                    let dot: f64 = q.iter().zip(k).map(|(&a, &b)| a as f64 * b as f64).sum();
                    dot * s.scale as f64
                })
                .collect();
            let max = scores.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            let e: Vec<f64> = scores.iter().map(|x| (x - max).exp()).collect();
            let sum: f64 = e.iter().sum();
            for (p, w) in e.iter().enumerate() {
                let v = &c.v[(at(p) * nkv + kh) * dv..][..dv];
                for j in 0..dv {
                    out[(t * n + h) * dv + j] += w / sum * v[j] as f64;
                }
            }
        }
    }
    out
}

fn host_attend(c: &Case) -> Result<Vec<f32>, AclError> {
    let s = c.s;
    attend(&s, &c.q, &c.tables, &c.lens, |cache, block, rows| {
        let (src, d) = match cache {
            Cache::Key => (&c.k, s.head_size),
            Cache::Value => (&c.v, s.head_size_v),
        };
        let row = s.kv_heads * d;
        Ok(src[block * s.block_size * row..][..rows * row].to_vec())
    })
}

#[test]
fn host_values_match_the_definition_for_grouped_and_plain_heads() {
    for (heads, kv_heads) in [(4, 2), (3, 3), (6, 1)] {
        // Lengths: one position, a block boundary, a partial last block,
        // the whole table.
        let c = case(shape(4, heads, kv_heads), vec![1, 4, 7, 12], heads as u64);
        let got = host_attend(&c).unwrap();
        let want = definition(&c);
        assert_eq!(got.len(), want.len());
        for (g, w) in got.iter().zip(&want) {
            assert!((*g as f64 - w).abs() < 1e-5, "{g} vs {w}");
        }
    }
}

#[test]
fn bad_lengths_block_ids_and_heads_are_refused_before_any_fetch() {
    let c = case(shape(2, 4, 2), vec![3, 5], 9);
    let s = c.s;
    let never = |_: Cache, _: usize, _: usize| -> Result<Vec<f32>, AclError> {
        panic!("fetched after a bad check")
    };
    for lens in [vec![0, 5], vec![-1, 5], vec![3, 13]] {
        assert_eq!(
            attend(&s, &c.q, &c.tables, &lens, never),
            Err(AclError::INVALID_PARAM)
        );
    }
    let mut tables = c.tables.clone();
    tables[s.table_width] = s.blocks as i32;
    assert_eq!(
        attend(&s, &c.q, &tables, &c.lens, never),
        Err(AclError::INVALID_PARAM)
    );
    tables[s.table_width] = -1;
    assert_eq!(
        attend(&s, &c.q, &tables, &c.lens, never),
        Err(AclError::INVALID_PARAM)
    );
    let odd = Shape { kv_heads: 3, ..s };
    assert_eq!(
        attend(&odd, &c.q, &c.tables, &c.lens, never),
        Err(AclError::OP_ATTR_NOT_MATCH)
    );
    assert_eq!(
        attend(&s, &c.q[1..], &c.tables, &c.lens, never),
        Err(AclError::OP_INPUT_NOT_MATCH)
    );
    assert_eq!(
        attend(&s, &c.q, &c.tables, &c.lens[..1], never),
        Err(AclError::OP_INPUT_NOT_MATCH)
    );
}

fn narrow(dtype: DType, x: f32) -> [u8; 2] {
    match dtype {
        DType::Bf16 => bf16::from_f32(x).to_le_bytes(),
        _ => f16::from_f32(x).to_le_bytes(),
    }
}

fn widen(dtype: DType, b: &[u8]) -> f32 {
    match dtype {
        DType::Bf16 => bf16::from_le_bytes([b[0], b[1]]).to_f32(),
        _ => f16::from_le_bytes([b[0], b[1]]).to_f32(),
    }
}

/// Lays a case out in a flat memory (values rounded to `dtype`, and the
/// case's values replaced by the rounded ones); answers the operation.
fn lay_out(c: &mut Case, dtype: DType) -> (Flat, PagedAttention) {
    let mut mem = Vec::new();
    let mut put = |values: &mut Vec<f32>| {
        let at = mem.len().next_multiple_of(64);
        mem.resize(at, 0);
        for x in values.iter_mut() {
            let b = narrow(dtype, *x);
            *x = widen(dtype, &b);
            mem.extend_from_slice(&b);
        }
        at
    };
    let (query, key_cache, value_cache) = (put(&mut c.q), put(&mut c.k), put(&mut c.v));
    let block_tables = mem.len().next_multiple_of(64);
    mem.resize(block_tables, 0);
    mem.extend(c.tables.iter().flat_map(|t| t.to_le_bytes()));
    let out = mem.len().next_multiple_of(64);
    mem.resize(out + 2 * c.s.tokens * c.s.heads * c.s.head_size_v, 0);
    let op = PagedAttention {
        shape: c.s,
        dtype,
        query,
        key_cache,
        value_cache,
        block_tables,
        out,
        context_lens: c.lens.clone(),
    };
    (Flat(Mutex::new(mem)), op.checked().unwrap())
}

#[test]
fn device_runs_match_the_definition_in_f16_and_bf16() {
    for (dtype, tol) in [(DType::F16, 2e-3), (DType::Bf16, 1.6e-2)] {
        let mut c = case(shape(3, 4, 2), vec![2, 9, 12], 5);
        let (mem, op) = lay_out(&mut c, dtype);
        op.run(&mem).unwrap();
        let want = definition(&c);
        let m = mem.0.lock().unwrap();
        let got = m[op.out..][..2 * want.len()].chunks_exact(2);
        for (g, w) in got.zip(&want) {
            let g = widen(dtype, g) as f64;
            assert!(
                (g - w).abs() <= tol * (1.0 + w.abs()),
                "{dtype:?}: {g} vs {w}"
            );
        }
        let ranges = op.ranges();
        assert_eq!(ranges.len(), 5);
        assert!(ranges.iter().all(|&(a, n)| a + n <= m.len()));
    }
}

#[test]
fn a_refused_run_writes_nothing_and_other_types_are_refused() {
    let mut c = case(shape(2, 2, 1), vec![3, 4], 3);
    let (mem, mut op) = lay_out(&mut c, DType::F16);
    op.context_lens = vec![3, 99];
    let before = mem.0.lock().unwrap().clone();
    assert_eq!(op.run(&mem), Err(AclError::INVALID_PARAM));
    assert_eq!(*mem.0.lock().unwrap(), before);
    for dtype in [DType::F32, DType::F64, DType::I32] {
        let other = PagedAttention {
            dtype,
            ..op.clone()
        };
        assert_eq!(other.checked(), Err(AclError::UNSUPPORTED_DATA_TYPE));
    }
    let short = PagedAttention {
        context_lens: vec![1],
        ..op
    };
    assert_eq!(short.checked(), Err(AclError::OP_INPUT_NOT_MATCH));
}
