//! One llama.cpp context and the APE operations on it: encode the prefix and
//! chunks into states, assemble states side by side ("parallel positions"),
//! prefill sequentially as the baseline, and evaluate question tokens.
//!
//! Cell layout after [`Session::load_parallel`] in a cleared unified cache:
//! prefix cells `[0, P)`, chunk cells `[P, P + ΣL)` in load order, then
//! question and generated tokens. Chunk positions all start at `P`; the
//! question starts at position `P + max L`. The APE callback edits the chunk
//! columns `[P, P + ΣL)`.

use std::ffi::c_void;
use std::mem::ManuallyDrop;
use std::num::NonZeroU32;
use std::ops::Range;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr::NonNull;

use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::context::session::LlamaStateSeqFlags;
use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::LlamaToken;
use llama_cpp_sys_2 as sys;

use super::ape::ApeParams;
use super::hook::{eval_callback, ActiveApe, Attribution, ChunkLayout, DevicePath, Hook, Probe};
use super::kv::{CellsMeta, KvCache};
use super::pool::Lease;
use super::raw_params::with_eval_callback;
use super::seqstate;
use super::seqstate::Blob;
use super::state::{ChunkState, PrefixId, PrefixState};
use super::{Engine, EngineError, TokenId};

const SEQ_MAIN: i32 = 0;
/// Cells on their way to the main sequence: the PCW reference
/// ([`Session::load_alone_reference`]) and an echo before its shift
/// ([`Session::echo`]).
const SEQ_ASIDE: i32 = 1;

/// Where APE's edit of the chunk logits runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EditPath {
    /// Inside llama.cpp's softmax (the patch): no graph split, on CPU and
    /// CUDA alike. What answers use.
    Softmax,
    /// In the eval callback on `kq`, splitting the graph at every layer:
    /// what focus needs, and the reference the softmax path is checked
    /// against.
    Callback,
}

/// A context bound to an [`Engine`]'s model. Not `Sync`: one thread decodes.
pub struct Session<'e> {
    engine: &'e Engine,
    ctx: ManuallyDrop<LlamaContext<'e>>,
    /// Owned; freed in `Drop` after the context that points to it.
    hook: NonNull<Hook>,
    batch: LlamaBatch<'static>,
    n_batch: usize,
    n_ctx: usize,
    /// Position of the next token in the main sequence.
    next_pos: i32,
    /// KV cells in use (chunks share positions, not cells).
    used_cells: usize,
    /// Batch index of the last token whose logits were requested.
    last_logits: Option<i32>,
    /// CPU worker threads kept for the context's life (`None` if the raw
    /// context could not be reached: llama.cpp's per-compute threads).
    threadpool: Option<Threadpool>,
    /// What may stop this session's decodes (boxed: llama.cpp holds its
    /// address).
    interrupt: Option<Box<Interruption>>,
}

/// Asked between graph nodes while a session decodes; `true` stops the
/// decode, which then fails with [`EngineError::Interrupted`]. Background
/// encoding uses it to give way to a question within milliseconds instead
/// of after the chunk in flight (seconds on a CPU).
pub type Interrupt = Box<dyn FnMut() -> bool>;

struct Interruption {
    check: Interrupt,
    /// Whether `check` stopped the current decode.
    fired: bool,
}

/// llama.cpp's abort callback. `data` is the session's `Interruption`; it
/// runs on the decoding thread inside `llama_decode`, so it must not panic.
unsafe extern "C" fn abort_callback(data: *mut c_void) -> bool {
    if data.is_null() {
        return false;
    }
    // SAFETY: `data` is the session's boxed `Interruption`, alive while the
    // callback is installed and touched only by the decoding thread.
    let i = unsafe { &mut *(data as *mut Interruption) };
    let stop = catch_unwind(AssertUnwindSafe(|| (i.check)())).unwrap_or(false);
    i.fired |= stop;
    stop
}

/// A ggml CPU thread pool attached to one context. Without it, llama.cpp
/// starts and joins its worker threads for every graph compute, and APE's
/// edit splits every decode into one compute per layer; with it, workers
/// persist and, after a short poll ([`super::EngineOptions::poll`]), sleep
/// instead of spinning while idle, so they leave the cores to whoever else
/// computes.
struct Threadpool {
    pool: *mut sys::ggml_threadpool,
    ctx: std::ptr::NonNull<sys::llama_context>,
}

impl Threadpool {
    fn attach(ctx: &LlamaContext<'_>, threads: i32, poll: u32) -> Option<Self> {
        let raw = super::raw_params::context_ptr(ctx)?;
        // SAFETY: `raw` is the live context behind `ctx` (checked by the
        // Debug format test); the params come from ggml's own defaults.
        unsafe {
            let mut params = sys::ggml_threadpool_params_default(threads);
            params.poll = poll;
            let pool = sys::ggml_threadpool_new(&mut params);
            if pool.is_null() {
                return None;
            }
            sys::llama_attach_threadpool(raw.as_ptr(), pool, pool);
            Some(Self { pool, ctx: raw })
        }
    }
}

impl Drop for Threadpool {
    fn drop(&mut self) {
        // SAFETY: detached while the context is still alive (the session
        // drops this before the context), then freed once.
        unsafe {
            sys::llama_detach_threadpool(self.ctx.as_ptr());
            sys::ggml_threadpool_free(self.pool);
        }
    }
}

impl<'e> Session<'e> {
    pub(super) fn new(engine: &'e Engine, cells: u32) -> Result<Self, EngineError> {
        Self::make(engine, cells, false)
    }

    /// A session with flash attention on ([`Engine::flash_session`]).
    pub(super) fn with_flash(engine: &'e Engine, cells: u32) -> Result<Self, EngineError> {
        Self::make(engine, cells, true)
    }

    fn make(engine: &'e Engine, cells: u32, flash: bool) -> Result<Self, EngineError> {
        let o = &engine.options;
        let attention = if flash {
            llama_cpp_sys_2::LLAMA_FLASH_ATTN_TYPE_ENABLED
        } else {
            llama_cpp_sys_2::LLAMA_FLASH_ATTN_TYPE_DISABLED
        };
        let threads = o.threads as i32;
        let hook = NonNull::from(Box::leak(Box::<Hook>::default()));
        // A context far past the usual size decodes in smaller micro-batches,
        // so that llama.cpp's attention scratch stays bounded.
        let ubatch = super::memory::ubatch_for(&engine.info, cells as usize, o.batch_tokens);
        let params = LlamaContextParams::default()
            .with_n_ctx(NonZeroU32::new(cells))
            .with_n_batch(o.batch_tokens)
            .with_n_ubatch(ubatch)
            .with_n_seq_max(2)
            .with_kv_unified(true)
            .with_flash_attention_policy(attention)
            .with_type_k(o.kv_type.into())
            .with_type_v(llama_cpp_2::context::params::KvCacheType::F16)
            .with_n_threads(threads)
            .with_n_threads_batch(threads);
        let params = with_eval_callback(params, eval_callback, hook.as_ptr() as *mut c_void);
        let ctx = match engine.model.new_context(super::backend()?, params) {
            Ok(ctx) => ctx,
            Err(e) => {
                // SAFETY: no context was created, so nothing else holds the hook.
                drop(unsafe { Box::from_raw(hook.as_ptr()) });
                return Err(EngineError::Context(e.to_string()));
            }
        };
        let n_ctx = ctx.n_ctx() as usize;
        let threadpool = Threadpool::attach(&ctx, threads, o.poll);
        if !flash {
            engine.ensure_tiers(&ctx);
        }
        Ok(Self {
            engine,
            ctx: ManuallyDrop::new(ctx),
            hook,
            batch: LlamaBatch::new(o.batch_tokens as usize, 1),
            n_batch: o.batch_tokens as usize,
            n_ctx,
            next_pos: 0,
            used_cells: 0,
            last_logits: None,
            threadpool,
            interrupt: None,
        })
    }

    /// Lets `check` stop this session's decodes (see [`Interrupt`]);
    /// `None` removes it. `false` if llama.cpp's context could not be
    /// reached: decodes then run to their end.
    pub fn set_interrupt(&mut self, check: Option<Interrupt>) -> bool {
        let Some(raw) = super::raw_params::context_ptr(&self.ctx) else {
            return false;
        };
        let mut boxed = check.map(|check| {
            Box::new(Interruption {
                check,
                fired: false,
            })
        });
        let data = boxed.as_deref_mut().map_or(std::ptr::null_mut(), |i| {
            i as *mut Interruption as *mut c_void
        });
        let callback = boxed.as_ref().map(|_| abort_callback as _);
        // SAFETY: `raw` is the live context behind `self.ctx`; `data` stays
        // valid until the next call here replaces the callback, or until the
        // session drops (the context goes first).
        unsafe { sys::llama_set_abort_callback(raw.as_ptr(), callback, data) };
        self.interrupt = boxed;
        true
    }

    /// Whether llama.cpp computes with a persistent thread pool here.
    pub fn has_threadpool(&self) -> bool {
        self.threadpool.is_some()
    }

    fn hook_ref(&self) -> &Hook {
        // SAFETY: as in `hook`; shared access outside llama_decode.
        unsafe { self.hook.as_ref() }
    }

    fn hook(&mut self) -> &mut Hook {
        // SAFETY: only called outside llama_decode (we hold &mut self), so the
        // callback is not running and this is the only reference.
        unsafe { self.hook.as_mut() }
    }

    /// The engine this session decodes with.
    pub fn engine(&self) -> &'e Engine {
        self.engine
    }

    /// KV cells the context holds in total.
    pub fn capacity(&self) -> usize {
        self.n_ctx
    }

    /// Empties the KV cache and forgets the assembled layout.
    pub fn clear(&mut self) {
        self.ctx.clear_kv_cache();
        self.next_pos = 0;
        self.used_cells = 0;
        self.hook().layout = None;
        self.last_logits = None;
        self.hook().attribution = None;
        self.ape_off();
    }

    /// Turns APE off, in the callback and in llama.cpp's softmax.
    fn ape_off(&mut self) {
        self.hook().ape = None;
        self.set_softmax_ape(ApeParams::IDENTITY, 0..0);
    }

    /// Tells the patched llama.cpp which KV cells its softmax edits, with
    /// what (`cells` empty: none). Takes effect in the next graph.
    fn set_softmax_ape(&mut self, p: ApeParams, cells: Range<usize>) {
        if let Some(raw) = super::raw_params::context_ptr(&self.ctx) {
            // SAFETY: `raw` is the live context behind `self.ctx`; this only
            // stores four numbers for the next graph build.
            unsafe {
                sys::llama_ape_set_attention(
                    raw.as_ptr(),
                    p.temperature,
                    p.scale,
                    cells.start as i32,
                    cells.end as i32,
                )
            };
        }
    }

    /// Observes attention tensors during decoding (checks only; costs speed).
    pub fn set_probe(&mut self, probe: Option<Probe>) {
        self.hook().probe = probe;
        self.hook().probe_layers = None;
    }

    /// A probe shown only the attention weights (`kq_soft_max`) of the
    /// layers below `layers`: the graph splits there alone, so a choice
    /// made from the first layers costs little more than the decode.
    pub fn set_softmax_probe(&mut self, probe: Probe, layers: usize) {
        self.hook().probe = Some(probe);
        self.hook().probe_layers = Some(layers);
    }

    /// Computes the shared prefix's state (positions `0..P`).
    pub fn encode_prefix(&mut self, tokens: &[TokenId]) -> Result<PrefixState, EngineError> {
        self.clear();
        self.decode(tokens, SEQ_MAIN, false)?;
        let bytes = self.seq_bytes(SEQ_MAIN);
        let (model, kv) = (self.engine.info.id, self.engine.options.kv_type);
        Ok(PrefixState {
            tokens: tokens.to_vec(),
            bytes,
            id: PrefixId::new(model, kv, tokens),
            model,
            kv,
            alone: false,
        })
    }

    /// Encodes one chunk alone after the prefix, at positions `P..P+L`, and
    /// returns its state without the prefix cells. After a
    /// [`PrefixState::alone`] the chunk is encoded at the same positions
    /// with nothing before it in view (the PCW baseline).
    pub fn encode_chunk(
        &mut self,
        prefix: &PrefixState,
        tokens: &[TokenId],
    ) -> Result<ChunkState, EngineError> {
        if tokens.is_empty() {
            return Err(EngineError::EmptyChunk);
        }
        if prefix.alone {
            self.check_prefix(prefix)?;
            self.clear();
            self.next_pos = prefix.tokens.len() as i32;
        } else {
            self.load_prefix(prefix)?;
        }
        self.decode(tokens, SEQ_MAIN, false)?;
        let p = prefix.tokens.len() as u32;
        self.ctx
            .kv_cache_seq_rm(SEQ_MAIN, Some(0), Some(p))
            .map_err(|e| EngineError::Cache(e.to_string()))?;
        let bytes = self.seq_bytes(SEQ_MAIN);
        self.clear();
        Ok(ChunkState {
            tokens: tokens.to_vec(),
            bytes,
            at: 0,
            prefix: prefix.id,
            n_prefix: p,
            model: prefix.model,
            kv: prefix.kv,
            resident: None,
        })
    }

    /// Clears the cache and places the prefix in the main sequence.
    pub fn load_prefix(&mut self, prefix: &PrefixState) -> Result<(), EngineError> {
        self.check_prefix(prefix)?;
        if prefix.alone {
            return Err(EngineError::StateMismatch(
                "the no-prefix stand-in holds no prefix to answer after".into(),
            ));
        }
        self.clear();
        self.place(&[prefix.bytes.as_slice()], "shared prefix")?;
        self.next_pos = prefix.tokens.len() as i32;
        self.used_cells = prefix.tokens.len();
        Ok(())
    }

    fn check_prefix(&self, prefix: &PrefixState) -> Result<(), EngineError> {
        if prefix.model != self.engine.info.id || prefix.kv != self.engine.options.kv_type {
            return Err(EngineError::StateMismatch(
                "prefix state was made with another model or KV type".into(),
            ));
        }
        Ok(())
    }

    /// Places cached chunk states side by side after the prefix: every chunk
    /// keeps its positions `P..P+Lᵢ`, and the next token goes to `P + max Lᵢ`.
    /// Chunks may have been encoded after the prefix or alone (PCW); either
    /// way they sit at the positions after it. Prefix and chunks are written
    /// straight into the KV tensors ([`super::kv`]): cells `[0, P)` for the
    /// prefix, then each chunk's in load order.
    pub fn load_parallel(
        &mut self,
        prefix: &PrefixState,
        chunks: &[&ChunkState],
    ) -> Result<(), EngineError> {
        self.check_parallel(prefix, chunks)?;
        self.clear();
        self.place_parallel(prefix, chunks)?;
        self.after_parallel(prefix, chunks);
        Ok(())
    }

    /// [`Self::load_parallel`] through llama.cpp's own state restore of one
    /// concatenated blob ([`super::seqstate`]): the reference direct
    /// placement is checked against (`check::placement`).
    pub(crate) fn load_parallel_restored(
        &mut self,
        prefix: &PrefixState,
        chunks: &[&ChunkState],
    ) -> Result<(), EngineError> {
        let parts = self.parallel_parts(prefix, chunks)?;
        let plan = seqstate::plan(&parts)
            .map_err(|e| EngineError::StateMismatch(format!("cannot assemble the states: {e}")))?;
        let mut blob = vec![0u8; plan.len()];
        plan.write(&mut blob);
        self.clear();
        self.restore(&blob, SEQ_MAIN, "assembled prefix and chunk")?;
        self.after_parallel(prefix, chunks);
        Ok(())
    }

    /// The prefix's and the chunks' state bytes, checked to belong together
    /// and to fit the context.
    fn parallel_parts<'s>(
        &self,
        prefix: &'s PrefixState,
        chunks: &[&'s ChunkState],
    ) -> Result<Vec<&'s [u8]>, EngineError> {
        self.check_parallel(prefix, chunks)?;
        if chunks.iter().any(|c| !c.has_bytes()) {
            return Err(EngineError::StateMismatch(
                "a restore needs every chunk's bytes in host memory".into(),
            ));
        }
        Ok(std::iter::once(prefix.bytes.as_slice())
            .chain(chunks.iter().map(|c| c.payload()))
            .collect())
    }

    /// Prefix and chunks belong together and fit the context.
    fn check_parallel(
        &self,
        prefix: &PrefixState,
        chunks: &[&ChunkState],
    ) -> Result<(), EngineError> {
        let total: usize = chunks.iter().map(|c| c.tokens.len()).sum();
        self.ensure_room(prefix.tokens.len() + total)?;
        self.check_prefix(prefix)?;
        if prefix.alone {
            return Err(EngineError::StateMismatch(
                "the no-prefix stand-in holds no prefix to answer after".into(),
            ));
        }
        for (i, c) in chunks.iter().enumerate() {
            if c.prefix != prefix.id && c.prefix != prefix.id.alone() {
                return Err(EngineError::StateMismatch(format!(
                    "chunk {i} was encoded after a different prefix, model or KV type"
                )));
            }
        }
        Ok(())
    }

    /// Writes the prefix into cells `[0, P)` and each chunk into the cells
    /// after, in load order: from a memory tier when one holds the chunk
    /// (on a GPU, a copy inside device memory), else from its bytes. Every
    /// part is checked before any is written; a failure leaves the cache
    /// clear.
    fn place_parallel(
        &mut self,
        prefix: &PrefixState,
        chunks: &[&ChunkState],
    ) -> Result<(), EngineError> {
        let mut parts = vec![(prefix.bytes.as_slice(), None, prefix.tokens.len())];
        parts.extend(chunks.iter().map(|c| Self::part(c)));
        self.place_parts(&parts, 0, SEQ_MAIN)
    }

    /// A chunk as [`Self::place_parts`] takes it.
    fn part(c: &ChunkState) -> (&[u8], Option<&Lease>, usize) {
        (c.payload(), c.resident.as_ref(), c.tokens.len())
    }

    /// Writes `parts` (state bytes, the tier lease that may hold them, their
    /// tokens) into consecutive cells from `cell0`, for `seq`, each at the
    /// positions its state records. Every part is checked before any is
    /// written; a failure leaves the cache clear.
    fn place_parts(
        &mut self,
        parts: &[(&[u8], Option<&Lease>, usize)],
        cell0: usize,
        seq: i32,
    ) -> Result<(), EngineError> {
        let bad = |e: String| EngineError::StateMismatch(format!("chunk states: {e}"));
        let kv = self.kv().map_err(bad)?;
        let mut host: Vec<(usize, Blob<'_>)> = Vec::new();
        let mut pooled = Vec::new();
        let mut cell = cell0;
        for &(bytes, lease, tokens) in parts {
            match lease {
                Some(l) => {
                    if l.cells() != tokens {
                        return Err(bad(format!(
                            "a pooled state of {} cells for {tokens} tokens",
                            l.cells()
                        )));
                    }
                    pooled.push((l, cell));
                }
                None => {
                    let blob = seqstate::parse(bytes).map_err(bad)?;
                    if blob.cells() != tokens {
                        return Err(bad(format!(
                            "a state of {} cells for {tokens} tokens",
                            blob.cells()
                        )));
                    }
                    kv.check(&CellsMeta::of(&blob), cell).map_err(bad)?;
                    host.push((cell, blob));
                }
            }
            cell += tokens;
        }
        let placed = host
            .iter()
            .try_for_each(|(cell, blob)| kv.place(seq, *cell, blob))
            .and_then(|()| {
                if pooled.is_empty() {
                    return Ok(());
                }
                let mut tiers = self.engine.tiers.lock().map_err(|_| "tier lock poisoned")?;
                let tiers = tiers.as_mut().ok_or("no memory tiers")?;
                tiers.place(&kv, seq, &pooled)
            });
        if let Err(e) = placed {
            self.clear();
            return Err(bad(e));
        }
        Ok(())
    }

    /// The context's KV cache, reached through the patch.
    fn kv(&self) -> Result<KvCache, String> {
        let raw = super::raw_params::context_ptr(&self.ctx)
            .ok_or("llama.cpp's context cannot be reached")?;
        KvCache::of(raw)
    }

    fn after_parallel(&mut self, prefix: &PrefixState, chunks: &[&ChunkState]) {
        let total: usize = chunks.iter().map(|c| c.tokens.len()).sum();
        let p = prefix.tokens.len();
        let longest = chunks.iter().map(|c| c.tokens.len()).max().unwrap_or(0);
        self.next_pos = (p + longest) as i32;
        self.used_cells = p + total;
        self.hook().layout = Some(ChunkLayout::new(p, chunks, true));
    }

    /// Writes the state blobs `parts` into consecutive cells of the main
    /// sequence from cell 0 (the cache must be clear), each at the
    /// positions it records. Every part is checked before any is written; a
    /// failure leaves the cache clear.
    fn place(&mut self, parts: &[&[u8]], what: &str) -> Result<(), EngineError> {
        let bad = |e: String| EngineError::StateMismatch(format!("{what} state: {e}"));
        let Ok(kv) = self.kv() else {
            // Not one plain unified cache (sliding-window models keep two):
            // only sequential prefill runs there, which places the prefix
            // alone; llama.cpp's restore knows that cache's layout.
            if let [one] = parts {
                return self.restore(one, SEQ_MAIN, what);
            }
            let plan = seqstate::plan(parts).map_err(bad)?;
            let mut blob = vec![0u8; plan.len()];
            plan.write(&mut blob);
            return self.restore(&blob, SEQ_MAIN, what);
        };
        let blobs = parts
            .iter()
            .map(|p| seqstate::parse(p))
            .collect::<Result<Vec<_>, _>>()
            .map_err(bad)?;
        let mut cell = 0;
        for b in &blobs {
            kv.check(&CellsMeta::of(b), cell).map_err(bad)?;
            cell += b.cells();
        }
        let mut cell = 0;
        for b in &blobs {
            if let Err(e) = kv.place(SEQ_MAIN, cell, b) {
                self.clear();
                return Err(bad(e));
            }
            cell += b.cells();
        }
        Ok(())
    }

    /// The baseline: after [`Self::load_prefix`], decodes the chunks' tokens
    /// one after another, each chunk in its own decode call (the batch
    /// boundaries chunk encoding uses, so one chunk reproduces its state).
    pub fn load_sequential_chunks(&mut self, chunks: &[&ChunkState]) -> Result<(), EngineError> {
        let total: usize = chunks.iter().map(|c| c.tokens.len()).sum();
        self.ensure_room(self.used_cells + total)?;
        let start = self.used_cells;
        self.hook().layout = Some(ChunkLayout::new(start, chunks, false));
        for c in chunks {
            self.decode(&c.tokens, SEQ_MAIN, false)?;
        }
        Ok(())
    }

    /// Cached chunk states in the sequential layout, what selective
    /// recomputation ([`Self::recompute`]) repairs: after the prefix, chunk
    /// `i` (in the order given, the order sequential prefill reads) at
    /// positions `P + Σ_{j<i} L_j ..`, in the cells of the same indices, so
    /// that cell and position agree as they do after sequential prefill.
    /// Each state was computed at `P..P+Lᵢ`; llama.cpp's own K shift
    /// (`llama_memory_seq_add`, applied before the next decode) moves it
    /// there, as [`Self::echo`] moves a window. The cells still hold what
    /// each chunk saw alone after the prefix; the question reads them with
    /// ordinary attention (no APE).
    ///
    /// Needs a cache placement can address, an unquantized K and a model
    /// whose positions can shift; otherwise [`EngineError::EchoUnsupported`]
    /// and the cache is left clear.
    pub fn load_shifted(
        &mut self,
        prefix: &PrefixState,
        chunks: &[&ChunkState],
    ) -> Result<(), EngineError> {
        self.check_parallel(prefix, chunks)?;
        self.clear();
        self.ensure_shiftable()?;
        let p = prefix.tokens.len();
        let (first, rest) = chunks.split_at(chunks.len().min(1));
        let mut parts = vec![(prefix.bytes.as_slice(), None, p)];
        parts.extend(first.iter().map(|c| Self::part(c)));
        self.place_parts(&parts, 0, SEQ_MAIN)?;
        let mut cell = p + first.first().map_or(0, |c| c.tokens.len());
        for c in rest {
            let n = c.tokens.len();
            self.place_parts(&[Self::part(c)], cell, SEQ_ASIDE)?;
            if let Err(e) = self.move_aside(p as i32, n, cell as i32) {
                self.clear();
                return Err(e);
            }
            cell += n;
        }
        self.next_pos = cell as i32;
        self.used_cells = cell;
        self.hook().layout = Some(ChunkLayout::new(p, chunks, false));
        Ok(())
    }

    /// Moves the aside sequence's `n` cells at positions `from..` to
    /// positions `to..` by llama.cpp's K shift (`llama_memory_seq_add`,
    /// applied before the next decode: only the aside cells move, whatever
    /// the main sequence holds at those positions) and gives them to the
    /// main sequence. They were claimed aside at the positions their K was
    /// rotated for.
    fn move_aside(&mut self, from: i32, n: usize, to: i32) -> Result<(), EngineError> {
        let cache = |e: llama_cpp_2::context::kv_cache::KvCacheConversionError| {
            EngineError::Cache(e.to_string())
        };
        let (end, moved) = (from as u32 + n as u32, to as u32 + n as u32);
        self.ctx
            .kv_cache_seq_add(SEQ_ASIDE, Some(from as u32), Some(end), to - from)
            .map_err(cache)?;
        self.ctx
            .kv_cache_seq_cp(SEQ_ASIDE, SEQ_MAIN, Some(to as u32), Some(moved))
            .map_err(cache)?;
        self.ctx
            .clear_kv_cache_seq(Some(SEQ_ASIDE as u32), None, None)
            .map_err(cache)?;
        Ok(())
    }

    /// Whether cached cells can be moved to other positions here: a K
    /// stored unquantized (a quantized K is requantized whole by a shift)
    /// and a model whose positions can shift.
    fn ensure_shiftable(&self) -> Result<(), EngineError> {
        let kv = self.kv().map_err(EngineError::EchoUnsupported)?;
        if !kv.k_is_float() {
            return Err(EngineError::EchoUnsupported(
                "a quantized K cache cannot shift cells alone".into(),
            ));
        }
        // SAFETY: the live context's memory; a plain query.
        let can_shift = unsafe {
            super::raw_params::context_ptr(&self.ctx)
                .is_some_and(|c| sys::llama_memory_can_shift(sys::llama_get_memory(c.as_ptr())))
        };
        if !can_shift {
            return Err(EngineError::EchoUnsupported(
                "this model's positions cannot be shifted".into(),
            ));
        }
        Ok(())
    }

    /// Selective recomputation after [`Self::load_shifted`]: the chunk
    /// tokens `picked` (ascending indices into the chunks' tokens read one
    /// after another, which are also their cells and positions less `P`)
    /// are decoded again at their own positions, each attending by
    /// position, as in sequential prefill, to everything before it: the
    /// cached cells not recomputed and the recomputed ones alike. Their
    /// cached cells are dropped first and refilled in order (llama.cpp
    /// fills the lowest free cells), so cell and position still agree.
    ///
    /// One decode call for them all, although their positions have gaps
    /// and lie below cells the sequence holds: the patch's
    /// `llama_ape_set_gapped_positions` lets llama.cpp's batch check accept
    /// that, for this call only. With every token picked the calls are
    /// sequential prefill's, one per chunk, over the same cells: the same
    /// computation as [`Self::load_sequential_chunks`].
    pub fn recompute(
        &mut self,
        chunks: &[&ChunkState],
        picked: &[usize],
    ) -> Result<(), EngineError> {
        let bad = |e: String| EngineError::StateMismatch(format!("recomputation: {e}"));
        let (p, bounds) = match self.hook_ref().layout.as_ref() {
            Some(l) if !l.parallel && l.tail.is_empty() => (l.cols.start, l.bounds.clone()),
            _ => return Err(bad("no shifted chunks are loaded".into())),
        };
        let total = bounds.last().copied().unwrap_or(0);
        if self.next_pos as usize != p + total {
            return Err(bad("tokens follow the chunks: rewind to them first".into()));
        }
        if picked.windows(2).any(|w| w[0] >= w[1]) || picked.last().is_some_and(|&i| i >= total) {
            return Err(bad(format!(
                "token indices must ascend and lie below {total}"
            )));
        }
        if picked.is_empty() {
            return Ok(());
        }
        let tokens: Vec<TokenId> = chunks
            .iter()
            .flat_map(|c| c.tokens.iter().copied())
            .collect();
        let lengths = chunks.iter().map(|c| c.tokens.len());
        if !lengths.eq(bounds.windows(2).map(|w| w[1] - w[0])) {
            return Err(bad("these are not the chunks loaded".into()));
        }
        // Drop the cached cells, run by run.
        let mut run = picked[0]..picked[0] + 1;
        let mut runs = Vec::new();
        for &i in &picked[1..] {
            if i == run.end {
                run.end += 1;
            } else {
                runs.push(std::mem::replace(&mut run, i..i + 1));
            }
        }
        runs.push(run);
        for r in runs {
            self.ctx
                .kv_cache_seq_rm(
                    SEQ_MAIN,
                    Some((p + r.start) as u32),
                    Some((p + r.end) as u32),
                )
                .map_err(|e| EngineError::Cache(e.to_string()))?;
        }
        self.used_cells -= picked.len();
        // Every token: chunk by chunk, as sequential prefill decodes them
        // (the same batches, so the same sums). Fewer: all in one call, one
        // pass over the weights however many chunks they come from.
        let calls: Vec<&[usize]> = if picked.len() == total {
            bounds
                .windows(2)
                .map(|w| &picked[w[0]..w[1]])
                .filter(|c| !c.is_empty())
                .collect()
        } else {
            vec![picked]
        };
        self.set_gapped(true);
        let mut done = Ok(());
        for here in calls {
            let toks: Vec<TokenId> = here.iter().map(|&i| tokens[i]).collect();
            let pos: Vec<i32> = here.iter().map(|&i| (p + i) as i32).collect();
            done = self.decode_at(&toks, &pos, SEQ_MAIN, false);
            if done.is_err() {
                break;
            }
        }
        self.set_gapped(false);
        done
    }

    /// Lets llama.cpp's next decodes take positions with gaps (the patch).
    fn set_gapped(&mut self, gapped: bool) {
        if let Some(raw) = super::raw_params::context_ptr(&self.ctx) {
            // SAFETY: `raw` is the live context; this stores one flag.
            unsafe { sys::llama_ape_set_gapped_positions(raw.as_ptr(), gapped) };
        }
    }

    /// The PCW baseline computed live, as a reference for the state path:
    /// the prefix decoded in the main sequence, the chunk decoded in a
    /// sequence of its own (so it sees nothing before it) at the positions
    /// after the prefix, then merged into the main sequence. No state is
    /// saved, encoded alone or restored. The masked prefix cells shift the
    /// chunk's keys within each attention row, so the sums match the state
    /// path bit for bit only when `P` is a multiple of the SIMD width.
    pub(crate) fn load_alone_reference(
        &mut self,
        prefix: &PrefixState,
        chunk: &[TokenId],
    ) -> Result<(), EngineError> {
        self.clear();
        self.decode(&prefix.tokens, SEQ_MAIN, false)?;
        self.decode(chunk, SEQ_ASIDE, false)?;
        self.ctx
            .kv_cache_seq_cp(SEQ_ASIDE, SEQ_MAIN, None, None)
            .map_err(|e| EngineError::Cache(e.to_string()))?;
        self.ctx
            .clear_kv_cache_seq(Some(SEQ_ASIDE as u32), None, None)
            .map_err(|e| EngineError::Cache(e.to_string()))?;
        Ok(())
    }

    /// Decodes `tokens` after what the session holds, keeping the chunk
    /// layout: re-read chunks attend to the parallel block through APE.
    pub fn feed(&mut self, tokens: &[TokenId]) -> Result<(), EngineError> {
        self.decode(tokens, SEQ_MAIN, false)
    }

    /// [`Self::feed`] for a loaded chunk read again after the block (the
    /// re-read): its cells are remembered, so attribution gives them to it.
    pub fn feed_reread(&mut self, tokens: &[TokenId]) -> Result<(), EngineError> {
        let start = self.used_cells;
        self.feed(tokens)?;
        let end = self.used_cells;
        if let Some(layout) = self.hook().layout.as_mut() {
            layout.tail.push(start..end);
        }
        Ok(())
    }

    /// The re-read of a window without its prefill: tokens `window` of the
    /// block's chunk `chunk` (load order) are copied from their cached
    /// cells to the cells after what the session holds, and moved to the
    /// next positions by llama.cpp's own K shift (`llama_memory_seq_add`,
    /// applied before the next decode), so they sit right before the
    /// question, as a re-read window does. What they hold is what the chunk
    /// read alone after the prefix, not what a re-read would compute with
    /// the block in view: that is the saving and the difference.
    ///
    /// Needs a parallel load, a cache placement can address, a K stored
    /// unquantized (a quantized K is requantized whole by a shift) and a
    /// model whose positions can shift; otherwise
    /// [`EngineError::EchoUnsupported`] and nothing changed, so a caller
    /// can feed the window instead.
    pub fn echo(&mut self, chunk: usize, window: Range<usize>) -> Result<(), EngineError> {
        self.echo_cells(chunk, window, true, 0)
    }

    /// [`Self::echo`] for `check::echo`: its cells `gap` cells further on
    /// (where [`Self::load_echo_reference`] decodes the window, so that
    /// both compute over the same cells), and `shift` false leaves them at
    /// the window's own positions among the block's (the control a right
    /// shift is told from).
    pub(crate) fn echo_with(
        &mut self,
        chunk: usize,
        window: Range<usize>,
        shift: bool,
        gap: usize,
    ) -> Result<(), EngineError> {
        self.echo_cells(chunk, window, shift, gap)
    }

    fn echo_cells(
        &mut self,
        chunk: usize,
        window: Range<usize>,
        shift: bool,
        gap: usize,
    ) -> Result<(), EngineError> {
        let bad = |e: String| EngineError::StateMismatch(format!("echoed window: {e}"));
        let (p, src) = {
            let layout = self
                .hook_ref()
                .layout
                .as_ref()
                .filter(|l| l.parallel)
                .ok_or_else(|| bad("no parallel block is loaded".into()))?;
            let (b0, b1) = match layout.bounds.get(chunk..chunk + 2) {
                Some(&[b0, b1]) => (b0, b1),
                _ => return Err(bad(format!("no chunk {chunk} in the block"))),
            };
            if window.is_empty() || window.end > b1 - b0 {
                return Err(bad(format!("tokens {window:?} of a chunk of {}", b1 - b0)));
            }
            // Chunk cells start at the prefix end, where cell and position agree.
            let p = layout.cols.start;
            (p, p + b0 + window.start)
        };
        let n = window.len();
        self.ensure_room(self.used_cells + gap + n)?;
        self.ensure_shiftable()?;
        let kv = self.kv().map_err(EngineError::EchoUnsupported)?;
        let dst = self.used_cells + gap;
        kv.copy_cells(src, dst, n).map_err(bad)?;
        let from = (p + window.start) as i32;
        let positions: Vec<i32> = (from..from + n as i32).collect();
        if !shift {
            kv.claim(SEQ_MAIN, dst, &positions).map_err(bad)?;
            self.used_cells += gap + n;
            self.note_tail(gap, dst..dst + n);
            return Ok(());
        }
        kv.claim(SEQ_ASIDE, dst, &positions).map_err(bad)?;
        self.move_aside(from, n, self.next_pos)?;
        self.next_pos += n as i32;
        self.used_cells += gap + n;
        self.note_tail(gap, dst..dst + n);
        Ok(())
    }

    /// Adds echoed cells to the layout's re-read tail, which must stay
    /// contiguous with the block: cells a gap away (the check's) are left
    /// out, as the references' are.
    fn note_tail(&mut self, gap: usize, cells: Range<usize>) {
        if let (0, Some(layout)) = (gap, self.hook().layout.as_mut()) {
            layout.tail.push(cells);
        }
    }

    /// The references for [`Self::echo`] (`check::echo`), made by
    /// llama.cpp alone: after a parallel load, the prefix and `chunk` are
    /// decoded in a sequence of their own (seeing nothing of the block),
    /// the window's cells then given to the main sequence and the rest
    /// dropped. `moved`: decoded at their own positions and moved by
    /// llama.cpp's `llama_memory_seq_add` to the echo's (what an echo must
    /// equal bit for bit over the same cells); else decoded at the echo's
    /// positions directly (what the shift stands for: equal to rounding,
    /// attention seeing only relative positions). Nothing is copied.
    ///
    /// The decode starts at a cell that is a multiple of 256, as the
    /// chunk's encoding started at cell 0, so that the sums over cells run
    /// in the same SIMD lanes and round alike; the cells up to there are
    /// held by placeholders the decode cannot see, dropped after it, and
    /// at least `room` cells (the question's and the answer's) are left
    /// free before the window. Returns the window's cells.
    pub(crate) fn load_echo_reference(
        &mut self,
        prefix: &PrefixState,
        chunk: &[TokenId],
        window: Range<usize>,
        moved: bool,
        room: usize,
    ) -> Result<Range<usize>, EngineError> {
        let p = prefix.tokens.len() as i32;
        let target = self.next_pos;
        let start = if moved {
            0
        } else {
            target - p - window.start as i32
        };
        if window.is_empty() || window.end > chunk.len() || start < 0 {
            return Err(EngineError::StateMismatch(format!(
                "no echo of tokens {window:?} of a chunk of {} here",
                chunk.len()
            )));
        }
        let cache = |e: llama_cpp_2::context::kv_cache::KvCacheConversionError| {
            EngineError::Cache(e.to_string())
        };
        let used = self.used_cells;
        let aligned = (used + room).next_multiple_of(256);
        self.ensure_room(aligned + p as usize + chunk.len())?;
        // Placeholders: main-sequence cells far past every position, which
        // the aside decode cannot see and the main sequence drops before
        // anything reads it.
        const FAR: i32 = 1 << 30;
        let far: Vec<i32> = (FAR..FAR + (aligned - used) as i32).collect();
        let kv = self.kv().map_err(EngineError::StateMismatch)?;
        kv.claim(SEQ_MAIN, used, &far)
            .map_err(EngineError::StateMismatch)?;
        self.used_cells = aligned;
        self.next_pos = start;
        self.decode(&prefix.tokens, SEQ_ASIDE, false)?;
        // The whole chunk, in one call as its encoding had it: a shorter
        // batch may take other kernels, and other roundings.
        self.decode(chunk, SEQ_ASIDE, false)?;
        self.ctx
            .kv_cache_seq_rm(SEQ_MAIN, Some(FAR as u32), None)
            .map_err(cache)?;
        if moved {
            let from = p + window.start as i32;
            let end = from as u32 + window.len() as u32;
            self.ctx
                .kv_cache_seq_add(SEQ_ASIDE, Some(from as u32), Some(end), target - from)
                .map_err(cache)?;
        }
        let end = (target + window.len() as i32) as u32;
        self.ctx
            .kv_cache_seq_cp(SEQ_ASIDE, SEQ_MAIN, Some(target as u32), Some(end))
            .map_err(cache)?;
        self.ctx
            .clear_kv_cache_seq(Some(SEQ_ASIDE as u32), None, None)
            .map_err(cache)?;
        self.next_pos = end as i32;
        let first = aligned + p as usize + window.start;
        Ok(first..first + window.len())
    }

    /// Every layer's K of `cells`, as f32: what `check::echo` reads back
    /// (an error for a quantized K).
    pub(crate) fn k_values(&self, cells: Range<usize>) -> Result<Vec<Vec<f32>>, EngineError> {
        let kv = self.kv().map_err(EngineError::StateMismatch)?;
        (0..kv.layers())
            .map(|l| {
                kv.k_values(l, cells.clone()).ok_or_else(|| {
                    EngineError::StateMismatch(format!(
                        "layer {l}'s K of cells {cells:?} cannot be read"
                    ))
                })
            })
            .collect()
    }

    /// Turns APE attention on (or off with `None` / `T = S = 1`) for the
    /// tokens evaluated from now on. Needs a parallel load and a model whose
    /// attention APE supports.
    pub fn set_ape(&mut self, params: Option<ApeParams>) -> Result<(), EngineError> {
        match params.filter(|p| !p.is_identity()) {
            None => {
                self.ape_off();
                Ok(())
            }
            Some(mut p) => {
                p.validate().map_err(EngineError::ApeUnsupported)?;
                // Focus that keeps every chunk is no focus.
                let chunks = self
                    .hook_ref()
                    .layout
                    .as_ref()
                    .map_or(0, |l| l.bounds.len() - 1);
                if p.focus as usize >= chunks {
                    p.focus = 0;
                }
                if p.is_identity() {
                    self.ape_off();
                    return Ok(());
                }
                let path = if p.focus > 0 {
                    EditPath::Callback
                } else {
                    EditPath::Softmax
                };
                self.force_ape(p, path)
            }
        }
    }

    /// Applies the APE edit even at `T = S = 1` (where [`Self::set_ape`]
    /// skips it as a no-op), on the `path` given, so checks can prove each
    /// path exact. Focus needs the callback.
    pub(crate) fn force_ape(
        &mut self,
        params: ApeParams,
        path: EditPath,
    ) -> Result<(), EngineError> {
        self.engine
            .info
            .ape_support()
            .map_err(EngineError::ApeUnsupported)?;
        let Some(cells) = self.chunk_columns() else {
            return Err(EngineError::ApeUnsupported(
                "APE needs chunks loaded in parallel".into(),
            ));
        };
        if cells.is_empty() {
            // No chunk in parallel (every one re-read): nothing to edit.
            self.ape_off();
            return Ok(());
        }
        let kq_scale = self.engine.info.kq_scale();
        let in_softmax = match path {
            EditPath::Softmax if params.focus == 0 => Some(cells.clone()),
            EditPath::Softmax => {
                return Err(EngineError::ApeUnsupported(
                    "focus needs the callback edit".into(),
                ))
            }
            EditPath::Callback => None,
        };
        match &in_softmax {
            Some(cells) => self.set_softmax_ape(params, cells.clone()),
            None => self.set_softmax_ape(ApeParams::IDENTITY, 0..0),
        }
        self.hook().ape = Some(ActiveApe {
            params,
            kq_scale,
            in_softmax,
        });
        Ok(())
    }

    /// Graph nodes the eval callback has been handed so far; each one is a
    /// split of llama.cpp's graph compute. APE alone, inside the softmax,
    /// hands none.
    pub fn callback_nodes(&self) -> u64 {
        self.hook_ref().handed
    }

    /// How APE's edit reached GPU-resident attention so far (`None` while
    /// every `kq` it edited was in host memory).
    pub fn device_path(&self) -> Option<DevicePath> {
        self.hook_ref().device_path.clone()
    }

    /// KV-cell columns of the chunks after a parallel load.
    pub fn chunk_columns(&self) -> Option<Range<usize>> {
        self.hook_ref()
            .layout
            .as_ref()
            .filter(|c| c.parallel)
            .map(|c| c.cols.clone())
    }

    /// Starts measuring each chunk's share of the attention that the tokens
    /// evaluated from now on pay to the chunks (all layers and heads). Costs
    /// about what APE costs per token; a no-op without loaded chunks.
    pub fn start_attribution(&mut self) {
        let Some(n_chunks) = self
            .hook_ref()
            .layout
            .as_ref()
            .map(|l| l.bounds.len() - 1 + l.tail.len())
        else {
            return;
        };
        let kq_scale = self.engine.info.kq_scale();
        let (t, s) = self
            .hook_ref()
            .ape
            .as_ref()
            .map_or((1.0, 1.0), |a| (a.params.temperature, a.params.scale));
        self.hook().attribution = Some(Attribution {
            a: kq_scale / t,
            tail_a: kq_scale,
            block_weight: s * t,
            totals: vec![0.0; n_chunks],
            rows: 0,
        });
    }

    /// Mean attention share per chunk since [`Self::start_attribution`]
    /// (sums to 1): the loaded chunks in load order, then the chunks fed
    /// with [`Self::feed_reread`] in the order fed.
    pub fn attention_shares(&mut self) -> Option<Vec<f64>> {
        let at = self.hook().attribution.as_ref()?;
        (at.rows > 0).then(|| at.totals.iter().map(|t| t / at.rows as f64).collect())
    }

    /// Evaluates `tokens` at the next positions and keeps the logits of the
    /// last one for [`Self::logits`] / [`Self::sample`].
    pub fn eval(&mut self, tokens: &[TokenId]) -> Result<(), EngineError> {
        self.ensure_room(self.used_cells + tokens.len())?;
        self.decode(tokens, SEQ_MAIN, true)
    }

    /// Waits until the device has finished what this context queued (a GPU
    /// computes a decode without logits asynchronously).
    pub fn synchronize(&self) {
        self.ctx.synchronize();
    }

    /// Logits of the last evaluated token.
    pub fn logits(&self) -> Result<&[f32], EngineError> {
        let i = self.last_logits.ok_or(EngineError::NoLogits)?;
        Ok(self.ctx.get_logits_ith(i))
    }

    /// The most likely next token: greedy decoding without a sampler.
    pub fn greedy(&self) -> Result<TokenId, EngineError> {
        Ok(argmax(self.logits()?))
    }

    /// Draws the next token from the last logits with `sampler`.
    pub fn sample(&mut self, sampler: &mut LlamaSampler) -> Result<TokenId, EngineError> {
        let i = self.last_logits.ok_or(EngineError::NoLogits)?;
        let tok = sampler.sample(&self.ctx, i);
        Ok(tok.0)
    }

    /// Position the next evaluated token gets in the main sequence.
    pub fn position(&self) -> usize {
        self.next_pos as usize
    }

    /// Forgets the main sequence's tokens at positions `pos` and later (a
    /// generated answer, teacher-forced tokens), so evaluation can continue
    /// differently from there. Chunks and prefix sit before the question and
    /// are never touched. Logits must be recomputed by evaluating a token.
    pub fn rewind(&mut self, pos: usize) -> Result<(), EngineError> {
        let chunk_end = self
            .hook_ref()
            .layout
            .as_ref()
            .map_or(0, ChunkLayout::end_position);
        if pos as i32 > self.next_pos || pos < chunk_end {
            return Err(EngineError::Cache(format!(
                "cannot rewind to position {pos}"
            )));
        }
        self.ctx
            .kv_cache_seq_rm(SEQ_MAIN, Some(pos as u32), None)
            .map_err(|e| EngineError::Cache(e.to_string()))?;
        self.used_cells -= self.next_pos as usize - pos;
        self.next_pos = pos as i32;
        // Cells are filled in order: re-read cells past the cut are gone.
        let used = self.used_cells;
        if let Some(layout) = self.hook().layout.as_mut() {
            layout.tail.retain_mut(|r| {
                r.end = r.end.min(used);
                r.start < r.end
            });
        }
        self.last_logits = None;
        Ok(())
    }

    /// KV cells still free.
    pub fn free_cells(&self) -> usize {
        self.n_ctx.saturating_sub(self.used_cells)
    }

    fn ensure_room(&self, needed: usize) -> Result<(), EngineError> {
        if needed > self.n_ctx {
            return Err(EngineError::ContextFull {
                needed,
                available: self.n_ctx,
            });
        }
        Ok(())
    }

    /// Decodes `tokens` into `seq` at `next_pos…`, in batches of `n_batch`.
    fn decode(&mut self, tokens: &[TokenId], seq: i32, want_last: bool) -> Result<(), EngineError> {
        let from = self.next_pos;
        let positions: Vec<i32> = (from..from + tokens.len() as i32).collect();
        self.decode_at(tokens, &positions, seq, want_last)?;
        self.next_pos = from + tokens.len() as i32;
        Ok(())
    }

    /// Decodes `tokens` into `seq` at `positions` (one each), in batches of
    /// `n_batch`; leaves `next_pos` alone.
    fn decode_at(
        &mut self,
        tokens: &[TokenId],
        positions: &[i32],
        seq: i32,
        want_last: bool,
    ) -> Result<(), EngineError> {
        self.ensure_room(self.used_cells + tokens.len())?;
        self.last_logits = None;
        let n = tokens.len();
        for (b, (piece, at)) in tokens
            .chunks(self.n_batch)
            .zip(positions.chunks(self.n_batch))
            .enumerate()
        {
            self.batch.clear();
            let last_piece = (b + 1) * self.n_batch >= n;
            for (i, (&t, &pos)) in piece.iter().zip(at).enumerate() {
                let logits = want_last && last_piece && i + 1 == piece.len();
                self.batch
                    .add(LlamaToken(t), pos, &[seq], logits)
                    .map_err(|e| EngineError::Decode(e.to_string()))?;
            }
            self.hook().fault = None;
            if let Some(i) = self.interrupt.as_deref_mut() {
                i.fired = false;
            }
            let result = self.ctx.decode(&mut self.batch);
            if let Some(fault) = self.hook().fault.take() {
                return Err(EngineError::ApeFault(fault));
            }
            if self.interrupt.as_ref().is_some_and(|i| i.fired) {
                self.clear(); // llama.cpp dropped only this batch's cells
                return Err(EngineError::Interrupted);
            }
            result.map_err(|e| EngineError::Decode(e.to_string()))?;
            self.used_cells += piece.len();
            if want_last && last_piece {
                self.last_logits = Some(piece.len() as i32 - 1);
            }
        }
        Ok(())
    }

    fn seq_bytes(&self, seq: i32) -> Vec<u8> {
        let flags = LlamaStateSeqFlags::empty();
        let size = self.ctx.state_seq_get_size_ext(seq, flags);
        let mut buf = vec![0u8; size];
        // SAFETY: `buf` holds the size llama.cpp just reported for this sequence.
        let written = unsafe {
            self.ctx
                .state_seq_get_data_ext(buf.as_mut_ptr(), seq, flags)
        };
        buf.truncate(written);
        buf
    }

    fn restore(&mut self, bytes: &[u8], seq: i32, what: &str) -> Result<(), EngineError> {
        // SAFETY: the bytes come from `seq_bytes` of a context of this model
        // and KV type (checked by the callers through the state identities;
        // files are checksummed before they become states).
        let ok = unsafe {
            self.ctx
                .state_seq_set_data_ext(bytes, seq, LlamaStateSeqFlags::empty())
        };
        if !ok {
            return Err(EngineError::StateRestore(what.to_string()));
        }
        Ok(())
    }
}

/// Index of the largest logit (the first on ties).
pub(crate) fn argmax(xs: &[f32]) -> TokenId {
    let mut best = 0;
    for (i, &x) in xs.iter().enumerate() {
        if x > xs[best] {
            best = i;
        }
    }
    best as TokenId
}

impl Drop for Session<'_> {
    fn drop(&mut self) {
        // The thread pool is detached while the context still lives.
        self.threadpool = None;
        // SAFETY: the context is dropped first and never used again; after
        // that nothing points to the hook, which we leaked in `new`.
        unsafe {
            ManuallyDrop::drop(&mut self.ctx);
            drop(Box::from_raw(self.hook.as_ptr()));
        }
    }
}
