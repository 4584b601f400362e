//! The context's KV cache, reached through ape-chat's llama.cpp patch
//! (`llama_ape_kv_*`, see `patches/README.md`): cached states are written
//! straight into the K and V tensors at their cells, and the cells are
//! claimed with their positions, instead of going through llama.cpp's state
//! restore.
//!
//! Why: a restore copies transposed V one row per layer per cell range, which
//! on a GPU is one host-to-device copy per V row (32,768 copies for an 8B
//! model, ~230 ms whatever the size). Here each chunk costs one copy per
//! layer for K and one 2D copy per layer for V (`ggml_backend_tensor_set_2d`,
//! a single strided copy on a GPU), or, from the GPU tier, device copies
//! ([`super::pool`]). The bytes written and the cells' metadata are exactly
//! what a restore of the same states into the same cells produces, so the
//! cache, and every logit after it, is the same bit for bit
//! (`check::placement` proves it against a real restore).
//!
//! Invariant: the tensors are the live cache of the context they came from;
//! a `KvCache` is made per placement and never outlives the borrow of the
//! session that owns that context.

use std::ptr::NonNull;

use llama_cpp_sys_2 as sys;

use super::seqstate::{Blob, SectionLayout};

/// The unified KV cache of one context.
pub(crate) struct KvCache {
    ctx: NonNull<sys::llama_context>,
    k: Vec<NonNull<sys::ggml_tensor>>,
    v: Vec<NonNull<sys::ggml_tensor>>,
    v_trans: bool,
    /// Cells in the cache (the storage tensors' cell dimension).
    cells: usize,
}

/// What one layer's K or V section is, without its bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SectionMeta {
    /// ggml type.
    pub ty: i32,
    pub layout: SectionLayout,
    pub len: usize,
}

/// The shape of a run of cells' state: positions, V layout, and each
/// layer's K and V sections.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct CellsMeta {
    pub positions: Vec<i32>,
    pub v_trans: bool,
    pub k: Vec<SectionMeta>,
    pub v: Vec<SectionMeta>,
}

impl CellsMeta {
    /// The shape of `blob`'s cells.
    pub fn of(blob: &Blob<'_>) -> Self {
        let meta = |s: super::seqstate::Section<'_>| SectionMeta {
            ty: s.ty,
            layout: s.layout,
            len: s.data.len(),
        };
        Self {
            positions: blob.positions(),
            v_trans: blob.v_trans(),
            k: (0..blob.layers()).map(|l| meta(blob.k(l))).collect(),
            v: (0..blob.layers()).map(|l| meta(blob.v(l))).collect(),
        }
    }

    /// Cells described.
    pub fn cells(&self) -> usize {
        self.positions.len()
    }
}

impl KvCache {
    /// The cache of `ctx`, or why it cannot be written directly (another
    /// memory kind than one plain unified KV cache).
    pub fn of(ctx: NonNull<sys::llama_context>) -> Result<Self, String> {
        // SAFETY: `ctx` is a live context (module invariant); these only
        // read the cache's description.
        let (n_layer, v_trans) = unsafe {
            (
                sys::llama_ape_kv_n_layer(ctx.as_ptr()),
                sys::llama_ape_kv_v_trans(ctx.as_ptr()),
            )
        };
        if n_layer <= 0 {
            return Err("the context's memory is not one unified KV cache".into());
        }
        let (mut k, mut v) = (Vec::new(), Vec::new());
        for il in 0..n_layer {
            // SAFETY: as above; `il` is in range.
            let (kt, vt) = unsafe {
                (
                    sys::llama_ape_kv_k(ctx.as_ptr(), il),
                    sys::llama_ape_kv_v(ctx.as_ptr(), il),
                )
            };
            let (Some(kt), Some(vt)) = (NonNull::new(kt), NonNull::new(vt)) else {
                return Err(format!("KV cache layer {il} has no K or V storage"));
            };
            k.push(kt);
            v.push(vt);
        }
        // SAFETY: a live storage tensor of the cache.
        let cells = unsafe { k[0].as_ref() }.ne[1] as usize;
        Ok(Self {
            ctx,
            k,
            v,
            v_trans,
            cells,
        })
    }

    /// Layers the cache holds.
    pub fn layers(&self) -> usize {
        self.k.len()
    }

    /// Cells the cache holds.
    pub fn cells(&self) -> usize {
        self.cells
    }

    /// Layer `l`'s K and V storage tensors.
    pub fn tensors(&self, l: usize) -> (NonNull<sys::ggml_tensor>, NonNull<sys::ggml_tensor>) {
        (self.k[l], self.v[l])
    }

    /// The buffer the cache lives in (layer 0's K; `None` if unallocated).
    pub fn buffer(&self) -> Option<NonNull<sys::ggml_backend_buffer>> {
        // SAFETY: live storage tensors (module invariant); a view's source
        // is the tensor it views, alive as long as the view.
        let (t, root) = unsafe {
            let t = self.k[0].as_ref();
            (t, t.view_src.as_ref().unwrap_or(t))
        };
        NonNull::new(if t.buffer.is_null() {
            root.buffer
        } else {
            t.buffer
        })
    }

    /// Checks that a state shaped `m` fits cells `cell0..` of this cache:
    /// same layers, types, row sizes and V layout. Nothing is written.
    pub fn check(&self, m: &CellsMeta, cell0: usize) -> Result<(), String> {
        let n = m.cells();
        if cell0 + n > self.cells {
            return Err(format!(
                "cells {cell0}..{} lie beyond the cache's {}",
                cell0 + n,
                self.cells
            ));
        }
        if m.k.len() != self.k.len() || m.v.len() != self.v.len() {
            return Err(format!(
                "a state of {} layers for a cache of {}",
                m.k.len(),
                self.k.len()
            ));
        }
        if m.v_trans != self.v_trans {
            return Err("a state with another V layout (transposed or not)".into());
        }
        for l in 0..self.k.len() {
            // SAFETY: live storage tensors (module invariant).
            let (k, v) = unsafe { (self.k[l].as_ref(), self.v[l].as_ref()) };
            fits(&m.k[l], k, n, self.cells).map_err(|e| format!("layer {l} K: {e}"))?;
            fits(&m.v[l], v, n, self.cells).map_err(|e| format!("layer {l} V: {e}"))?;
        }
        Ok(())
    }

    /// Claims cells `cell0..cell0 + positions.len()` for sequence `seq` at
    /// `positions`; their K and V are then the caller's to write.
    pub fn claim(&self, seq: i32, cell0: usize, positions: &[i32]) -> Result<(), String> {
        let n = positions.len();
        // SAFETY: live context; `positions` holds `n` entries; llama.cpp
        // checks the cells are free and in range and changes nothing if not.
        let claimed = unsafe {
            sys::llama_ape_kv_claim(
                self.ctx.as_ptr(),
                seq,
                cell0 as u32,
                n as u32,
                positions.as_ptr(),
            )
        };
        if !claimed {
            return Err(format!(
                "cells {cell0}..{} are not free in the KV cache",
                cell0 + n
            ));
        }
        Ok(())
    }

    /// Writes `blob`'s cells into cells `cell0..cell0 + n` of sequence
    /// `seq`, at the positions the blob records. The cells must be free.
    pub fn place(&self, seq: i32, cell0: usize, blob: &Blob<'_>) -> Result<(), String> {
        let m = CellsMeta::of(blob);
        self.check(&m, cell0)?;
        if m.cells() == 0 {
            return Ok(());
        }
        self.claim(seq, cell0, &m.positions)?;
        for l in 0..self.k.len() {
            let (k, v) = (blob.k(l), blob.v(l));
            // SAFETY: `check` matched both sections to their tensors and
            // each `data` holds exactly the section's bytes.
            unsafe {
                self.write_host(&m.k[l], k.data.as_ptr(), self.k[l], cell0, m.cells());
                self.write_host(&m.v[l], v.data.as_ptr(), self.v[l], cell0, m.cells());
            }
        }
        Ok(())
    }

    /// Copies the K and V of cells `src..src + n` to the free cells
    /// `dst..dst + n`, every layer, byte for byte (through host memory, so
    /// it works on any backend). Claims nothing: the caller claims `dst`
    /// with the positions it wants. Refused, with nothing written, where
    /// either range lies outside the cache or they overlap.
    pub fn copy_cells(&self, src: usize, dst: usize, n: usize) -> Result<(), String> {
        if src.max(dst) + n > self.cells {
            return Err(format!(
                "cells {src}..{} to {dst}..{} lie beyond the cache's {}",
                src + n,
                dst + n,
                self.cells
            ));
        }
        if src < dst + n && dst < src + n {
            return Err(format!(
                "cells {src}..{} overlap {dst}..{}",
                src + n,
                dst + n
            ));
        }
        let mut buf = Vec::new();
        for (t, transposed) in self
            .k
            .iter()
            .map(|&k| (k, false))
            .chain(self.v.iter().map(|&v| (v, self.v_trans)))
        {
            // SAFETY: live storage tensors (module invariant); plain queries
            // of ggml's type table.
            let (row_bytes, elem_bytes, rows) = unsafe {
                let tr = t.as_ref();
                (
                    sys::ggml_row_size(tr.type_, tr.ne[0]),
                    sys::ggml_type_size(tr.type_),
                    tr.ne[0] as usize,
                )
            };
            // SAFETY: the ranges were checked against the cell dimension
            // above, every offset and size below stays inside the storage
            // tensor, and `buf` holds exactly the bytes moved.
            unsafe {
                if transposed {
                    // Row `j` of the tensor holds element `j` of every cell.
                    let (size, pitch) = (n * elem_bytes, self.cells * elem_bytes);
                    buf.resize(rows * size, 0u8);
                    let p = buf.as_mut_ptr().cast();
                    sys::ggml_backend_tensor_get_2d(
                        t.as_ptr(),
                        p,
                        src * elem_bytes,
                        size,
                        rows,
                        pitch,
                        size,
                    );
                    sys::ggml_backend_tensor_set_2d(
                        t.as_ptr(),
                        p,
                        dst * elem_bytes,
                        size,
                        rows,
                        pitch,
                        size,
                    );
                } else {
                    buf.resize(n * row_bytes, 0u8);
                    let p = buf.as_mut_ptr().cast();
                    sys::ggml_backend_tensor_get(t.as_ptr(), p, src * row_bytes, n * row_bytes);
                    sys::ggml_backend_tensor_set(t.as_ptr(), p, dst * row_bytes, n * row_bytes);
                }
            }
        }
        Ok(())
    }

    /// Layer `l`'s K of cells `cells`, as f32 (an f16 or f32 cache; `None`
    /// for a quantized one): what the checks read back.
    pub fn k_values(&self, l: usize, cells: std::ops::Range<usize>) -> Option<Vec<f32>> {
        let t = *self.k.get(l)?;
        if cells.end > self.cells {
            return None;
        }
        // SAFETY: a live storage tensor (module invariant); the range was
        // checked against its cell dimension.
        unsafe {
            let tr = t.as_ref();
            let (row_bytes, n) = (sys::ggml_row_size(tr.type_, tr.ne[0]), cells.len());
            let mut buf = vec![0u8; n * row_bytes];
            sys::ggml_backend_tensor_get(
                t.as_ptr(),
                buf.as_mut_ptr().cast(),
                cells.start * row_bytes,
                buf.len(),
            );
            match tr.type_ {
                sys::GGML_TYPE_F32 => Some(
                    buf.chunks_exact(4)
                        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                        .collect(),
                ),
                sys::GGML_TYPE_F16 => Some(
                    buf.chunks_exact(2)
                        .map(|b| sys::ggml_fp16_to_fp32(u16::from_le_bytes([b[0], b[1]])))
                        .collect(),
                ),
                _ => None,
            }
        }
    }

    /// Whether K is stored unquantized, so that llama.cpp's K shift rotates
    /// the cells it moves and leaves every other cell's bytes as they were
    /// (a quantized K is dequantized, rotated and requantized whole).
    pub fn k_is_float(&self) -> bool {
        // SAFETY: a live storage tensor (module invariant).
        !unsafe { sys::ggml_is_quantized(self.k[0].as_ref().type_) }
    }

    /// Copies a checked section from host memory at `src` into its cells:
    /// one copy for rows, one strided 2D copy for transposed V (row `j` of
    /// the section goes to row `j` of the tensor, `cells` elements apart).
    ///
    /// # Safety
    /// `s` must have passed [`Self::check`] against `t` for `n` cells at
    /// `cell0`, and `src` must point to `s.len` readable bytes.
    pub unsafe fn write_host(
        &self,
        s: &SectionMeta,
        src: *const u8,
        t: NonNull<sys::ggml_tensor>,
        cell0: usize,
        n: usize,
    ) {
        let src = src.cast();
        // SAFETY: per the contract, every byte written lies inside the live
        // storage tensor and every byte read inside `src`.
        unsafe {
            match s.layout {
                SectionLayout::Rows { row_bytes } => {
                    sys::ggml_backend_tensor_set(t.as_ptr(), src, cell0 * row_bytes, n * row_bytes)
                }
                SectionLayout::Transposed { rows, elem_bytes } => sys::ggml_backend_tensor_set_2d(
                    t.as_ptr(),
                    src,
                    cell0 * elem_bytes,
                    n * elem_bytes,
                    rows,
                    self.cells * elem_bytes,
                    n * elem_bytes,
                ),
            }
        }
    }
}

/// Whether `s` (of `n` cells) matches the storage tensor `t` of a cache of
/// `cells` cells, so that writes stay inside it.
fn fits(s: &SectionMeta, t: &sys::ggml_tensor, n: usize, cells: usize) -> Result<(), String> {
    if s.ty != t.type_ as i32 {
        return Err(format!("type {} where the cache has {}", s.ty, t.type_));
    }
    // SAFETY: plain queries of ggml's type table.
    let (row_bytes, elem_bytes) = unsafe {
        (
            sys::ggml_row_size(t.type_, t.ne[0]),
            sys::ggml_type_size(t.type_),
        )
    };
    let stored = t.ne[1] as usize;
    if stored != cells {
        return Err(format!("{stored} cells where the cache has {cells}"));
    }
    let expected = match s.layout {
        SectionLayout::Rows { row_bytes: r } => {
            if r != row_bytes {
                return Err(format!("rows of {r} bytes, the cache's are {row_bytes}"));
            }
            n * r
        }
        SectionLayout::Transposed {
            rows,
            elem_bytes: e,
        } => {
            if e != elem_bytes || rows != t.ne[0] as usize {
                return Err(format!(
                    "{rows} rows of {e}-byte elements, the cache has {} of {elem_bytes}",
                    t.ne[0]
                ));
            }
            rows * n * e
        }
    };
    if s.len != expected {
        return Err(format!("{} bytes of data, expected {expected}", s.len));
    }
    Ok(())
}
