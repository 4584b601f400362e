//! The llama.cpp eval callback: where APE meets the attention graph.
//!
//! APE itself runs inside llama.cpp's softmax (ape-chat's patch:
//! `llama_ape_set_attention`), so a plain APE decode is one uninterrupted
//! graph compute; the callback only checks, when each softmax is announced
//! and before anything runs, that the softmax carries the edit for the
//! chunk cells and that those cells are visible to every row.
//!
//! What the softmax cannot do happens here, on the raw `kq-<layer>` logits:
//! focus (per-chunk log-sum-exps), attribution (per-chunk attention shares)
//! and probes. llama.cpp's scheduler asks the callback about every graph node
//! (`ask`), computes up to a node the callback wants, and hands it over
//! (`!ask`) before anything reads it; that splits the graph at every layer.
//! The edit then rewrites the chunk columns ([`super::ape::edit_chunk_block`])
//! and the softmax runs on the result. On the CPU backend it runs on a host
//! copy of the tensor; on a CUDA build, where `kq` lives in GPU memory, a
//! kernel edits it in place ([`super::cuda`]). Everything here runs inside
//! `llama_decode`, on the decoding thread,
//! through a raw pointer: it must never panic (that would abort the process)
//! and reports problems through [`Hook::fault`], which the session turns into
//! an error after the decode returns.

use std::ffi::c_void;
use std::ops::Range;
use std::panic::{catch_unwind, AssertUnwindSafe};

use llama_cpp_sys_2 as sys;

use super::ape::{apply_ape, chunk_lses, focus, log_sum_exp, scaled_lse, ApeParams};
use super::cuda;
use super::state::ChunkState;

/// Where loaded chunks sit: cells `cols`, chunk `i` at
/// `cols.start + bounds[i] .. cols.start + bounds[i + 1]`.
#[derive(Clone, Debug)]
pub(crate) struct ChunkLayout {
    pub cols: Range<usize>,
    pub bounds: Vec<usize>,
    /// Loaded side by side (APE applies) rather than sequentially.
    pub parallel: bool,
    /// Cells of chunks re-read after the block (`balanced`), in reading
    /// order. They are attended as ordinary tokens; only attribution looks
    /// at them, so that a re-read chunk gets its share.
    pub tail: Vec<Range<usize>>,
}

impl ChunkLayout {
    pub fn new(start: usize, chunks: &[&ChunkState], parallel: bool) -> Self {
        let mut bounds = vec![0];
        for c in chunks {
            bounds.push(bounds[bounds.len() - 1] + c.tokens.len());
        }
        let total = bounds[bounds.len() - 1];
        Self {
            cols: start..start + total,
            bounds,
            parallel,
            tail: Vec::new(),
        }
    }

    /// Every chunk cell, block and re-read tail (they are contiguous).
    fn all_cells(&self) -> Range<usize> {
        let end = self.tail.last().map_or(self.cols.end, |r| r.end);
        self.cols.start..end.max(self.cols.end)
    }

    /// First position after every chunk. Chunk cells start at the prefix end,
    /// so there cell index and position agree; in parallel the chunks share
    /// positions, up to the longest.
    pub fn end_position(&self) -> usize {
        if self.parallel {
            let longest = self
                .bounds
                .windows(2)
                .map(|w| w[1] - w[0])
                .max()
                .unwrap_or(0);
            self.cols.start + longest
        } else {
            self.cols.end
        }
    }
}

/// APE as it applies to the loaded chunks.
#[derive(Clone, Debug)]
pub(crate) struct ActiveApe {
    pub params: ApeParams,
    /// `1/sqrt(head_dim)`; must equal the softmax's own scale.
    pub kq_scale: f32,
    /// Where the edit runs: inside llama.cpp's softmax, on these KV cells
    /// (the patch), or, `None`, in this callback on `kq` (focus needs it).
    pub in_softmax: Option<Range<usize>>,
}

impl ActiveApe {
    /// Whether this callback rewrites `kq` (rather than the softmax).
    fn edits_kq(&self) -> bool {
        self.in_softmax.is_none()
    }
}

/// Which attention tensor a probe is shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProbeKind {
    /// `kq-<layer>` as computed, before any APE edit.
    RawLogits,
    /// `kq_soft_max-<layer>`: the attention weights actually used.
    Softmax,
}

/// One attention tensor shown to a probe: `data` is `[n_head][n_tokens][n_kv]`
/// row-major; for [`ProbeKind::Softmax`], `mask` is `[n_tokens][n_kv]` and
/// `kq_scale` is the softmax's own scale.
pub struct ProbeEvent<'a> {
    pub kind: ProbeKind,
    pub layer: usize,
    pub n_kv: usize,
    pub n_tokens: usize,
    pub n_head: usize,
    pub data: &'a [f32],
    pub mask: &'a [f32],
    pub kq_scale: f32,
}

/// Observer of attention tensors, for checks that compare APE's output with
/// an independent computation (tests, `ape-chat doctor`).
pub type Probe = Box<dyn FnMut(&ProbeEvent<'_>) + Send>;

/// Running per-chunk attention shares of the rows seen since it started:
/// the block's chunks in load order, then the re-read tail's segments.
#[derive(Clone, Debug)]
pub(crate) struct Attribution {
    /// Raw `kq` → attention logit (`kq_scale`, divided by `T` under APE).
    pub a: f32,
    /// Raw `kq` → logit of a re-read cell, which APE leaves alone (`kq_scale`).
    pub tail_a: f32,
    /// `S·T` under APE, else 1: APE turns the block's log-sum-exp `LSE_T`
    /// into an attention mass of `exp(S·T·LSE_T)`, which is what a re-read
    /// chunk's mass is weighed against.
    pub block_weight: f32,
    pub totals: Vec<f64>,
    pub rows: u64,
}

/// Floats of `kq` the callback copies to the host at a time (4 MiB): whole
/// rows, at least one.
const SCRATCH_FLOATS: usize = 1 << 20;

/// State shared with the callback through `cb_eval_user_data`.
#[derive(Default)]
pub(crate) struct Hook {
    /// Where the loaded chunks sit; what APE and attribution act on.
    pub layout: Option<ChunkLayout>,
    pub ape: Option<ActiveApe>,
    pub attribution: Option<Attribution>,
    pub probe: Option<Probe>,
    /// The probe sees only the softmax of layers below this (`None`: every
    /// attention tensor): what a choice made from the first layers needs,
    /// without splitting the graph or copying the rest.
    pub probe_layers: Option<usize>,
    /// First problem seen during the current decode; the session fails it.
    pub fault: Option<String>,
    /// Nodes handed to the callback so far: each one splits llama.cpp's
    /// graph compute (0 while APE runs inside the softmax alone).
    pub handed: u64,
    /// How the edit reached GPU-resident tensors (`None`: all on the host).
    pub device_path: Option<DevicePath>,
    gpu: cuda::Gpu,
    scratch: Vec<f32>,
    mask: Vec<f32>,
    lses: Vec<f32>,
    tail_lses: Vec<f32>,
    dropped: Vec<bool>,
}

/// The chunk columns of a `kq` row and the factor that turns a raw `kq`
/// into the logit their log-sum-exps use (`kq_scale / T`).
struct Plan {
    a: f32,
    cols: Range<usize>,
}

/// How the edit reaches a `kq` that lives in GPU memory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DevicePath {
    /// The CUDA kernel edits it in place.
    Kernel,
    /// Copied to the host and back (correct, slower), for the reason given.
    HostCopy(String),
}

impl std::fmt::Display for DevicePath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DevicePath::Kernel => f.write_str("on the GPU (CUDA kernel)"),
            DevicePath::HostCopy(why) => write!(f, "through host memory: {why}"),
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Node {
    Kq(usize),
    Softmax(usize),
}

/// The `cb_eval` entry point. `user_data` is the session's `*mut Hook`.
///
/// # Safety
/// `user_data` must point to a live `Hook` that nothing else accesses while
/// llama.cpp runs the graph, and `t` to a valid graph tensor.
pub(crate) unsafe extern "C" fn eval_callback(
    t: *mut sys::ggml_tensor,
    ask: bool,
    user_data: *mut c_void,
) -> bool {
    if user_data.is_null() || t.is_null() {
        return !ask;
    }
    // SAFETY: guaranteed by the caller (see the session, which owns both).
    let hook = unsafe { &mut *(user_data as *mut Hook) };
    if hook.ape.is_none() && hook.probe.is_none() && hook.attribution.is_none() {
        return !ask; // nothing wanted: one uninterrupted graph compute
    }
    // SAFETY: `t` is a node of the graph being computed.
    let t = unsafe { &*t };
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        if ask {
            hook.wants(t)
        } else {
            hook.visit(t);
            true
        }
    }));
    outcome.unwrap_or_else(|_| {
        hook.fail("internal error (panic) in the APE attention callback".into());
        !ask
    })
}

impl Hook {
    fn fail(&mut self, msg: String) {
        self.fault.get_or_insert(msg);
    }

    /// Answers the scheduler's `ask`. Also validates the softmax here: its
    /// parameters are known before it runs, and a mismatch means APE's edit
    /// would be wrong for this architecture.
    fn wants(&mut self, t: &sys::ggml_tensor) -> bool {
        match node_of(t) {
            Some(Node::Kq(_)) => {
                self.probe_sees_all()
                    || self.attribution.is_some()
                    || self.ape.as_ref().is_some_and(ActiveApe::edits_kq)
            }
            Some(Node::Softmax(layer)) => {
                if let Some(ape) = &self.ape {
                    if let Err(e) = check_softmax(t, ape) {
                        self.fail(format!("layer {layer}: {e}"));
                    }
                }
                if layer == 0 && (self.ape.is_some() || self.attribution.is_some()) {
                    if let Err(e) = self.check_layout(t) {
                        self.fail(e);
                    }
                }
                self.probe.is_some() && self.probe_layers.is_none_or(|n| layer < n)
            }
            None => false,
        }
    }

    /// A probe is on that is shown every attention tensor.
    fn probe_sees_all(&self) -> bool {
        self.probe.is_some() && self.probe_layers.is_none()
    }

    fn visit(&mut self, t: &sys::ggml_tensor) {
        self.handed += 1;
        let Some(node) = node_of(t) else { return };
        let (layer, is_kq) = match node {
            Node::Kq(l) => (l, true),
            Node::Softmax(l) => (l, false),
        };
        let Some(shape @ (n_kv, n_tokens, n_head)) = attention_shape(t) else {
            self.fail(format!(
                "layer {layer}: unexpected attention tensor layout (type {}, ne {:?})",
                t.type_, t.ne
            ));
            return;
        };
        if !is_kq {
            if let Err(e) = self.load(t, 0..n_tokens * n_head, n_kv) {
                return self.fail(format!("layer {layer}: {e}"));
            }
            let scale = op_param_f32(t, 0);
            // SAFETY: src[1] of a soft_max node is its mask (or null).
            let mask = unsafe { t.src[1].as_ref() };
            match mask.map(|m| read_mask(m, n_kv, n_tokens, &mut self.mask)) {
                Some(Ok(())) => {}
                Some(Err(e)) => return self.fail(format!("layer {layer}: {e}")),
                None => self.mask.clear(),
            }
            return self.show(ProbeKind::Softmax, layer, shape, scale);
        }
        let plan = match self.plan(n_kv) {
            Ok(plan) => plan,
            Err(e) => return self.fail(format!("layer {layer}: {e}")),
        };
        let focused = self
            .ape
            .as_ref()
            .is_some_and(|p| p.edits_kq() && p.params.focus > 0);
        // The kernel measures shares over the block alone: a re-read tail
        // is counted on a host copy (correct, slower).
        let tail_shares =
            self.attribution.is_some() && self.layout.as_ref().is_some_and(|l| !l.tail.is_empty());
        let on_device = plan.is_some() && !focused && !tail_shares && self.device_kernel(t);
        let rows = n_tokens * n_head;
        if self.probe_sees_all() {
            // A probe sees the whole tensor (checks and tests, small contexts).
            if let Err(e) = self.load(t, 0..rows, n_kv) {
                return self.fail(format!("layer {layer}: {e}"));
            }
            self.show(ProbeKind::RawLogits, layer, shape, 0.0);
        }
        let Some(plan) = plan else { return };
        if on_device {
            if let Err(e) = self.edit_on_device(t, &plan, rows) {
                self.fail(format!("layer {layer}: APE kernel: {e}"));
            }
            return;
        }
        // Rows a block at a time: the host scratch stays bounded however
        // many cells a question reads (hundreds of chunks: 100K+ cells). A
        // probe's copy above is already the whole tensor: one block.
        let whole = self.probe_sees_all();
        let per = if whole {
            rows
        } else {
            (SCRATCH_FLOATS / n_kv).max(1)
        };
        for start in (0..rows).step_by(per) {
            if !whole {
                if let Err(e) = self.load(t, start..(start + per).min(rows), n_kv) {
                    return self.fail(format!("layer {layer}: {e}"));
                }
            }
            if self.edit_kq(&plan, n_kv) {
                self.store(t, start, n_kv);
            }
        }
    }

    /// Every chunk cell must be visible to every row being evaluated: the
    /// edit assumes the chunks sit in cells `layout.cols`, which is what
    /// llama.cpp does today after a clear; if a version ever placed them (or
    /// the question) elsewhere, some of those cells would be masked, and we
    /// fault rather than edit the wrong keys. The mask is a graph input, set
    /// before any node runs, so it can be read when the first softmax is
    /// announced; once per decode call.
    fn check_layout(&mut self, softmax: &sys::ggml_tensor) -> Result<(), String> {
        let Some(cols) = self.layout.as_ref().map(ChunkLayout::all_cells) else {
            return Ok(());
        };
        // SAFETY: src[1] of a soft_max node is its mask (or null).
        let Some(mask) = (unsafe { softmax.src[1].as_ref() }) else {
            return Ok(()); // no mask: every cell is visible
        };
        let (n_kv, n_tokens) = (softmax.ne[0] as usize, softmax.ne[1] as usize);
        if cols.end > n_kv {
            return Err(format!(
                "chunk cells {cols:?} lie beyond the {n_kv} cells attention sees: the KV cache layout is not the one APE assumes"
            ));
        }
        read_mask(mask, n_kv, n_tokens, &mut self.mask)?;
        if !all_visible(&self.mask, n_kv, cols.clone()) {
            return Err(format!(
                "some chunk cells {cols:?} are masked from the question: the KV cache layout is not the one APE assumes"
            ));
        }
        Ok(())
    }

    /// What the edit needs for a `kq` of `n_kv` cells: `None` when neither
    /// an edit here nor attribution is on.
    fn plan(&self, n_kv: usize) -> Result<Option<Plan>, String> {
        let Some(layout) = self.layout.as_ref() else {
            return Ok(None);
        };
        let a = match (self.ape.as_ref(), self.attribution.as_ref()) {
            (Some(p), _) if p.edits_kq() => p.kq_scale / p.params.temperature,
            (_, Some(at)) => at.a,
            _ => return Ok(None),
        };
        let cols = layout.cols.clone();
        let all = layout.all_cells();
        if all.end > n_kv {
            return Err(format!(
                "chunk columns {all:?} exceed the {n_kv} KV cells in view"
            ));
        }
        Ok(Some(Plan { a, cols }))
    }

    /// Whether `t` lives in GPU memory and the device kernel can edit it
    /// there. The first device tensor decides, once, and says how in
    /// [`Hook::device_path`]; without a usable CUDA the edit copies `kq`
    /// through the host instead (correct, slower).
    fn device_kernel(&mut self, t: &sys::ggml_tensor) -> bool {
        // SAFETY: `buffer` is the tensor's live backend buffer (checked non-null).
        if t.buffer.is_null() || unsafe { sys::ggml_backend_buffer_is_host(t.buffer) } {
            return false;
        }
        let path = self.device_path.get_or_insert_with(|| match cuda::cuda() {
            Ok(_) => DevicePath::Kernel,
            Err(why) => DevicePath::HostCopy(why),
        });
        *path == DevicePath::Kernel
    }

    /// The device half of [`Hook::edit_kq`]: the same log-sum-exps, shares
    /// and rewrite, by the CUDA kernel on the tensor in place.
    fn edit_on_device(
        &mut self,
        t: &sys::ggml_tensor,
        plan: &Plan,
        rows: usize,
    ) -> Result<(), String> {
        let Hook {
            layout,
            ape,
            attribution,
            gpu,
            ..
        } = self;
        let Some(layout) = layout.as_ref() else {
            return Ok(());
        };
        let job = cuda::Job {
            data: t.data as u64,
            n_kv: t.ne[0] as usize,
            rows,
            col0: plan.cols.start,
            bounds: &layout.bounds,
            a: plan.a,
            rewrite: ape.as_ref().filter(|p| p.edits_kq()).map(|p| {
                let st = p.params.scale * p.params.temperature;
                (1.0 / p.params.temperature, (st - 1.0) / p.kq_scale)
            }),
            shares: attribution.is_some(),
        };
        let shares = gpu.run(&job)?;
        if let (Some(at), Some(shares)) = (attribution.as_mut(), shares) {
            at.totals.iter_mut().zip(shares).for_each(|(t, s)| *t += s);
            at.rows += rows as u64;
        }
        Ok(())
    }

    /// Per row: the chunks' log-sum-exps (one pass of exps), accumulated as
    /// attention shares if attribution is on, then the APE rewrite if APE is
    /// on. Works on the host copy in `scratch`; returns whether it changed.
    fn edit_kq(&mut self, plan: &Plan, n_kv: usize) -> bool {
        let Hook {
            layout,
            ape,
            attribution,
            scratch,
            lses,
            tail_lses,
            dropped,
            ..
        } = self;
        let Some(layout) = layout.as_ref() else {
            return false;
        };
        let ape = ape.as_ref().filter(|p| p.edits_kq());
        let keep = ape.map_or(0, |p| p.params.focus as usize);
        dropped.clear();
        for row in scratch.chunks_exact_mut(n_kv) {
            tail_lses.clear();
            if let Some(at) = attribution.as_ref() {
                tail_lses.extend(
                    layout
                        .tail
                        .iter()
                        .map(|r| scaled_lse(&row[r.clone()], at.tail_a)),
                );
            }
            let block = &mut row[plan.cols.clone()];
            let mut lse = chunk_lses(block, &layout.bounds, plan.a, lses);
            if keep > 0 {
                lse = focus(lses, keep, lse, dropped);
                for (w, _) in layout
                    .bounds
                    .windows(2)
                    .zip(dropped.iter())
                    .filter(|(_, &d)| d)
                {
                    block[w[0]..w[1]].fill(f32::NEG_INFINITY);
                }
            }
            if let Some(at) = attribution.as_mut() {
                // Without a tail the shares are the block's own softmax;
                // with one, each chunk's APE-weighted mass over the block's
                // plus the tail's: exp(l_i + (S·T − 1)·LSE_T − D).
                let (shift, all) = if tail_lses.is_empty() {
                    (0.0, lse)
                } else if lse.is_finite() {
                    let w = at.block_weight;
                    let block_mass = std::iter::once(w * lse);
                    (
                        (w - 1.0) * lse,
                        log_sum_exp(block_mass.chain(tail_lses.iter().copied())),
                    )
                } else {
                    (0.0, log_sum_exp(tail_lses.iter().copied()))
                };
                let n = lses.len();
                for (i, (total, l)) in at.totals.iter_mut().zip(lses.iter()).enumerate() {
                    if !dropped.get(i).copied().unwrap_or(false) {
                        *total += f64::from((l + shift - all).exp());
                    }
                }
                for (total, t) in at.totals[n..].iter_mut().zip(tail_lses.iter()) {
                    *total += f64::from((t - all).exp());
                }
                at.rows += 1;
            }
            if let Some(p) = ape {
                apply_ape(block, lse, p.kq_scale, p.params);
            }
        }
        ape.is_some()
    }

    fn show(&mut self, kind: ProbeKind, layer: usize, shape: (usize, usize, usize), scale: f32) {
        if let Some(probe) = self.probe.as_mut() {
            let (n_kv, n_tokens, n_head) = shape;
            probe(&ProbeEvent {
                kind,
                layer,
                n_kv,
                n_tokens,
                n_head,
                data: &self.scratch,
                mask: &self.mask,
                kq_scale: scale,
            });
        }
    }

    /// Copies `rows` of the tensor (rows of `n_kv` f32) into `scratch`
    /// (host and device buffers alike; on the CPU backend a memcpy, far
    /// cheaper than the exps that follow).
    fn load(
        &mut self,
        t: &sys::ggml_tensor,
        rows: Range<usize>,
        n_kv: usize,
    ) -> Result<(), String> {
        let n = rows.len() * n_kv;
        self.scratch.resize(n, 0.0);
        if t.buffer.is_null() || t.data.is_null() {
            return Err("attention tensor has no data".into());
        }
        // SAFETY: the tensor is computed, f32 and contiguous
        // (attention_shape), `rows` lie inside it (the caller's row count is
        // its n_tokens × n_head), and `scratch` holds exactly n elements.
        unsafe {
            sys::ggml_backend_tensor_get(
                t,
                self.scratch.as_mut_ptr().cast(),
                rows.start * n_kv * 4,
                n * 4,
            );
        }
        Ok(())
    }

    /// Writes `scratch` back as the rows from `first` on.
    fn store(&mut self, t: &sys::ggml_tensor, first: usize, n_kv: usize) {
        // SAFETY: as in `load`, for the rows `load` read; the scheduler has
        // not yet run the tensor's consumers, so writing it back is what
        // they will read.
        unsafe {
            sys::ggml_backend_tensor_set(
                t as *const _ as *mut _,
                self.scratch.as_ptr().cast(),
                first * n_kv * 4,
                self.scratch.len() * 4,
            );
        }
    }
}

/// Recognises the two attention nodes; asked of every node of every graph,
/// so it looks at the op before the name.
fn node_of(t: &sys::ggml_tensor) -> Option<Node> {
    let (prefix, node): (&[u8], fn(usize) -> Node) = match t.op {
        sys::GGML_OP_MUL_MAT => (b"kq-", Node::Kq),
        sys::GGML_OP_SOFT_MAX => (b"kq_soft_max-", Node::Softmax),
        _ => return None,
    };
    // SAFETY: ggml names are NUL-terminated within GGML_MAX_NAME.
    let name = unsafe { std::ffi::CStr::from_ptr(t.name.as_ptr()) }.to_bytes();
    let layer = std::str::from_utf8(name.strip_prefix(prefix)?)
        .ok()?
        .parse()
        .ok()?;
    Some(node(layer))
}

/// `(n_kv, n_tokens, n_head)` for a contiguous f32 `[n_kv, n_tokens, n_head, 1]`.
fn attention_shape(t: &sys::ggml_tensor) -> Option<(usize, usize, usize)> {
    let [n_kv, n_tok, n_head, n_stream] = t.ne;
    let contiguous =
        t.nb[0] == 4 && t.nb[1] == 4 * n_kv as usize && t.nb[2] == t.nb[1] * n_tok as usize;
    (t.type_ == sys::GGML_TYPE_F32 && contiguous && n_stream == 1).then_some((
        n_kv as usize,
        n_tok as usize,
        n_head as usize,
    ))
}

/// Whether every row of `mask` (`n_kv` additive entries per row, `-inf` =
/// hidden) sees every cell in `cols`.
fn all_visible(mask: &[f32], n_kv: usize, cols: Range<usize>) -> bool {
    mask.chunks_exact(n_kv)
        .all(|row| row[cols.clone()].iter().all(|v| v.is_finite()))
}

fn op_param_f32(t: &sys::ggml_tensor, i: usize) -> f32 {
    f32::from_bits(t.op_params[i] as u32)
}

/// APE assumes the softmax computes `softmax(kq·scale + mask)` with the
/// model's `1/sqrt(head_dim)`, no ALiBi and no attention sinks; inside the
/// softmax, it must carry exactly the edit asked for (the patch's op
/// parameters 2–5: `T`, `S`, first and end cell), and nothing otherwise.
fn check_softmax(t: &sys::ggml_tensor, ape: &ActiveApe) -> Result<(), String> {
    let fused = (
        op_param_f32(t, 2),
        op_param_f32(t, 3),
        t.op_params[4],
        t.op_params[5],
    );
    let want = match &ape.in_softmax {
        Some(cells) => (
            ape.params.temperature,
            ape.params.scale,
            cells.start as i32,
            cells.end as i32,
        ),
        None => (0.0, 0.0, 0, 0),
    };
    if fused != want {
        return Err(format!(
            "the softmax carries APE settings {fused:?} where {want:?} were set: the patched llama.cpp did not take them"
        ));
    }
    let kq_scale = ape.kq_scale;
    let scale = op_param_f32(t, 0);
    if (scale - kq_scale).abs() > 1e-6 * kq_scale.abs() {
        return Err(format!(
            "softmax scale {scale} differs from 1/sqrt(head_dim) = {kq_scale}"
        ));
    }
    if op_param_f32(t, 1) != 0.0 {
        return Err("ALiBi attention bias is not supported by APE".into());
    }
    if !t.src[2].is_null() {
        return Err("attention sinks are not supported by APE".into());
    }
    Ok(())
}

fn read_mask(
    m: &sys::ggml_tensor,
    n_kv: usize,
    n_tokens: usize,
    out: &mut Vec<f32>,
) -> Result<(), String> {
    if m.ne[0] as usize != n_kv || (m.ne[1] as usize) < n_tokens || m.buffer.is_null() {
        return Err(format!("unexpected mask shape {:?}", m.ne));
    }
    out.clear();
    let row_bytes = m.nb[1];
    let mut raw = vec![0u8; row_bytes];
    for tok in 0..n_tokens {
        // SAFETY: row `tok` lies inside the mask tensor (checked above).
        unsafe {
            sys::ggml_backend_tensor_get(m, raw.as_mut_ptr().cast(), tok * row_bytes, row_bytes);
        }
        match m.type_ {
            sys::GGML_TYPE_F32 => out.extend(
                raw.chunks_exact(4)
                    .take(n_kv)
                    .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])),
            ),
            sys::GGML_TYPE_F16 => out.extend(raw.chunks_exact(2).take(n_kv).map(|b| {
                // SAFETY: plain conversion function.
                unsafe { sys::ggml_fp16_to_fp32(u16::from_le_bytes([b[0], b[1]])) }
            })),
            other => return Err(format!("unsupported mask type {other}")),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chunk_cell_hidden_from_any_row_is_caught() {
        let inf = f32::NEG_INFINITY;
        // Two question rows over 6 cells: prefix 0-1, chunks 2-4, question 5.
        let good = [0.0, 0.0, 0.0, 0.0, 0.0, inf, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0];
        assert!(all_visible(&good, 6, 2..5));
        // The question's own cell inside the assumed chunk block (a moved
        // layout): hidden from the first row by the causal mask.
        assert!(!all_visible(&good, 6, 3..6));
        let mut holed = good;
        holed[9] = inf; // a chunk cell hidden from the second row
        assert!(!all_visible(&holed, 6, 2..5));
    }
}
