//! The only module that talks to llama.cpp (through `llama-cpp-2`, which
//! promises no stable API): load a model, tokenize, encode the prefix and
//! chunks into KV states, assemble them in parallel, decode with APE.
//!
//! - [`ape`]: the attention edit as pure, tested math;
//! - `hook`: the eval callback: checks, and the edits the softmax cannot do;
//! - `cuda`: the same edit as a CUDA kernel, for `kq` in GPU memory;
//! - [`session`]: one context and the state operations on it;
//! - [`state`]: prefix/chunk states and their on-disk format (`compact`:
//!   quantized at rest);
//! - [`prompt`]: the chat-template layout shared by every mode;
//! - [`generate`]: prefill per mode, then streaming decoding;
//! - `kv`: states written straight into the KV tensors (the llama.cpp patch);
//! - `pool`, `tiers`: states kept in memory between questions;
//! - [`check`]: the exactness, APE-math and placement checks (`doctor`, tests).

pub mod ape;
pub mod check;
#[allow(unsafe_code)]
mod compact;
#[allow(unsafe_code)]
mod cuda;
pub mod generate;
#[allow(unsafe_code)]
mod hook;
#[allow(unsafe_code)]
mod kv;
#[allow(unsafe_code)]
pub mod memory;
pub mod model_info;
#[allow(unsafe_code)]
mod pool;
pub mod prompt;
#[allow(unsafe_code)]
mod raw_params;
pub mod recompute;
mod seqstate;
#[allow(unsafe_code)]
pub mod session;
pub mod state;
#[allow(unsafe_code)]
mod tiers;

use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::model::LlamaModel;

pub use ape::ApeParams;
pub use cuda::compile_check as cuda_kernel_compile_check;
pub use generate::{
    best_sentences, best_window, Alternative, GenerateOptions, Generated, Mode, Piece, RereadCosts,
    Sampling, StopReason, TokenLogprob,
};
pub use hook::{DevicePath, Probe, ProbeEvent, ProbeKind};
pub use model_info::{ModelId, ModelInfo};
pub use pool::{Lease, TierStats};
pub use prompt::PromptLayout;
pub use session::{EditPath, Interrupt, Session};
pub use state::{ChunkState, KvType, LoadTimes, PrefixState, StateError, StateFormat};
pub use tiers::{Preload, TierOptions};

/// A token id of the loaded model's vocabulary.
pub type TokenId = i32;

/// Errors from the engine. Callers branch on `ApeUnsupported` (fall back to
/// another mode) and on `State` (re-encode the chunk).
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error("model file {0} does not exist")]
    ModelMissing(PathBuf),
    #[error("{0} is not a GGUF model file")]
    NotGguf(PathBuf),
    #[error("llama.cpp could not load {0}: the GGUF file is corrupt, truncated or of an unsupported architecture")]
    ModelLoad(PathBuf),
    #[error("reading {path}: {error}")]
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("llama.cpp backend: {0}")]
    Backend(String),
    #[error("could not create a llama.cpp context: {0}")]
    Context(String),
    #[error("decoding failed: {0}")]
    Decode(String),
    #[error("KV cache operation failed: {0}")]
    Cache(String),
    #[error("this answer needs {} for {} KV cells (KV cache {}, attention scratch {}), over {budget}: ask over fewer chunks (--top-k), or raise --memory-budget-gb", memory::gb(need.total()), need.cells, memory::gb(need.kv_bytes), memory::gb(need.scratch_bytes))]
    OverBudget {
        need: memory::MemoryNeed,
        budget: memory::MemoryBudget,
    },
    #[error("the prompt reaches position {positions}, past the {window} positions the model was trained on: shorten the question or the conversation")]
    PastWindow { positions: usize, window: usize },
    #[error("recomputation lays the chunks one after another, to position {positions}, past the {window} positions the model was trained on: ask over fewer chunks (--top-k) or without --recompute")]
    RecomputePastWindow { positions: usize, window: usize },
    #[error("context window full: {needed} KV cells needed, the context holds {available}")]
    ContextFull { needed: usize, available: usize },
    #[error("APE is not available on this model: {0}")]
    ApeUnsupported(String),
    #[error("APE attention check failed while decoding: {0}")]
    ApeFault(String),
    /// A window cannot be echoed here (a quantized K, positions that cannot
    /// shift, a cache placement cannot address): it is prefilled instead.
    #[error("the re-read window cannot be echoed here: {0}")]
    EchoUnsupported(String),
    #[error("llama.cpp rejected the {0} KV state")]
    StateRestore(String),
    #[error("{0}")]
    StateMismatch(String),
    #[error("interrupted: a question came first")]
    Interrupted,
    #[error("a chunk must contain at least one token")]
    EmptyChunk,
    #[error("no logits: evaluate a token first")]
    NoLogits,
    #[error("chat template: {0}")]
    Template(String),
    #[error(transparent)]
    State(#[from] StateError),
}

impl EngineError {
    /// Whether the tokens given were at fault (too many for the context,
    /// none, a decode llama.cpp refused), not the machine or the files:
    /// other input can still succeed.
    pub fn is_the_input(&self) -> bool {
        matches!(
            self,
            EngineError::Decode(_)
                | EngineError::ContextFull { .. }
                | EngineError::PastWindow { .. }
                | EngineError::RecomputePastWindow { .. }
                | EngineError::OverBudget { .. }
                | EngineError::EmptyChunk
        )
    }
}

/// How to run the model. Defaults suit a laptop CPU.
#[derive(Clone, Debug)]
pub struct EngineOptions {
    /// CPU threads for llama.cpp.
    pub threads: usize,
    /// Layers to offload to the GPU (CUDA builds only).
    pub gpu_layers: u32,
    /// KV cells per context: prefix + all chunks + question + answer.
    pub ctx_tokens: u32,
    /// Tokens per decode call.
    pub batch_tokens: u32,
    /// K cache element type (part of every state's identity).
    pub kv_type: KvType,
    /// How long idle CPU workers poll for work before they sleep, 0–100
    /// (ggml's scale; 1 is 131 072 pause instructions, a few milliseconds).
    /// APE's edit splits each decode into one graph compute per layer:
    /// workers that sleep at once (0) must be woken for every split, which
    /// next to another busy process cost 70–90 % of APE's decode speed
    /// (`bench ttft --under-load`). 1 bridges the splits and still sleeps
    /// between answers; llama.cpp's own default (50) spins far longer.
    pub poll: u32,
    /// Memory tiers that keep chunk states between questions.
    pub tiers: TierOptions,
    /// Bytes an answer's context may take (`None`: what is free where the
    /// KV cache lives, measured when the answer starts).
    pub memory_bytes: Option<u64>,
}

impl Default for EngineOptions {
    fn default() -> Self {
        Self {
            threads: std::thread::available_parallelism().map_or(4, |n| n.get()),
            // A shared-library build may be given CUDA libraries at run time.
            gpu_layers: if cfg!(any(feature = "cuda", feature = "llama-shared")) {
                999
            } else {
                0
            },
            ctx_tokens: 8192,
            batch_tokens: 512,
            kv_type: KvType::F16,
            poll: 1,
            tiers: TierOptions::default(),
            memory_bytes: None,
        }
    }
}

/// Turns llama.cpp's CUDA graphs off for this process unless
/// `APE_CHAT_CUDA_GRAPHS=1` or `GGML_CUDA_DISABLE_GRAPHS` is already set.
///
/// Why: on an H200 (2026-11-26, `scripts/gpu-check.sh`), `bench ttft` with
/// CUDA graphs on stopped at its first timed prefill with "an illegal
/// instruction was encountered", while `doctor`'s exactness checks passed;
/// with graphs off every mode ran. On an H100 (2026-11-27) compute-sanitizer
/// named the faulting kernel: cuBLAS's sm90 f16 GEMM, replayed from a CUDA
/// graph; graph reuse, op fusion and the cuBLAS workspace setting made no
/// difference. Graphs only speed up the launch of many small kernels, so
/// this costs decode a little and APE nothing.
///
/// Call it first thing in `main`, before any thread starts: ggml reads the
/// variable once, at its first graph.
pub fn configure_cuda_graphs() {
    if disable_cuda_graphs(
        std::env::var_os("APE_CHAT_CUDA_GRAPHS").as_deref(),
        std::env::var_os("GGML_CUDA_DISABLE_GRAPHS").is_some(),
    ) {
        std::env::set_var("GGML_CUDA_DISABLE_GRAPHS", "1");
    }
}

/// Whether [`configure_cuda_graphs`] sets `GGML_CUDA_DISABLE_GRAPHS`: only
/// in builds that can load the CUDA backend, never over the user's choice.
fn disable_cuda_graphs(ape_chat_cuda_graphs: Option<&std::ffi::OsStr>, ggml_set: bool) -> bool {
    cfg!(any(feature = "cuda", feature = "llama-shared"))
        && !ggml_set
        && ape_chat_cuda_graphs.is_none_or(|v| v != "1")
}

/// llama.cpp's backend may be initialised once per process.
fn backend() -> Result<&'static LlamaBackend, EngineError> {
    static BACKEND: OnceLock<Result<LlamaBackend, String>> = OnceLock::new();
    BACKEND
        .get_or_init(|| {
            let mut b = LlamaBackend::init().map_err(|e| e.to_string())?;
            if std::env::var_os("APE_CHAT_LLAMA_LOG").is_none() {
                b.void_logs();
            }
            Ok(b)
        })
        .as_ref()
        .map_err(|e| EngineError::Backend(e.clone()))
}

/// A loaded model. Cheap to share by reference across sessions.
pub struct Engine {
    model: LlamaModel,
    info: ModelInfo,
    path: PathBuf,
    options: EngineOptions,
    /// Chunk states held in memory, made with the first context (they live
    /// where its KV cache does).
    tiers: Mutex<Option<tiers::Tiers>>,
    /// Whole-chunk re-reads measured on this engine's device.
    reread_costs: Mutex<RereadCosts>,
}

impl Engine {
    /// Loads a GGUF model, with clear errors for a missing or non-GGUF file.
    pub fn load(path: &Path, options: EngineOptions) -> Result<Self, EngineError> {
        let io = |error| EngineError::Io {
            path: path.to_owned(),
            error,
        };
        if !path.is_file() {
            return Err(EngineError::ModelMissing(path.to_owned()));
        }
        if !model_info::is_gguf(path).map_err(io)? {
            return Err(EngineError::NotGguf(path.to_owned()));
        }
        let id = ModelId::of_file(path).map_err(io)?;
        let params = LlamaModelParams::default().with_n_gpu_layers(options.gpu_layers);
        let model = LlamaModel::load_from_file(backend()?, path, &params)
            .map_err(|_| EngineError::ModelLoad(path.to_owned()))?;
        let info = describe(&model, id, std::fs::metadata(path).map_err(io)?.len());
        Ok(Self {
            model,
            info,
            path: path.to_owned(),
            options,
            tiers: Mutex::new(None),
            reread_costs: Mutex::new(RereadCosts::default()),
        })
    }

    /// Facts about the model (architecture, shape, identity).
    pub fn info(&self) -> &ModelInfo {
        &self.info
    }

    /// The model file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The options the engine was loaded with.
    pub fn options(&self) -> &EngineOptions {
        &self.options
    }

    /// A fresh context for encoding or answering.
    pub fn session(&self) -> Result<Session<'_>, EngineError> {
        Session::new(self, self.options.ctx_tokens)
    }

    /// A context with flash attention on, for the sequential baseline only
    /// (llama.cpp's fastest prefill; it hides the attention logits APE
    /// edits, and stores V untransposed, so no cached state fits it).
    pub fn flash_session(&self, cells: usize) -> Result<Session<'_>, EngineError> {
        Session::with_flash(self, (cells.next_multiple_of(256) as u32).max(256))
    }

    /// A context of at least `cells` KV cells (more than the engine's
    /// default when an answer needs them): past the model's window too,
    /// for chunks that share positions. Its memory is checked against the
    /// budget first ([`Self::check_memory`]).
    pub fn session_for(&self, cells: usize) -> Result<Session<'_>, EngineError> {
        let want = (cells.next_multiple_of(256) as u32).max(self.options.ctx_tokens);
        let (need, budget) = self.check_memory(want as usize)?;
        // Counted in the budget: give the states' memory back before
        // llama.cpp allocates (a configured budget never counts it).
        let free = budget.bytes - budget.held_by_states;
        if budget.held_by_states > 0 && need.total() > free {
            if let Ok(mut tiers) = self.tiers.lock() {
                if let Some(t) = tiers.as_mut() {
                    t.reclaim(need.total() - free);
                }
            }
        }
        Session::new(self, want)
    }

    /// What a context of `cells` cells needs in memory.
    pub fn memory_need(&self, cells: usize) -> memory::MemoryNeed {
        memory::need(
            &self.info,
            self.options.kv_type,
            cells,
            self.options.batch_tokens,
        )
    }

    /// Whether layers run on a GPU: asked for, and a GPU backend is there
    /// (a CPU build, or a shared-library build given no CUDA libraries,
    /// offloads nothing whatever `gpu_layers` says).
    pub fn offloads(&self) -> bool {
        self.options.gpu_layers > 0 && backend().is_ok_and(LlamaBackend::supports_gpu_offload)
    }

    /// Notes a re-read's cost with `note` ([`RereadCosts::note`]); its
    /// answer: true when re-reads became too slow from a smaller context.
    pub fn note_reread(&self, note: impl FnOnce(&mut RereadCosts) -> bool) -> bool {
        self.reread_costs.lock().is_ok_and(|mut c| note(&mut c))
    }

    /// What whole-chunk re-reads have cost here so far.
    pub fn reread_costs(&self) -> RereadCosts {
        self.reread_costs
            .lock()
            .map(|c| c.clone())
            .unwrap_or_default()
    }

    /// The memory an answer's context may take now.
    pub fn memory_budget(&self) -> memory::MemoryBudget {
        let held = self
            .tiers
            .lock()
            .ok()
            .and_then(|t| t.as_ref().map(tiers::Tiers::reclaimable))
            .unwrap_or(0);
        memory::budget(self.options.memory_bytes, self.options.gpu_layers, held)
    }

    /// An error naming the need and the budget when a context of `cells`
    /// cells would not fit, before anything is allocated; else the need and
    /// the budget.
    pub fn check_memory(
        &self,
        cells: usize,
    ) -> Result<(memory::MemoryNeed, memory::MemoryBudget), EngineError> {
        let need = self.memory_need(cells);
        let budget = self.memory_budget();
        if need.total() > budget.bytes {
            return Err(EngineError::OverBudget { need, budget });
        }
        Ok((need, budget))
    }

    /// Tokenizes document or user text: special-token syntax in it stays text.
    pub fn tokenize(&self, text: &str) -> Vec<TokenId> {
        self.tokens(text, false)
    }

    /// Tokenizes template text, where `<|im_start|>` and the like are tokens.
    pub(crate) fn tokens(&self, text: &str, special: bool) -> Vec<TokenId> {
        self.model
            .vocab()
            .tokenize(text.as_bytes(), false, special)
            .into_iter()
            .map(|t| t.0)
            .collect()
    }

    /// The token's bytes (not always whole UTF-8 characters).
    pub fn token_bytes(&self, token: TokenId) -> Vec<u8> {
        self.model
            .vocab()
            .token_to_piece(llama_cpp_2::token::LlamaToken(token), false, None)
    }

    /// End of generation (EOS, end-of-turn and the like).
    pub fn is_end(&self, token: TokenId) -> bool {
        self.model
            .vocab()
            .is_eog(llama_cpp_2::token::LlamaToken(token))
    }

    /// The text of `tokens` with control tokens (`<|im_end|>`) spelled out:
    /// what a prompt says, for checks against a rendered template.
    pub fn spell(&self, tokens: &[TokenId]) -> String {
        let bytes: Vec<u8> = tokens
            .iter()
            .flat_map(|&t| {
                self.model
                    .vocab()
                    .token_to_piece(llama_cpp_2::token::LlamaToken(t), true, None)
            })
            .collect();
        String::from_utf8_lossy(&bytes).into_owned()
    }

    /// `messages` (role, content) as the model's chat template writes them,
    /// the assistant's turn opened: llama.cpp's own rendering, the
    /// reference the prompt layout is checked against.
    pub fn render_chat(&self, messages: &[(&str, &str)]) -> Result<String, EngineError> {
        let tmpl = self
            .model
            .chat_template(None)
            .map_err(|e| EngineError::Template(e.to_string()))?;
        let chat = messages
            .iter()
            .map(|(role, content)| {
                llama_cpp_2::model::LlamaChatMessage::new(role.to_string(), content.to_string())
                    .map_err(|e| EngineError::Template(e.to_string()))
            })
            .collect::<Result<Vec<_>, _>>()?;
        self.model
            .apply_chat_template(&tmpl, &chat, true)
            .map_err(|e| EngineError::Template(e.to_string()))
    }

    pub(crate) fn model(&self) -> &LlamaModel {
        &self.model
    }

    /// Makes the memory tiers for the KV cache of `ctx`, once.
    fn ensure_tiers(&self, ctx: &llama_cpp_2::context::LlamaContext<'_>) {
        let Ok(mut tiers) = self.tiers.lock() else {
            return;
        };
        if tiers.is_some() {
            return;
        }
        let Some(kv) = raw_params::context_ptr(ctx).and_then(|raw| kv::KvCache::of(raw).ok())
        else {
            return;
        };
        *tiers = Some(tiers::Tiers::for_cache(
            &kv,
            &self.options.tiers,
            self.options.threads as i32,
        ));
    }

    /// The state stored under `key` (of `tokens`, made after `after`) if a
    /// memory tier holds it, with that tier's name. It moves up to the
    /// fastest tier; it is placed from there, and nothing is read from disk.
    pub fn resident_state(
        &self,
        key: &str,
        tokens: &[TokenId],
        after: &PrefixState,
    ) -> Option<(ChunkState, &'static str)> {
        let (lease, tier) = self.tiers.lock().ok()?.as_mut()?.get(key)?;
        (lease.cells() == tokens.len()).then(|| (ChunkState::in_tier(tokens, after, lease), tier))
    }

    /// [`Self::resident_state`] from memory tier `tier` (an index into
    /// [`Self::tier_names`]) as it is, not moved: for measuring each tier.
    pub fn resident_state_at(
        &self,
        key: &str,
        tokens: &[TokenId],
        after: &PrefixState,
        tier: usize,
    ) -> Option<ChunkState> {
        let lease = self.tiers.lock().ok()?.as_mut()?.get_at(key, tier)?;
        (lease.cells() == tokens.len()).then(|| ChunkState::in_tier(tokens, after, lease))
    }

    /// The memory tiers' names, fastest first (none before the first
    /// session).
    pub fn tier_names(&self) -> Vec<&'static str> {
        self.tiers
            .lock()
            .ok()
            .and_then(|t| t.as_ref().map(tiers::Tiers::names))
            .unwrap_or_default()
    }

    /// Keeps `state` (stored under `key`) in the memory tiers, so the next
    /// question that needs it finds it there.
    pub fn keep_state(&self, key: &str, state: &mut ChunkState) {
        if state.resident.is_none() {
            state.resident = self.keep_in_tiers(key, state, pool::Room::Evict);
        }
    }

    /// Keeps `state` (stored under `key`) in the memory tiers that have
    /// free room for it, evicting nothing; whether one took it.
    pub fn preload_state(&self, key: &str, state: &ChunkState) -> bool {
        self.keep_in_tiers(key, state, pool::Room::Free).is_some()
    }

    /// `state` kept in every tier that finds `room` for it: the lease of
    /// the fastest.
    fn keep_in_tiers(&self, key: &str, state: &ChunkState, room: pool::Room) -> Option<Lease> {
        if !state.has_bytes() {
            return None;
        }
        self.tiers
            .lock()
            .ok()?
            .as_mut()?
            .keep(key, state.payload(), room)
    }

    /// Whether a memory tier holds the state stored under `key`.
    pub fn holds_state(&self, key: &str) -> bool {
        self.tiers
            .lock()
            .ok()
            .is_some_and(|t| t.as_ref().is_some_and(|t| t.holds(key)))
    }

    /// Whether a folder's states should be preloaded into the memory tiers
    /// ([`Preload`]; `auto`: when they are GPU memory).
    pub fn preloads(&self) -> bool {
        match self.options.tiers.preload {
            Preload::On => true,
            Preload::Off => false,
            Preload::Auto => self
                .tiers
                .lock()
                .ok()
                .is_some_and(|t| t.as_ref().is_some_and(tiers::Tiers::on_device)),
        }
    }

    /// Each memory tier's use so far.
    pub fn tier_stats(&self) -> Vec<TierStats> {
        self.tiers
            .lock()
            .ok()
            .and_then(|t| t.as_ref().map(tiers::Tiers::stats))
            .unwrap_or_default()
    }
}

fn describe(model: &LlamaModel, id: ModelId, file_bytes: u64) -> ModelInfo {
    let meta = |k: &str| model.meta_val_str(k).ok();
    let architecture = meta("general.architecture").unwrap_or_default();
    let key = |k: &str| format!("{architecture}.{k}");
    let n_head = model.n_head();
    let head_dim = meta(&key("attention.key_length"))
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| model.n_embd() as u32 / n_head.max(1));
    ModelInfo {
        name: meta("general.name"),
        n_layer: model.n_layer(),
        n_head,
        n_head_kv: model.n_head_kv(),
        head_dim,
        n_ctx_train: model.n_ctx_train(),
        n_vocab: model.n_vocab(),
        n_params: model.n_params(),
        file_bytes,
        sliding_window: meta(&key("attention.sliding_window"))
            .and_then(|v| v.parse().ok())
            .filter(|&w: &u32| w > 0),
        attn_softcap: meta(&key("attn_logit_softcapping"))
            .and_then(|v| v.parse().ok())
            .filter(|&c: &f32| c > 0.0),
        has_chat_template: model.chat_template(None).is_ok(),
        architecture,
        id,
    }
}

#[cfg(test)]
mod tests {
    use super::disable_cuda_graphs;
    use std::ffi::OsStr;

    #[test]
    fn cuda_graphs_are_turned_off_only_in_gpu_builds_and_never_over_the_user() {
        let gpu = cfg!(any(feature = "cuda", feature = "llama-shared"));
        assert_eq!(disable_cuda_graphs(None, false), gpu);
        assert_eq!(disable_cuda_graphs(Some(OsStr::new("0")), false), gpu);
        // The user asked for graphs, or set ggml's own variable either way.
        assert!(!disable_cuda_graphs(Some(OsStr::new("1")), false));
        assert!(!disable_cuda_graphs(None, true));
    }
}
