//! What an answer's context costs in memory, and what it may cost.
//!
//! Under APE, PCW and parallel every chunk sits on the same positions, so an
//! answer can read far past the model's window: what limits it is memory,
//! the KV cells the chunks fill and the attention scratch over those cells.
//! Both are known before a context is made, so a need over the budget is an
//! error before any work (llama.cpp would otherwise allocate, and the
//! operating system kill the process when the pages are touched).

use std::fmt;

use llama_cpp_sys_2 as sys;

use super::{KvType, ModelInfo};

/// Bytes the attention of one micro-batch may take (the `kq` logits, the
/// softmax's output and the mask over every cell). llama.cpp reserves this
/// for its largest micro-batch; past `cells` of about 8K the micro-batch
/// shrinks instead, so that a 128K-cell context does not reserve gigabytes
/// for a 30-token question.
pub const ATTENTION_SCRATCH: u64 = 512 << 20;

/// The smallest micro-batch a large context shrinks to.
const MIN_UBATCH: u32 = 32;

/// The memory one context of `cells` KV cells needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemoryNeed {
    pub cells: usize,
    /// K and V of every layer for every cell.
    pub kv_bytes: u64,
    /// The attention scratch of one micro-batch over every cell, and the
    /// output logits.
    pub scratch_bytes: u64,
}

impl MemoryNeed {
    pub fn total(&self) -> u64 {
        self.kv_bytes + self.scratch_bytes
    }
}

/// How much memory an answer's context may take, and where that figure
/// came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemoryBudget {
    pub bytes: u64,
    pub source: BudgetSource,
    /// Of `bytes`, what chunk states kept between questions hold in the same
    /// memory and give back first (not part of a configured budget).
    pub held_by_states: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BudgetSource {
    /// `--memory-budget-gb`, or `memory_budget_gb` in the config file.
    Configured,
    /// The host memory the system reports available (CPU builds).
    FreeRam,
    /// The GPU memory free on the device the KV cache lives on.
    FreeGpu,
}

impl fmt::Display for MemoryBudget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let from = match self.source {
            BudgetSource::Configured => "the configured memory budget",
            BudgetSource::FreeRam => "the RAM available now",
            BudgetSource::FreeGpu => "the GPU memory free now",
        };
        write!(f, "{} ({from}", gb(self.bytes))?;
        if self.held_by_states > 0 {
            write!(
                f,
                ", with {} that cached states hold and give back",
                gb(self.held_by_states)
            )?;
        }
        write!(f, ")")
    }
}

/// Bytes in GB with two decimals (MB below one GB), the unit the budget
/// is set in.
pub fn gb(bytes: u64) -> String {
    if bytes < 1_000_000_000 {
        format!("{:.0} MB", bytes as f64 / 1e6)
    } else {
        format!("{:.2} GB", bytes as f64 / 1e9)
    }
}

/// K and V bytes of one KV cell: every layer's K (of `k_type`) and V (f16,
/// what sessions use) for all KV heads.
pub fn cell_bytes(info: &ModelInfo, k_type: KvType) -> u64 {
    let n = u64::from(info.n_head_kv) * u64::from(info.head_dim);
    let k = match k_type {
        KvType::F16 => 2 * n,
        // q8_0: 34 bytes per 32 values (ggml_row_size's rule, by hand: the
        // row may not be a whole number of blocks for every model).
        KvType::Q8_0 => n.div_ceil(32) * 34,
    };
    u64::from(info.n_layer) * (k + 2 * n)
}

/// The micro-batch for a context of `cells` cells: `batch` tokens while
/// their attention scratch fits [`ATTENTION_SCRATCH`], else the largest
/// power of two that does (at least [`MIN_UBATCH`]).
pub fn ubatch_for(info: &ModelInfo, cells: usize, batch: u32) -> u32 {
    let per_token = attention_bytes_per_token(info, cells);
    if per_token * u64::from(batch) <= ATTENTION_SCRATCH {
        return batch;
    }
    let fit = (ATTENTION_SCRATCH / per_token.max(1)).max(1);
    let pow2 = 1u64 << (63 - fit.leading_zeros());
    (pow2 as u32).clamp(MIN_UBATCH, batch.max(MIN_UBATCH))
}

/// Attention scratch per query token over `cells`: `kq` and its softmax
/// (f32 per head) and a row of the mask.
fn attention_bytes_per_token(info: &ModelInfo, cells: usize) -> u64 {
    (2 * u64::from(info.n_head) + 1) * cells as u64 * 4
}

/// What a context of `cells` cells needs, with K of `k_type`, decoding in
/// micro-batches of at most `batch` tokens.
pub fn need(info: &ModelInfo, k_type: KvType, cells: usize, batch: u32) -> MemoryNeed {
    let ubatch = ubatch_for(info, cells, batch);
    let attention = attention_bytes_per_token(info, cells) * u64::from(ubatch);
    // The logits of a micro-batch (llama.cpp's output buffer) and its
    // hidden states, small next to attention at any size that matters.
    let activations = u64::from(ubatch) * (u64::from(info.n_vocab.max(0) as u32) + 8 * 4096) * 4;
    MemoryNeed {
        cells,
        kv_bytes: cell_bytes(info, k_type) * cells as u64,
        scratch_bytes: attention + activations,
    }
}

/// The budget an answer's context has: `configured` bytes if set, else what
/// is free where the KV cache will live (the GPU when layers are offloaded
/// and one is present, else host RAM), measured now, plus `held_by_states`:
/// memory there that cached states hold and would give back.
pub fn budget(configured: Option<u64>, gpu_layers: u32, held_by_states: u64) -> MemoryBudget {
    if let Some(bytes) = configured {
        return MemoryBudget {
            bytes,
            source: BudgetSource::Configured,
            held_by_states: 0,
        };
    }
    match (gpu_layers > 0).then(free_gpu_memory).flatten() {
        Some(free) => free_budget(free, BudgetSource::FreeGpu, held_by_states),
        None => free_budget(available_ram(), BudgetSource::FreeRam, held_by_states),
    }
}

/// `free` bytes measured at `source`, plus what cached states hold there.
fn free_budget(free: u64, source: BudgetSource, held_by_states: u64) -> MemoryBudget {
    MemoryBudget {
        bytes: free + held_by_states,
        source,
        held_by_states,
    }
}

/// `MemAvailable` (Linux), else 8 GB as a guess.
pub(crate) fn available_ram() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            m.lines()
                .find_map(|l| l.strip_prefix("MemAvailable:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        })
        .map_or(8 << 30, |kb| kb * 1024)
}

/// The first GPU ggml knows, if any.
fn first_gpu() -> Option<sys::ggml_backend_dev_t> {
    // SAFETY: device enumeration; the handles live as long as the process.
    unsafe {
        (0..sys::ggml_backend_dev_count())
            .map(|i| sys::ggml_backend_dev_get(i))
            .find(|&d| sys::ggml_backend_dev_type(d) == sys::GGML_BACKEND_DEVICE_TYPE_GPU)
    }
}

/// Free memory of the first GPU ggml knows, if any.
fn free_gpu_memory() -> Option<u64> {
    first_gpu().map(device_free_memory)
}

/// Free memory of device `dev`, as its backend reports it.
pub(super) fn device_free_memory(dev: sys::ggml_backend_dev_t) -> u64 {
    let (mut free, mut total) = (0usize, 0usize);
    // SAFETY: a device query writing two numbers.
    unsafe { sys::ggml_backend_dev_memory(dev, &mut free, &mut total) };
    free as u64
}

/// The first GPU's own description (e.g. `NVIDIA H100 80GB HBM3`), for
/// reports: a benchmark run with layers offloaded is the GPU's figure.
pub fn gpu_description() -> Option<String> {
    let d = first_gpu()?;
    // SAFETY: ggml returns a NUL-terminated string owned by the device.
    let p = unsafe { sys::ggml_backend_dev_description(d) };
    if p.is_null() {
        return None;
    }
    // SAFETY: checked non-null above; the string outlives this copy.
    let text = unsafe { std::ffi::CStr::from_ptr(p) }.to_string_lossy();
    Some(text.trim().to_string()).filter(|t| !t.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::model_info::ModelId;

    fn qwen_05b() -> ModelInfo {
        ModelInfo {
            name: None,
            architecture: "qwen2".into(),
            n_layer: 24,
            n_head: 14,
            n_head_kv: 2,
            head_dim: 64,
            n_ctx_train: 32768,
            n_vocab: 151_936,
            n_params: 0,
            file_bytes: 0,
            sliding_window: None,
            attn_softcap: None,
            has_chat_template: true,
            id: ModelId([0; 32]),
        }
    }

    #[test]
    fn a_cell_holds_every_layers_k_and_v() {
        // 24 layers × 2 KV heads × 64 dims × (2 bytes K + 2 bytes V).
        assert_eq!(cell_bytes(&qwen_05b(), KvType::F16), 24 * 128 * 4);
        // q8_0 K: 128 values = 4 blocks of 34 bytes.
        assert_eq!(cell_bytes(&qwen_05b(), KvType::Q8_0), 24 * (4 * 34 + 256));
    }

    #[test]
    fn large_contexts_shrink_the_micro_batch_not_the_cells() {
        let info = qwen_05b();
        assert_eq!(ubatch_for(&info, 8192, 512), 512);
        let big = ubatch_for(&info, 131_072, 512);
        assert!(
            (MIN_UBATCH..512).contains(&big) && big.is_power_of_two(),
            "{big}"
        );
        let n = need(&info, KvType::F16, 131_072, 512);
        assert_eq!(n.kv_bytes, 131_072 * 24 * 128 * 4);
        // Scratch stays near the bound, whatever the cells.
        assert!(n.scratch_bytes < ATTENTION_SCRATCH + (64 << 20), "{n:?}");
        assert!(n.total() > n.kv_bytes);
    }

    #[test]
    fn a_configured_budget_wins_and_says_so() {
        let b = budget(Some(1_500_000_000), 0, 7 << 30);
        assert_eq!(b.bytes, 1_500_000_000);
        assert_eq!(b.to_string(), "1.50 GB (the configured memory budget)");
        assert_eq!(budget(None, 0, 0).source, BudgetSource::FreeRam);
        assert_eq!(gb(5_000_000), "5 MB");
    }

    #[test]
    fn memory_cached_states_hold_counts_toward_a_free_budget() {
        let held = 3_000_000_000;
        let with = free_budget(5_000_000_000, BudgetSource::FreeRam, held);
        assert_eq!(with.bytes, 8_000_000_000);
        assert_eq!(with.held_by_states, held);
        assert_eq!(budget(None, 0, held).held_by_states, held);
        assert!(
            with.to_string().ends_with(
                "(the RAM available now, with 3.00 GB that cached states hold and give back)"
            ),
            "{with}"
        );
    }
}
