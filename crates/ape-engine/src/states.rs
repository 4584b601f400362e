//! The states a question is answered from: the shared prefix's, computed
//! once per run, and each chunk's, from the fastest place that has it: a
//! memory tier of the engine (nothing read from disk), the KV store on disk,
//! or encoded now (once, then stored and kept in memory). Between the store
//! and its users (indexing, answering, evaluation), so that "cached or
//! encoded now" exists once.
//!
//! Chunks are encoded after the shared prefix (parallel and APE modes) or,
//! for the PCW baseline, alone at the same positions; the two kinds live
//! side by side in the store under different keys.

use crate::engine::{
    ChunkState, Engine, EngineError, PrefixState, PromptLayout, Session, StateError, StateFormat,
    TokenId,
};
use crate::kvstore::{KvStore, Lookup};

/// The prompt layout, the prefix state and the chunk-state store of one
/// model and prompt.
pub struct States<'e> {
    pub engine: &'e Engine,
    pub layout: PromptLayout,
    pub prefix: PrefixState,
    alone: PrefixState,
    pub store: KvStore,
}

/// Where [`States::get_or_encode`] got a state from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// A memory tier of the engine held it (`ram`, `vram`, `pinned`).
    Memory(&'static str),
    /// Read from the disk cache: this many bytes.
    Disk(u64),
    /// Fetched from the shared store (this many bytes, in this long) into
    /// the disk cache.
    Store(u64, std::time::Duration),
    /// Not in the cache: encoded.
    Encoded,
    /// In the cache but corrupt or stale: removed and encoded again.
    Rebuilt,
    /// In the cache but unreadable now (an I/O error): kept there, and
    /// encoded for this answer.
    Unreadable,
}

impl Origin {
    /// Whether the state was there already (in memory or on disk).
    pub fn cached(self) -> bool {
        matches!(
            self,
            Origin::Memory(_) | Origin::Disk(_) | Origin::Store(..)
        )
    }
}

/// What [`States::preload`] did with one state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Preloaded {
    /// Read from disk (this many bytes) into a memory tier.
    Loaded(u64),
    /// A tier held it already.
    Held,
    /// No tier had free room for it.
    NoRoom,
    /// Not in the store (or found corrupt, and removed).
    Missing,
}

/// Where an answer's chunk states came from.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct StateReads {
    /// Held in a memory tier: nothing read from disk.
    pub from_memory: usize,
    /// Read from the disk cache.
    pub from_disk: usize,
    /// Bytes those disk reads cost.
    pub disk_bytes: u64,
    /// Fetched from the shared store (`--state-store`).
    pub from_store: usize,
    pub store_bytes: u64,
    /// Time the fetches took, in all.
    pub store_ms: f64,
    /// Missing: encoded for this answer.
    pub encoded: usize,
    /// Found corrupt or stale: encoded again.
    pub rebuilt: usize,
    /// Could not be read (an I/O error, after retries): encoded, the
    /// stored file kept.
    pub unreadable: usize,
}

impl StateReads {
    pub fn count(&mut self, o: Origin) {
        match o {
            Origin::Memory(_) => self.from_memory += 1,
            Origin::Disk(bytes) => {
                self.from_disk += 1;
                self.disk_bytes += bytes;
            }
            Origin::Store(bytes, took) => {
                self.from_store += 1;
                self.store_bytes += bytes;
                self.store_ms += took.as_secs_f64() * 1e3;
            }
            Origin::Encoded => self.encoded += 1,
            Origin::Rebuilt => self.rebuilt += 1,
            Origin::Unreadable => self.unreadable += 1,
        }
    }

    /// States computed for the answer (missing, rebuilt or unreadable).
    pub fn computed(&self) -> usize {
        self.encoded + self.rebuilt + self.unreadable
    }
}

impl<'e> States<'e> {
    /// Computes the prefix state of `layout` once.
    pub fn new(
        engine: &'e Engine,
        layout: PromptLayout,
        store: KvStore,
    ) -> Result<Self, EngineError> {
        let prefix = engine.session()?.encode_prefix(&layout.prefix)?;
        Ok(Self {
            engine,
            alone: prefix.alone(),
            layout,
            prefix,
            store,
        })
    }

    /// What chunk states are encoded after: the prefix, or its stand-in for
    /// chunks encoded alone.
    pub fn after(&self, alone: bool) -> &PrefixState {
        if alone {
            &self.alone
        } else {
            &self.prefix
        }
    }

    /// A chunk's text as the tokens its state is encoded from.
    pub fn chunk_tokens(&self, text: &str) -> Vec<TokenId> {
        self.layout.chunk(self.engine, text)
    }

    /// The question's tokens, closing the user turn.
    pub fn question(&self, text: &str) -> Vec<TokenId> {
        self.layout.question(self.engine, text)
    }

    /// The store key of the state of `tokens`.
    pub fn key(&self, tokens: &[TokenId], alone: bool) -> String {
        self.store.key(self.after(alone), tokens)
    }

    /// Whether the store holds an entry for `key` (not checked).
    pub fn has(&self, key: &str) -> bool {
        self.store.path(key).is_file()
    }

    /// Encodes the state of `tokens` and stores it, returning its key; a
    /// failed store (full disk) is the caller's to judge.
    pub fn encode(
        &self,
        session: &mut Session<'_>,
        tokens: &[TokenId],
        alone: bool,
    ) -> Result<(ChunkState, Result<String, StateError>), EngineError> {
        let after = self.after(alone);
        let state = session.encode_chunk(after, tokens)?;
        let (state, packed) = match self.store.format() {
            StateFormat::F16 => (state, None),
            StateFormat::Compact => {
                let (s, p) = state.pack()?;
                (s, Some(p))
            }
        };
        let stored = self.store.put(after, &state, packed.as_deref());
        Ok((state, stored))
    }

    /// The chunk state stored under `key` (of `tokens`), from the fastest
    /// place that has it: a memory tier, the disk cache (marked as used for
    /// its LRU), or, when it is missing or unusable, encoded now and stored.
    /// Whatever is read or encoded is kept in memory for the next question.
    /// A failed store costs only speed, never the answer.
    pub fn get_or_encode(
        &self,
        session: &mut Session<'_>,
        key: &str,
        alone: bool,
        tokens: Vec<TokenId>,
    ) -> Result<(ChunkState, Origin), EngineError> {
        let after = self.after(alone);
        let tier_key = self.tier_key(key);
        if let Some((state, tier)) = self.engine.resident_state(&tier_key, &tokens, after) {
            self.store.touch(key);
            return Ok((state, Origin::Memory(tier)));
        }
        let (mut state, origin) = match self.store.get(after, key) {
            Lookup::Hit(state, read) => {
                self.store.touch(key);
                (state, Origin::Disk(read))
            }
            Lookup::Fetched(state, bytes, took) => (state, Origin::Store(bytes, took)),
            Lookup::Miss => (self.encode(session, &tokens, alone)?.0, Origin::Encoded),
            Lookup::Rejected(_) => (self.encode(session, &tokens, alone)?.0, Origin::Rebuilt),
            // Encoded and stored again: the same bytes, written atomically
            // beside the file that could not be read.
            Lookup::Unreadable(_) => (self.encode(session, &tokens, alone)?.0, Origin::Unreadable),
        };
        self.engine.keep_state(&tier_key, &mut state);
        Ok((state, origin))
    }

    /// The memory tiers' key for the state stored under `key`. A tier holds
    /// what answers use: the compact format's decoded values differ from
    /// f16's, so the two never share an entry.
    fn tier_key(&self, key: &str) -> String {
        match self.store.format() {
            StateFormat::Compact => key.to_string(),
            StateFormat::F16 => format!("{key}.f16"),
        }
    }

    /// Whether a memory tier holds the state stored under `key`.
    pub fn in_memory(&self, key: &str) -> bool {
        self.engine.holds_state(&self.tier_key(key))
    }

    /// Loads the state stored under `key` (made after the prefix) into the
    /// memory tiers' free room, as [`Self::get_or_encode`] would find it.
    pub fn preload(&self, key: &str) -> Preloaded {
        if self.in_memory(key) {
            return Preloaded::Held;
        }
        match self.store.get(&self.prefix, key) {
            Lookup::Hit(state, read) if self.engine.preload_state(&self.tier_key(key), &state) => {
                Preloaded::Loaded(read)
            }
            Lookup::Hit(..) => Preloaded::NoRoom,
            // Fetched into the disk cache: the next pass holds it.
            Lookup::Fetched(..) => Preloaded::Missing,
            // Missing, or corrupt and removed: the states stage encodes it.
            Lookup::Miss | Lookup::Rejected(_) => Preloaded::Missing,
            // Left for the question that needs it.
            Lookup::Unreadable(_) => Preloaded::Missing,
        }
    }

    /// [`Self::get_or_encode`] by tokens, for callers without a stored key.
    pub fn chunk(
        &self,
        session: &mut Session<'_>,
        tokens: Vec<TokenId>,
        alone: bool,
    ) -> Result<(ChunkState, Origin), EngineError> {
        let key = self.key(&tokens, alone);
        self.get_or_encode(session, &key, alone, tokens)
    }
}
