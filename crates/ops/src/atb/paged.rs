//! Paged attention (ATB's `PagedAttentionOperation`, torch_npu's
//! `_npu_paged_attention`): one query token per sequence attends to the
//! keys and values of its sequence, kept in a cache of fixed-size blocks.
//!
//! Tensors (row-major, contiguous, the layout ATB's `TYPE_BSND` names):
//! query `[T, N, D]`; key cache `[blocks, B, Nkv, D]`; value cache
//! `[blocks, B, Nkv, Dv]`; block table `[T, W]` (int32, block ids); context
//! lengths `[T]` (int32, host values); output `[T, N, Dv]`. Token `t`'s
//! position `p < len[t]` lives at row `p % B` of block
//! `table[t][p / B]`. Query head `h` reads kv head `h / (N / Nkv)` (heads
//! grouped, as the NPU's kernel groups them). The output is
//! `softmax(scale · q · Kᵀ) · V` per token and head, computed in `f32`
//! (products through [`crate::linalg`]) and rounded once to the query's
//! type (`f16` or `bf16`).

use aclmem_core::AclError;
use half::{bf16, f16};

use crate::aclnn::Memory;
use crate::linalg::{self, View as Mat};
use crate::tensor::DType;

/// The sizes and the scale of a paged attention.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Shape {
    /// Query tokens `T` (one per sequence).
    pub tokens: usize,
    /// Query heads `N`.
    pub heads: usize,
    /// Key and value heads `Nkv` (dividing `N`).
    pub kv_heads: usize,
    /// The query's and keys' head size `D`.
    pub head_size: usize,
    /// The values' head size `Dv`.
    pub head_size_v: usize,
    /// Blocks in each cache.
    pub blocks: usize,
    /// Positions per block `B`.
    pub block_size: usize,
    /// Block ids per token in the block table `W`.
    pub table_width: usize,
    /// The factor of `q · kᵀ`.
    pub scale: f32,
}

impl Shape {
    /// 100023 for head counts that do not group (none, or `N` not a
    /// multiple of `Nkv`); 100021 for an empty dimension.
    pub fn check(&self) -> Result<(), AclError> {
        if self.heads == 0 || self.kv_heads == 0 || !self.heads.is_multiple_of(self.kv_heads) {
            return Err(AclError::OP_ATTR_NOT_MATCH);
        }
        let dims = [
            self.head_size,
            self.head_size_v,
            self.blocks,
            self.block_size,
            self.table_width,
        ];
        if dims.contains(&0) {
            return Err(AclError::OP_INPUT_NOT_MATCH);
        }
        Ok(())
    }

    /// Elements of one position of a cache (all its kv heads).
    fn row(&self, cache: Cache) -> usize {
        self.kv_heads
            * match cache {
                Cache::Key => self.head_size,
                Cache::Value => self.head_size_v,
            }
    }
}

/// One of the two caches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cache {
    /// The key cache, `[blocks, B, Nkv, D]`.
    Key,
    /// The value cache, `[blocks, B, Nkv, Dv]`.
    Value,
}

/// Checks every token's length and block ids: 100000 for a length
/// outside `1..=W·B` or a block id outside the caches.
fn check_tables(shape: &Shape, tables: &[i32], lens: &[i32]) -> Result<(), AclError> {
    if tables.len() != shape.tokens * shape.table_width || lens.len() != shape.tokens {
        return Err(AclError::OP_INPUT_NOT_MATCH);
    }
    for (t, &len) in lens.iter().enumerate() {
        let len = usize::try_from(len).map_err(|_| AclError::INVALID_PARAM)?;
        if len == 0 || len > shape.table_width * shape.block_size {
            return Err(AclError::INVALID_PARAM);
        }
        let used = len.div_ceil(shape.block_size);
        let row = &tables[t * shape.table_width..][..used];
        if row
            .iter()
            .any(|&b| usize::try_from(b).map_or(true, |b| b >= shape.blocks))
        {
            return Err(AclError::INVALID_PARAM);
        }
    }
    Ok(())
}

/// The paged attention of host values: `query` `[T, N, D]`, `tables`
/// `[T, W]`, `lens` `[T]`; `fetch(cache, block, rows)` answers the first
/// `rows` positions of `block` of `cache` (`rows × Nkv × D` or `× Dv`
/// values). Answers the output `[T, N, Dv]`; bad shapes, lengths or block
/// ids are errors before anything is fetched.
pub fn attend(
    shape: &Shape,
    query: &[f32],
    tables: &[i32],
    lens: &[i32],
    mut fetch: impl FnMut(Cache, usize, usize) -> Result<Vec<f32>, AclError>,
) -> Result<Vec<f32>, AclError> {
    shape.check()?;
    let (n, nkv, d, dv) = (
        shape.heads,
        shape.kv_heads,
        shape.head_size,
        shape.head_size_v,
    );
    if query.len() != shape.tokens * n * d {
        return Err(AclError::OP_INPUT_NOT_MATCH);
    }
    check_tables(shape, tables, lens)?;
    let group = n / nkv;
    let mut out = vec![0f32; shape.tokens * n * dv];
    for (t, &len) in lens.iter().enumerate() {
        let len = len as usize;
        let mut keys = Vec::with_capacity(len * nkv * d);
        let mut values = Vec::with_capacity(len * nkv * dv);
        for (j, &block) in tables[t * shape.table_width..]
            .iter()
            .take(len.div_ceil(shape.block_size))
            .enumerate()
        {
            let rows = shape.block_size.min(len - j * shape.block_size);
            for (cache, into) in [(Cache::Key, &mut keys), (Cache::Value, &mut values)] {
                let got = fetch(cache, block as usize, rows)?;
                if got.len() != rows * shape.row(cache) {
                    return Err(AclError::INVALID_PARAM);
                }
                into.extend_from_slice(&got);
            }
        }
        for h in 0..nkv {
            // The group's queries, `group × D`, and head h's keys, `len × D`.
            let q = Mat::dense(group, d, (t * n + h * group) * d);
            let k = Mat {
                rows: len,
                cols: d,
                offset: h * d,
                row_stride: nkv * d,
                col_stride: 1,
            };
            let mut p = vec![0f32; group * len];
            linalg::gemm(
                &mut p,
                Mat::dense(group, len, 0),
                query,
                q,
                &keys,
                k.t(),
                false,
            )?;
            for row in p.chunks_mut(len) {
                softmax(row, shape.scale);
            }
            let v = Mat {
                rows: len,
                cols: dv,
                offset: h * dv,
                row_stride: nkv * dv,
                col_stride: 1,
            };
            let o = Mat::dense(group, dv, (t * n + h * group) * dv);
            linalg::gemm(
                &mut out,
                o,
                &p,
                Mat::dense(group, len, 0),
                &values,
                v,
                false,
            )?;
        }
    }
    Ok(out)
}

/// `row = softmax(scale · row)`, in place.
fn softmax(row: &mut [f32], scale: f32) {
    let max = row
        .iter()
        .map(|&x| x * scale)
        .fold(f32::NEG_INFINITY, f32::max);
    let mut sum = 0f32;
    for x in row.iter_mut() {
        *x = (*x * scale - max).exp();
        sum += *x;
    }
    row.iter_mut().for_each(|x| *x /= sum);
}

/// A paged attention on the device's memory: the tensors' addresses, the
/// sizes, and the context lengths (host values, copied when the caller
/// executed the operation: a replay computes with them).
#[derive(Debug, Clone, PartialEq)]
pub struct PagedAttention {
    /// The sizes and the scale.
    pub shape: Shape,
    /// The type of the query, the caches and the output (`F16`, `Bf16`).
    pub dtype: DType,
    /// The query's address.
    pub query: usize,
    /// The key cache's address.
    pub key_cache: usize,
    /// The value cache's address.
    pub value_cache: usize,
    /// The block table's address (int32).
    pub block_tables: usize,
    /// The output's address.
    pub out: usize,
    /// Each token's context length.
    pub context_lens: Vec<i32>,
}

impl PagedAttention {
    /// Checks the sizes (see [`Shape::check`]), the type (100026 for one
    /// other than `f16`/`bf16`) and the lengths (one per token, 100021).
    pub fn checked(self) -> Result<PagedAttention, AclError> {
        self.shape.check()?;
        if !matches!(self.dtype, DType::F16 | DType::Bf16) {
            return Err(AclError::UNSUPPORTED_DATA_TYPE);
        }
        if self.context_lens.len() != self.shape.tokens {
            return Err(AclError::OP_INPUT_NOT_MATCH);
        }
        Ok(self)
    }

    /// Bytes of `elements` values of the type.
    fn bytes(&self, elements: usize) -> usize {
        elements * self.dtype.size()
    }

    /// The memory it reads and writes, `(address, bytes)`.
    pub fn ranges(&self) -> Vec<(usize, usize)> {
        let s = &self.shape;
        vec![
            (self.query, self.bytes(s.tokens * s.heads * s.head_size)),
            (
                self.key_cache,
                self.bytes(s.blocks * s.block_size * s.row(Cache::Key)),
            ),
            (
                self.value_cache,
                self.bytes(s.blocks * s.block_size * s.row(Cache::Value)),
            ),
            (self.block_tables, 4 * s.tokens * s.table_width),
            (self.out, self.bytes(s.tokens * s.heads * s.head_size_v)),
        ]
    }

    /// Reads `elements` values of the type at `addr`, as `f32`.
    fn read(&self, mem: &dyn Memory, addr: usize, elements: usize) -> Result<Vec<f32>, AclError> {
        let mut buf = vec![0u8; self.bytes(elements)];
        mem.read(addr, &mut buf)?;
        let wide = |b: &[u8]| match self.dtype {
            DType::Bf16 => bf16::from_le_bytes([b[0], b[1]]).to_f32(),
            _ => f16::from_le_bytes([b[0], b[1]]).to_f32(),
        };
        Ok(buf.chunks_exact(2).map(wide).collect())
    }

    /// Runs it on `mem`: the output is written only when every length,
    /// block id and read is good.
    pub fn run(&self, mem: &dyn Memory) -> Result<(), AclError> {
        let s = self.shape;
        let query = self.read(mem, self.query, s.tokens * s.heads * s.head_size)?;
        let mut raw = vec![0u8; 4 * s.tokens * s.table_width];
        mem.read(self.block_tables, &mut raw)?;
        let tables: Vec<i32> = raw
            .chunks_exact(4)
            .map(|b| i32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        let out = attend(
            &s,
            &query,
            &tables,
            &self.context_lens,
            |cache, block, rows| {
                let (base, row) = match cache {
                    Cache::Key => (self.key_cache, s.row(Cache::Key)),
                    Cache::Value => (self.value_cache, s.row(Cache::Value)),
                };
                self.read(
                    mem,
                    base + self.bytes(block * s.block_size * row),
                    rows * row,
                )
            },
        )?;
        let bytes: Vec<u8> = out
            .iter()
            .flat_map(|&x| match self.dtype {
                DType::Bf16 => bf16::from_f32(x).to_le_bytes(),
                _ => f16::from_f32(x).to_le_bytes(),
            })
            .collect();
        mem.write(self.out, &bytes)
    }
}
