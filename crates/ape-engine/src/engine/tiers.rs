//! Which memory tiers hold chunk states between questions, and how big they
//! are: made once per engine, from where the first context's KV cache lives.
//!
//! - KV cache in host memory (CPU builds): one tier, `ram`.
//! - KV cache in GPU memory: `vram` (states copied into the cache on the
//!   device), then `pinned` host memory (copied over PCIe at DMA speed).
//!
//! Below them is the disk cache ([`crate::kvstore`]). A state found in a
//! lower tier is copied into the tiers above it ("moves up"); a state read
//! from disk or encoded enters every tier.

use std::ptr::NonNull;

use llama_cpp_sys_2 as sys;

use super::kv::{CellsMeta, KvCache};
use super::pool::{CopyKind, Lease, Pool, Room, TierStats};
use super::seqstate;

/// Budgets of the memory tiers (`None`: from what the machine has free).
#[derive(Clone, Copy, Debug, Default)]
pub struct TierOptions {
    /// Host memory for states on a CPU build.
    pub ram_bytes: Option<u64>,
    /// GPU memory for states, when the KV cache lives on a GPU.
    pub vram_bytes: Option<u64>,
    /// Page-locked host memory for states, when the KV cache lives on a GPU.
    pub pinned_bytes: Option<u64>,
    /// Copy host-tier states into the cache with the device path (a ggml
    /// graph) even on the CPU: how tests prove the GPU tier's code.
    pub graph_copies: bool,
    /// Whether a long-running front end fills the tiers with its folder's
    /// stored states once indexed (the folder service).
    pub preload: Preload,
}

/// Whether to load a folder's stored chunk states into the memory tiers
/// before any question asks for them, so that a first question reads
/// nothing from disk. Only free room is used: preloading never evicts
/// what questions brought in, and an answer's context still takes memory
/// back from it.
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    serde::Deserialize,
    serde::Serialize,
    clap::ValueEnum,
)]
#[serde(rename_all = "lowercase")]
pub enum Preload {
    /// When the KV cache is in GPU memory: there `fast` over 8K cached
    /// tokens started in 39 ms with its states in GPU memory against 198 ms
    /// from cold files (docs/results.md, "Cost vs context", H100); on the CPU the
    /// page cache already keeps what was read, and RAM is the user's.
    #[default]
    Auto,
    On,
    Off,
}

/// The memory tiers, fastest first.
pub(crate) struct Tiers {
    pools: Vec<Pool>,
}

impl Tiers {
    /// The tiers for a KV cache living where `kv` does.
    pub fn for_cache(kv: &KvCache, o: &TierOptions, threads: i32) -> Self {
        let Some(buf) = kv.buffer() else {
            return Self { pools: Vec::new() };
        };
        // SAFETY: queries of a live buffer and its device.
        let (buft, host, dev) = unsafe {
            let buft = sys::ggml_backend_buffer_get_type(buf.as_ptr());
            (
                buft,
                sys::ggml_backend_buft_is_host(buft),
                sys::ggml_backend_buft_get_device(buft),
            )
        };
        let ram_default = || super::memory::available_ram() / 4;
        let mut pools = Vec::new();
        if host {
            let copy = if o.graph_copies {
                CopyKind::Graph
            } else {
                CopyKind::FromHost
            };
            let budget = o.ram_bytes.unwrap_or_else(|| ram_default().min(16 << 30));
            pools.push(Pool::new("ram", buft, copy, budget as usize, threads));
        } else {
            let vram = o.vram_bytes.unwrap_or_else(|| free_device_memory(dev));
            pools.push(Pool::new(
                "vram",
                buft,
                CopyKind::Graph,
                vram as usize,
                threads,
            ));
            // SAFETY: a device's host buffer type (NULL when it has none).
            let pinned_buft = NonNull::new(unsafe { sys::ggml_backend_dev_host_buffer_type(dev) });
            if let Some(pb) = pinned_buft {
                let budget = o
                    .pinned_bytes
                    .unwrap_or_else(|| ram_default().min(16 << 30));
                pools.push(Pool::new(
                    "pinned",
                    pb.as_ptr(),
                    CopyKind::FromHost,
                    budget as usize,
                    threads,
                ));
            }
        }
        Self { pools }
    }

    /// The state stored under `key`, if a tier holds it: leased in the
    /// fastest tier (after moving it up there), with the name of the tier
    /// it was found in.
    pub fn get(&mut self, key: &str) -> Option<(Lease, &'static str)> {
        let (found, entry) = self
            .pools
            .iter_mut()
            .enumerate()
            .find_map(|(i, p)| p.get(key).map(|e| (i, e)))?;
        let name = self.pools[found].name();
        let mut lease = Lease { tier: found, entry };
        if found > 0 {
            let (upper, lower) = self.pools.split_at_mut(found);
            let from = &lower[0];
            let meta = Pool::meta(&lease.entry).clone();
            let e = &lease.entry;
            let ptrs: Vec<(usize, bool, *const u8)> = (0..meta.k.len())
                .flat_map(|l| [(l, false), (l, true)])
                .filter_map(|(l, v)| from.host_ptr(e, l, v).map(|p| (l, v, p)))
                .collect();
            if ptrs.len() == 2 * meta.k.len() {
                let src = |l: usize, v: bool| ptrs[2 * l + usize::from(v)].2;
                for (i, p) in upper.iter_mut().enumerate().rev() {
                    // SAFETY: the sources are the leased entry's sections in
                    // a host tier, alive while `lease` is.
                    if let Some(up) = unsafe { p.insert(key, &meta, &src, Room::Evict) } {
                        lease = Lease { tier: i, entry: up };
                    }
                }
            }
        }
        Some((lease, name))
    }

    /// The state stored under `key` as tier `tier` holds it, not moved.
    pub fn get_at(&mut self, key: &str, tier: usize) -> Option<Lease> {
        let entry = self.pools.get_mut(tier)?.get(key)?;
        Some(Lease { tier, entry })
    }

    /// The tiers' names, fastest first.
    pub fn names(&self) -> Vec<&'static str> {
        self.pools.iter().map(Pool::name).collect()
    }

    /// Whether any tier holds a state under `key` (nothing moves).
    pub fn holds(&self, key: &str) -> bool {
        self.pools.iter().any(|p| p.contains(key))
    }

    /// Whether the fastest tier is GPU memory (the KV cache lives there).
    pub fn on_device(&self) -> bool {
        self.pools.first().is_some_and(|p| p.name() == "vram")
    }

    /// Keeps the state whose llama.cpp bytes are `blob` in every tier that
    /// finds `room` for it; the lease of the fastest one that took it.
    pub fn keep(&mut self, key: &str, blob: &[u8], room: Room) -> Option<Lease> {
        let parsed = seqstate::parse(blob).ok()?;
        let meta = CellsMeta::of(&parsed);
        let src = |l: usize, v: bool| {
            if v {
                parsed.v(l).data.as_ptr()
            } else {
                parsed.k(l).data.as_ptr()
            }
        };
        let mut lease = None;
        for (i, p) in self.pools.iter_mut().enumerate().rev() {
            // SAFETY: the sources are `blob`'s own sections.
            if let Some(e) = unsafe { p.insert(key, &meta, &src, room) } {
                lease = Some(Lease { tier: i, entry: e });
            }
        }
        lease
    }

    /// Writes leased states into `kv` at their first cells.
    pub fn place(&mut self, kv: &KvCache, seq: i32, at: &[(&Lease, usize)]) -> Result<(), String> {
        for (i, pool) in self.pools.iter_mut().enumerate() {
            let mine: Vec<_> = at
                .iter()
                .filter(|(l, _)| l.tier == i)
                .map(|(l, c)| (&*l.entry, *c))
                .collect();
            if !mine.is_empty() {
                pool.place(kv, seq, &mine)?;
            }
        }
        if at.iter().any(|(l, _)| l.tier >= self.pools.len()) {
            return Err("a lease of an unknown tier".into());
        }
        Ok(())
    }

    /// Bytes of the KV cache's own memory (the first tier: `ram`, or
    /// `vram`) that states hold but no answer is using: an answer's
    /// context may have them ([`Self::reclaim`]).
    pub fn reclaimable(&self) -> u64 {
        self.pools.first().map_or(0, |p| p.reclaimable() as u64)
    }

    /// Gives back at least `bytes` of the KV cache's own memory if the
    /// first tier can; the bytes given back.
    pub fn reclaim(&mut self, bytes: u64) -> u64 {
        let want = usize::try_from(bytes).unwrap_or(usize::MAX);
        self.pools.first_mut().map_or(0, |p| p.reclaim(want) as u64)
    }

    pub fn stats(&self) -> Vec<TierStats> {
        self.pools.iter().map(Pool::stats).collect()
    }
}

/// Three quarters of the device's free memory after the model and the
/// first context, less 1 GiB for the contexts answers size for themselves.
fn free_device_memory(dev: sys::ggml_backend_dev_t) -> u64 {
    (super::memory::device_free_memory(dev) * 3 / 4).saturating_sub(1 << 30)
}
