//! Chunk states kept in memory between questions, so a repeated or
//! overlapping question reads nothing from disk: one budgeted,
//! least-recently-used arena per memory tier.
//!
//! A tier is a ggml buffer type. On a CPU build there is one, ordinary RAM
//! (the KV cache's own buffer type). With the KV cache in GPU memory there
//! are two: the GPU's memory itself (states are copied into the cache on the
//! device, one copy per layer per tensor per chunk, computed as one ggml
//! graph of `ggml_cpy`s between views), then page-locked host memory (copied
//! over PCIe at full DMA speed). Entries are held in the layout the cache
//! stores (each layer's K, then V, as in llama.cpp's state), so placing one
//! is a plain copy, never a conversion.
//!
//! Memory comes in slabs of one backend buffer each, allocated as needed up
//! to the budget; an entry is one contiguous range of a slab (first fit),
//! and when none fits the least recently used entries that no answer is
//! using are evicted. An answer holds its entries through [`Lease`]s, so an
//! insertion during the same answer never evicts them. A pool in the
//! memory the KV cache lives in gives memory back when an answer's context
//! needs it ([`Pool::reclaim`]): whole slabs, freed once no lease holds
//! anything in them.
//!
//! Invariant: everything here is touched only under the engine's tier
//! mutex, and a slab's buffer lives as long as its pool.

use std::collections::HashMap;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use llama_cpp_sys_2 as sys;
use serde::Serialize;

use super::kv::{CellsMeta, KvCache, SectionMeta};
use super::seqstate::SectionLayout;

/// Sections start at this alignment within a slab (device copies and
/// vectorised loads like it).
const ALIGN: usize = 256;

/// Where an insertion may find its room.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Room {
    /// Evicting least recently used entries if it must: what a question's
    /// own states do.
    Evict,
    /// Only memory no entry holds: what preloading does, so that it never
    /// pushes out what questions used.
    Free,
}

/// One state held by a pool.
pub(crate) struct Entry {
    key: String,
    slab: usize,
    off: usize,
    len: usize,
    meta: CellsMeta,
    /// Per layer, the offsets of its K and V sections from `off`.
    sections: Vec<(usize, usize)>,
    last_used: AtomicU64,
}

/// An answer's hold on a pooled state: while it lives, the entry is not
/// evicted. Identifies its pool by index in the engine's tiers.
#[derive(Clone)]
pub struct Lease {
    pub(crate) tier: usize,
    pub(crate) entry: Arc<Entry>,
}

impl std::fmt::Debug for Lease {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Lease(tier {}, {})", self.tier, self.entry.key)
    }
}

impl Lease {
    /// Cells the leased state holds.
    pub fn cells(&self) -> usize {
        self.entry.meta.cells()
    }
}

/// A tier's use, for `cache stats` and answers' stats.
#[derive(Clone, Debug, Default, Serialize, serde::Deserialize)]
pub struct TierStats {
    pub tier: String,
    pub budget_bytes: u64,
    /// Bytes held by entries.
    pub used_bytes: u64,
    /// Bytes allocated in slabs (used or free).
    pub reserved_bytes: u64,
    pub entries: usize,
    pub hits: u64,
    pub inserts: u64,
    pub evictions: u64,
    /// States not kept because nothing could be evicted to make room.
    pub refused: u64,
}

struct Slab {
    buf: NonNull<sys::ggml_backend_buffer>,
    ctx: NonNull<sys::ggml_context>,
    /// One byte tensor over the whole slab, to write into it on any device.
    whole: NonNull<sys::ggml_tensor>,
    size: usize,
    /// Free ranges `(start, len)`, sorted, coalesced.
    free: Vec<(usize, usize)>,
}

impl Slab {
    /// # Safety
    /// Once, for a slab made by [`Pool::new_slab`] that nothing uses any more.
    unsafe fn free_buffers(self) {
        // SAFETY: per the contract.
        unsafe {
            sys::ggml_free(self.ctx.as_ptr());
            sys::ggml_backend_buffer_free(self.buf.as_ptr());
        }
    }
}

/// How a pool's entries reach the KV cache.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CopyKind {
    /// From host memory: `ggml_backend_tensor_set` (and `_2d` for V).
    FromHost,
    /// A ggml graph of copies computed on the pool's device: what device
    /// memory needs (and tests force on the CPU to prove the same code).
    Graph,
}

pub(crate) struct Pool {
    name: &'static str,
    buft: sys::ggml_backend_buffer_type_t,
    copy: CopyKind,
    threads: i32,
    /// For [`CopyKind::Graph`], made when first needed.
    backend: Option<NonNull<sys::ggml_backend>>,
    /// `None`: a slab given back; entries keep their slab's index.
    slabs: Vec<Option<Slab>>,
    slab_bytes: usize,
    budget: usize,
    entries: HashMap<String, Arc<Entry>>,
    clock: u64,
    stats: TierStats,
}

// SAFETY: the raw ggml handles are owned by the pool and used only under the
// engine's tier mutex (module invariant), never from two threads at once.
unsafe impl Send for Pool {}

impl Pool {
    /// A pool of `budget` bytes in `buft`. `CopyKind::FromHost` needs a host
    /// buffer type.
    pub fn new(
        name: &'static str,
        buft: sys::ggml_backend_buffer_type_t,
        copy: CopyKind,
        budget: usize,
        threads: i32,
    ) -> Self {
        Self {
            name,
            buft,
            copy,
            threads,
            backend: None,
            slabs: Vec::new(),
            slab_bytes: (256 << 20).min(budget.max(1)),
            budget,
            entries: HashMap::new(),
            clock: 0,
            stats: TierStats {
                tier: name.to_string(),
                budget_bytes: budget as u64,
                ..TierStats::default()
            },
        }
    }

    pub fn name(&self) -> &'static str {
        self.name
    }

    pub fn stats(&self) -> TierStats {
        let mut s = self.stats.clone();
        s.entries = self.entries.len();
        s.used_bytes = self.entries.values().map(|e| e.len as u64).sum();
        s.reserved_bytes = self.reserved() as u64;
        s
    }

    fn reserved(&self) -> usize {
        self.slabs.iter().flatten().map(|s| s.size).sum()
    }

    /// Live slabs in which no lease holds an entry, with the last use of
    /// their entries (0: empty).
    fn free_slabs(&self) -> Vec<(usize, u64)> {
        let mut last = vec![Some(0u64); self.slabs.len()];
        for e in self.entries.values() {
            let slot = &mut last[e.slab];
            *slot = match Arc::strong_count(e) > 1 {
                true => None,
                false => slot.map(|t| t.max(e.last_used.load(Ordering::Relaxed))),
            };
        }
        last.into_iter()
            .enumerate()
            .filter(|(i, _)| self.slabs[*i].is_some())
            .filter_map(|(i, t)| Some((i, t?)))
            .collect()
    }

    /// Bytes [`Self::reclaim`] could give back now: the slabs in which no
    /// lease holds an entry.
    pub fn reclaimable(&self) -> usize {
        let size = |i: usize| self.slabs[i].as_ref().map_or(0, |s| s.size);
        self.free_slabs().into_iter().map(|(i, _)| size(i)).sum()
    }

    /// Gives back at least `bytes` of slab memory if it can, a whole slab at
    /// a time: of the slabs no lease holds anything in, the one used least
    /// recently, its entries evicted (only entries whose memory is freed go).
    /// Returns the bytes given back.
    pub fn reclaim(&mut self, bytes: usize) -> usize {
        let mut freed = 0;
        let mut victims = self.free_slabs();
        victims.sort_by_key(|&(_, last)| last);
        for (i, _) in victims {
            if freed >= bytes {
                break;
            }
            let before = self.entries.len();
            self.entries.retain(|_, e| e.slab != i);
            self.stats.evictions += (before - self.entries.len()) as u64;
            if let Some(s) = self.slabs[i].take() {
                freed += s.size;
                // SAFETY: made by this pool; its entries are gone and none
                // was leased.
                unsafe { s.free_buffers() };
            }
        }
        freed
    }

    fn tick(&mut self) -> u64 {
        self.clock += 1;
        self.clock
    }

    /// The entry for `key`, marked as just used.
    pub fn get(&mut self, key: &str) -> Option<Arc<Entry>> {
        let now = self.tick();
        let e = self.entries.get(key)?;
        e.last_used.store(now, Ordering::Relaxed);
        self.stats.hits += 1;
        Some(Arc::clone(e))
    }

    /// Whether the pool holds a state under `key` (its last use unchanged).
    pub fn contains(&self, key: &str) -> bool {
        self.entries.contains_key(key)
    }

    /// Keeps a copy of a state shaped `meta`, whose sections are read from
    /// host memory through `src(layer, is_v)`. `None` when it cannot be
    /// kept (bigger than the budget, everything else in use, or, with
    /// [`Room::Free`], no free room).
    ///
    /// # Safety
    /// `src(l, v)` must point to `meta`'s section's `len` readable bytes.
    pub unsafe fn insert(
        &mut self,
        key: &str,
        meta: &CellsMeta,
        src: &dyn Fn(usize, bool) -> *const u8,
        room: Room,
    ) -> Option<Arc<Entry>> {
        if let Some(e) = self.get(key) {
            return Some(e);
        }
        let mut sections = Vec::with_capacity(meta.k.len());
        let mut len = 0;
        for (k, v) in meta.k.iter().zip(&meta.v) {
            let ko = len;
            len = (ko + k.len).next_multiple_of(ALIGN);
            let vo = len;
            len = (vo + v.len).next_multiple_of(ALIGN);
            sections.push((ko, vo));
        }
        let Some((slab, off)) = self.allocate(len.max(ALIGN), room) else {
            if room == Room::Evict {
                self.stats.refused += 1;
            }
            return None;
        };
        let whole = self.slabs[slab].as_ref()?.whole;
        for (l, &(ko, vo)) in sections.iter().enumerate() {
            // SAFETY: the range lies inside the slab's tensor (allocated for
            // `len` bytes at `off`); the caller vouches for the sources.
            unsafe {
                sys::ggml_backend_tensor_set(
                    whole.as_ptr(),
                    src(l, false).cast(),
                    off + ko,
                    meta.k[l].len,
                );
                sys::ggml_backend_tensor_set(
                    whole.as_ptr(),
                    src(l, true).cast(),
                    off + vo,
                    meta.v[l].len,
                );
            }
        }
        let now = self.tick();
        let e = Arc::new(Entry {
            key: key.to_string(),
            slab,
            off,
            len: len.max(ALIGN),
            meta: meta.clone(),
            sections,
            last_used: AtomicU64::new(now),
        });
        self.entries.insert(key.to_string(), Arc::clone(&e));
        self.stats.inserts += 1;
        Some(e)
    }

    /// Where entry `e`'s section of layer `l` (`v`: V, else K) starts, when
    /// the pool is host memory.
    pub fn host_ptr(&self, e: &Entry, l: usize, v: bool) -> Option<*const u8> {
        let slab = self.slabs.get(e.slab)?.as_ref()?;
        // SAFETY: a live slab buffer (module invariant).
        if !unsafe { sys::ggml_backend_buffer_is_host(slab.buf.as_ptr()) } {
            return None;
        }
        let (ko, vo) = e.sections[l];
        // SAFETY: as above; the base of a host buffer is host memory and the
        // offset lies inside the entry's range.
        let base = unsafe { sys::ggml_backend_buffer_get_base(slab.buf.as_ptr()) } as *const u8;
        Some(base.wrapping_add(e.off + if v { vo } else { ko }))
    }

    /// The shape of entry `e`'s state.
    pub fn meta(e: &Entry) -> &CellsMeta {
        &e.meta
    }

    /// Writes the leased entries into `kv`, each at its first cell, in
    /// sequence `seq`. Every entry is checked against the cache first.
    pub fn place(&mut self, kv: &KvCache, seq: i32, at: &[(&Entry, usize)]) -> Result<(), String> {
        for (e, cell0) in at {
            if !self.holds(e) {
                return Err(format!(
                    "state {} is no longer in the {} tier",
                    e.key, self.name
                ));
            }
            kv.check(&e.meta, *cell0)?;
        }
        for (e, cell0) in at {
            kv.claim(seq, *cell0, &e.meta.positions)?;
        }
        match self.copy {
            CopyKind::FromHost => {
                for (e, cell0) in at {
                    for l in 0..e.meta.k.len() {
                        let (k, v) = kv.tensors(l);
                        let (Some(ks), Some(vs)) =
                            (self.host_ptr(e, l, false), self.host_ptr(e, l, true))
                        else {
                            return Err(format!("the {} tier is not host memory", self.name));
                        };
                        // SAFETY: checked above; the entry's sections lie
                        // in its slab.
                        unsafe {
                            kv.write_host(&e.meta.k[l], ks, k, *cell0, e.meta.cells());
                            kv.write_host(&e.meta.v[l], vs, v, *cell0, e.meta.cells());
                        }
                    }
                }
                Ok(())
            }
            CopyKind::Graph => self.place_by_graph(kv, at),
        }
    }

    fn holds(&self, e: &Entry) -> bool {
        self.entries
            .get(&e.key)
            .is_some_and(|mine| std::ptr::eq(Arc::as_ptr(mine), e))
    }

    /// One graph of `ggml_cpy`s from pool views to cache views, computed on
    /// the pool's device.
    fn place_by_graph(&mut self, kv: &KvCache, at: &[(&Entry, usize)]) -> Result<(), String> {
        let backend = self.backend()?;
        let copies: usize = at.iter().map(|(e, _)| 2 * e.meta.k.len()).sum();
        // Per copy: the source (a leaf), the destination view and the copy
        // (nodes).
        let graph_size = 3 * copies + 8;
        // SAFETY: plain size queries.
        let mem = unsafe {
            sys::ggml_tensor_overhead() * graph_size
                + sys::ggml_graph_overhead_custom(graph_size, false)
        };
        let params = sys::ggml_init_params {
            mem_size: mem,
            mem_buffer: std::ptr::null_mut(),
            no_alloc: true,
        };
        // SAFETY: a fresh metadata-only context, freed below.
        let ctx = NonNull::new(unsafe { sys::ggml_init(params) })
            .ok_or("ggml could not make a graph context")?;
        let result = (|| {
            // SAFETY: `ctx` holds room for every tensor and the graph; each
            // source tensor is placed inside its entry's range of a live
            // slab, each destination is a view inside a live cache tensor
            // (`kv.check` passed in `place`), and both sides hold the same
            // element count.
            unsafe {
                let gf = sys::ggml_new_graph_custom(ctx.as_ptr(), graph_size, false);
                for (e, cell0) in at {
                    let Some(slab) = self.slabs[e.slab].as_ref() else {
                        return Err("a pooled state's memory was given back".to_string());
                    };
                    let base = sys::ggml_backend_buffer_get_base(slab.buf.as_ptr()) as *mut u8;
                    for l in 0..e.meta.k.len() {
                        let (kt, vt) = kv.tensors(l);
                        let (ko, vo) = e.sections[l];
                        for (s, t, o) in [(&e.meta.k[l], kt, ko), (&e.meta.v[l], vt, vo)] {
                            let (src, dst) = views(ctx, s, t, *cell0, e.meta.cells(), kv.cells());
                            let addr = base.wrapping_add(e.off + o).cast();
                            if sys::ggml_backend_tensor_alloc(slab.buf.as_ptr(), src, addr) != 0 {
                                return Err("ggml could not place a pool tensor".to_string());
                            }
                            if sys::ggml_backend_view_init(dst) != 0 {
                                return Err("ggml could not view the KV cache".to_string());
                            }
                            let cpy = sys::ggml_cpy(ctx.as_ptr(), src, dst);
                            sys::ggml_build_forward_expand(gf, cpy);
                        }
                    }
                }
                if sys::ggml_backend_graph_compute(backend.as_ptr(), gf) != 0 {
                    return Err("the copy into the KV cache failed on the device".to_string());
                }
            }
            Ok(())
        })();
        // SAFETY: made above; the graph and tensors die with it.
        unsafe { sys::ggml_free(ctx.as_ptr()) };
        result
    }

    /// The backend of the pool's device, made once.
    fn backend(&mut self) -> Result<NonNull<sys::ggml_backend>, String> {
        if let Some(b) = self.backend {
            return Ok(b);
        }
        // SAFETY: device queries and a backend for that device, freed in Drop.
        let b = unsafe {
            // Host memory of no particular device is the CPU's.
            let dev = sys::ggml_backend_buft_get_device(self.buft);
            let b = if !dev.is_null() {
                sys::ggml_backend_dev_init(dev, std::ptr::null())
            } else if sys::ggml_backend_buft_is_host(self.buft) {
                sys::ggml_backend_cpu_init()
            } else {
                std::ptr::null_mut()
            };
            let b = NonNull::new(b)
                .ok_or_else(|| format!("no backend for the {} tier's device", self.name))?;
            if sys::ggml_backend_is_cpu(b.as_ptr()) {
                sys::ggml_backend_cpu_set_n_threads(b.as_ptr(), self.threads.max(1));
            }
            b
        };
        self.backend = Some(b);
        Ok(b)
    }

    /// A range of `len` bytes: first fit in a slab, else a new slab within
    /// the budget, else (with [`Room::Evict`]) after evicting the least
    /// recently used entries no lease holds.
    fn allocate(&mut self, len: usize, room: Room) -> Option<(usize, usize)> {
        if len > self.budget {
            return None;
        }
        loop {
            if let Some(found) = self.first_fit(len) {
                return Some(found);
            }
            let reserved = self.reserved();
            let size = self.slab_bytes.max(len);
            if reserved + size <= self.budget {
                if let Some(i) = self.new_slab(size) {
                    return self.first_fit(len).or(Some((i, 0)));
                }
            }
            if room == Room::Free || !self.evict_one() {
                return None;
            }
        }
    }

    fn first_fit(&mut self, len: usize) -> Option<(usize, usize)> {
        for (i, slab) in self.slabs.iter_mut().enumerate() {
            let Some(slab) = slab.as_mut() else { continue };
            if let Some(j) = slab.free.iter().position(|&(_, l)| l >= len) {
                let (start, l) = slab.free[j];
                if l == len {
                    slab.free.remove(j);
                } else {
                    slab.free[j] = (start + len, l - len);
                }
                return Some((i, start));
            }
        }
        None
    }

    fn new_slab(&mut self, size: usize) -> Option<usize> {
        // SAFETY: allocation in the pool's buffer type, and one byte tensor
        // over it in a metadata context; both freed in Drop.
        unsafe {
            let buf = NonNull::new(sys::ggml_backend_buft_alloc_buffer(self.buft, size))?;
            let params = sys::ggml_init_params {
                mem_size: sys::ggml_tensor_overhead() * 2,
                mem_buffer: std::ptr::null_mut(),
                no_alloc: true,
            };
            let Some(ctx) = NonNull::new(sys::ggml_init(params)) else {
                sys::ggml_backend_buffer_free(buf.as_ptr());
                return None;
            };
            let whole = sys::ggml_new_tensor_1d(ctx.as_ptr(), sys::GGML_TYPE_I8, size as i64);
            let base = sys::ggml_backend_buffer_get_base(buf.as_ptr());
            let Some(whole) = NonNull::new(whole)
                .filter(|w| sys::ggml_backend_tensor_alloc(buf.as_ptr(), w.as_ptr(), base) == 0)
            else {
                sys::ggml_free(ctx.as_ptr());
                sys::ggml_backend_buffer_free(buf.as_ptr());
                return None;
            };
            let slab = Slab {
                buf,
                ctx,
                whole,
                size,
                free: vec![(0, size)],
            };
            // A given-back slot first: entries name slabs by index.
            match self.slabs.iter().position(Option::is_none) {
                Some(i) => {
                    self.slabs[i] = Some(slab);
                    Some(i)
                }
                None => {
                    self.slabs.push(Some(slab));
                    Some(self.slabs.len() - 1)
                }
            }
        }
    }

    /// Evicts the least recently used entry no lease holds; `false` if none.
    fn evict_one(&mut self) -> bool {
        let victim = self
            .entries
            .values()
            .filter(|e| Arc::strong_count(e) == 1)
            .min_by_key(|e| e.last_used.load(Ordering::Relaxed))
            .map(|e| e.key.clone());
        let Some(key) = victim else { return false };
        if let Some(e) = self.entries.remove(&key) {
            self.release(e.slab, e.off, e.len);
            self.stats.evictions += 1;
        }
        true
    }

    fn release(&mut self, slab: usize, start: usize, len: usize) {
        let Some(slab) = self.slabs[slab].as_mut() else {
            return;
        };
        let free = &mut slab.free;
        let at = free.partition_point(|&(s, _)| s < start);
        free.insert(at, (start, len));
        // Coalesce with the neighbours.
        if at + 1 < free.len() && free[at].0 + free[at].1 == free[at + 1].0 {
            free[at].1 += free[at + 1].1;
            free.remove(at + 1);
        }
        if at > 0 && free[at - 1].0 + free[at - 1].1 == free[at].0 {
            free[at - 1].1 += free[at].1;
            free.remove(at);
        }
    }
}

/// The source (a contiguous tensor, not yet placed) and destination (a view
/// of the cache tensor `t` at cells `cell0..cell0 + n`) of one section's copy.
///
/// # Safety
/// `ctx` must have room for two tensors; `s` must fit `t` (`KvCache::check`).
unsafe fn views(
    ctx: NonNull<sys::ggml_context>,
    s: &SectionMeta,
    t: NonNull<sys::ggml_tensor>,
    cell0: usize,
    n: usize,
    cells: usize,
) -> (*mut sys::ggml_tensor, *mut sys::ggml_tensor) {
    let ty = s.ty as sys::ggml_type;
    // SAFETY: per the contract.
    unsafe {
        let ne0 = t.as_ref().ne[0];
        match s.layout {
            SectionLayout::Rows { row_bytes } => (
                sys::ggml_new_tensor_2d(ctx.as_ptr(), ty, ne0, n as i64),
                sys::ggml_view_2d(
                    ctx.as_ptr(),
                    t.as_ptr(),
                    ne0,
                    n as i64,
                    row_bytes,
                    cell0 * row_bytes,
                ),
            ),
            SectionLayout::Transposed { rows, elem_bytes } => (
                sys::ggml_new_tensor_2d(ctx.as_ptr(), ty, n as i64, rows as i64),
                sys::ggml_view_2d(
                    ctx.as_ptr(),
                    t.as_ptr(),
                    n as i64,
                    rows as i64,
                    cells * elem_bytes,
                    cell0 * elem_bytes,
                ),
            ),
        }
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        // SAFETY: each handle was made by this pool and is freed once; no
        // lease can use them without the pool (module invariant).
        unsafe {
            for s in self.slabs.drain(..).flatten() {
                s.free_buffers();
            }
            if let Some(b) = self.backend.take() {
                sys::ggml_backend_free(b.as_ptr());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cpu_pool(budget: usize) -> Pool {
        // SAFETY: the CPU buffer type is a static of ggml's.
        let buft = unsafe { sys::ggml_backend_cpu_buffer_type() };
        let mut p = Pool::new("ram", buft, CopyKind::FromHost, budget, 1);
        p.slab_bytes = 4096;
        p
    }

    fn meta(bytes: usize) -> CellsMeta {
        let s = SectionMeta {
            ty: 1,
            layout: SectionLayout::Rows { row_bytes: bytes },
            len: bytes,
        };
        CellsMeta {
            positions: vec![7],
            v_trans: false,
            k: vec![s],
            v: vec![s],
        }
    }

    fn put_in(p: &mut Pool, key: &str, fill: u8, room: Room) -> Option<Arc<Entry>> {
        let data = vec![fill; 1000];
        let src = |_: usize, _: bool| data.as_ptr();
        // SAFETY: every section is 1000 bytes, `data` holds 1000.
        unsafe { p.insert(key, &meta(1000), &src, room) }
    }

    fn put(p: &mut Pool, key: &str, fill: u8) -> Option<Arc<Entry>> {
        put_in(p, key, fill, Room::Evict)
    }

    #[test]
    fn free_room_only_fills_and_never_evicts() {
        // Two 4 KiB slabs: four entries fit.
        let mut p = cpu_pool(8192);
        for (k, fill) in [("a", 1), ("b", 2), ("c", 3), ("d", 4)] {
            assert!(put_in(&mut p, k, fill, Room::Free).is_some(), "{k}");
        }
        assert!(put_in(&mut p, "e", 5, Room::Free).is_none(), "full");
        for k in ["a", "b", "c", "d"] {
            assert!(p.contains(k), "{k} stays");
        }
        assert!(!p.contains("e"));
        // An entry already held is found, not refused.
        assert!(put_in(&mut p, "a", 1, Room::Free).is_some());
        let s = p.stats();
        assert_eq!((s.entries, s.evictions, s.refused), (4, 0, 0), "{s:?}");
        // A question's state still makes room.
        assert!(put(&mut p, "e", 5).is_some());
        assert_eq!(p.stats().evictions, 1);
    }

    #[test]
    fn entries_round_trip_and_the_least_recently_used_free_one_goes_first() {
        // Two 4 KiB slabs; an entry takes 2 × 1024 bytes (aligned).
        let mut p = cpu_pool(8192);
        for (k, fill) in [("a", 1), ("b", 2), ("c", 3), ("d", 4)] {
            assert!(put(&mut p, k, fill).is_some(), "{k}");
        }
        let e = p.get("b").expect("b");
        // SAFETY: host pool; 1000 bytes at the section start.
        let back =
            unsafe { std::slice::from_raw_parts(p.host_ptr(&e, 0, true).expect("host"), 1000) };
        assert!(back.iter().all(|&b| b == 2));
        drop(e);
        p.get("a"); // "c" is now the least recently used
        let held = p.get("c").expect("c"); // leased: not evictable
        assert!(put(&mut p, "e", 5).is_some());
        assert!(p.get("d").is_none(), "d went: least recently used and free");
        assert!(p.get("c").is_some(), "c was leased");
        drop(held);
        let s = p.stats();
        assert_eq!((s.entries, s.evictions, s.reserved_bytes), (4, 1, 8192));
    }

    #[test]
    fn slabs_nothing_leased_lies_in_are_given_back_on_demand() {
        // Three 4 KiB slabs of two entries each; "c" (slab 1) is leased.
        let mut p = cpu_pool(3 * 4096);
        for (k, fill) in [("a", 1), ("b", 2), ("c", 3), ("d", 4), ("e", 5), ("f", 6)] {
            assert!(put(&mut p, k, fill).is_some(), "{k}");
        }
        assert_eq!(p.stats().reserved_bytes, 3 * 4096);
        let held = p.get("c").expect("c");
        assert_eq!(p.reclaimable(), 2 * 4096, "the leased entry's slab stays");
        // "a" and "b" become the least recently used.
        for k in ["f", "e", "d"] {
            p.get(k);
        }
        // One slab's worth: slab 0 (a and b, used least recently) goes whole.
        assert_eq!(p.reclaim(1), 4096);
        assert!(p.get("a").is_none() && p.get("b").is_none());
        for k in ["d", "e", "f"] {
            assert!(p.get(k).is_some(), "{k}: not needed");
        }
        assert_eq!(p.stats().reserved_bytes, 2 * 4096);
        // Everything that can go: only the leased entry's slab is left,
        // with "d" beside it (evicting it would free nothing).
        assert_eq!(p.reclaim(u64::MAX as usize), 4096);
        assert_eq!(p.reclaimable(), 0);
        let s = p.stats();
        assert_eq!((s.entries, s.reserved_bytes), (2, 4096), "{s:?}");
        assert!(p.get("d").is_some());
        // SAFETY: host pool; 1000 bytes at the section start.
        let back =
            unsafe { std::slice::from_raw_parts(p.host_ptr(&held, 0, false).expect("host"), 1000) };
        assert!(back.iter().all(|&b| b == 3), "the leased state is intact");
        // Given-back slots are reused: the budget still holds three slabs.
        drop(held);
        for (k, fill) in [("g", 7), ("h", 8), ("i", 9), ("j", 10), ("k", 11)] {
            assert!(put(&mut p, k, fill).is_some(), "{k}");
        }
        assert_eq!(p.stats().reserved_bytes, 3 * 4096);
        let i = p.get("i").expect("i");
        // SAFETY: as above.
        let back =
            unsafe { std::slice::from_raw_parts(p.host_ptr(&i, 0, true).expect("host"), 1000) };
        assert!(back.iter().all(|&b| b == 9));
    }

    #[test]
    fn nothing_is_kept_when_everything_is_in_use_or_too_big() {
        let mut p = cpu_pool(4096);
        let a = put(&mut p, "a", 1);
        let b = put(&mut p, "b", 2);
        assert!(a.is_some() && b.is_some());
        assert!(put(&mut p, "c", 3).is_none(), "both leased");
        drop(a);
        assert!(put(&mut p, "c", 3).is_some(), "a made room");
        let mut tiny = cpu_pool(1000);
        assert!(put(&mut tiny, "x", 1).is_none(), "bigger than the budget");
        assert_eq!(tiny.stats().refused, 1);
    }

    #[test]
    fn freed_ranges_coalesce() {
        let mut p = cpu_pool(4096);
        let ids: Vec<_> = ["a", "b"].iter().map(|k| put(&mut p, k, 0)).collect();
        drop(ids);
        while p.evict_one() {}
        assert_eq!(p.slabs[0].as_ref().expect("slab").free, vec![(0, 4096)]);
    }
}
