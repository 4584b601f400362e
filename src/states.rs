//! The states a question is answered from: the shared prefix's, computed
//! once per run, and each chunk's, read from the KV store or encoded now
//! (once, then stored). Between the store and its users (indexing,
//! answering, evaluation), so that "cached or encoded now" exists once.
//!
//! Chunks are encoded after the shared prefix (parallel and APE modes) or,
//! for the PCW baseline, alone at the same positions; the two kinds live
//! side by side in the store under different keys.

use crate::engine::{
    ChunkState, Engine, EngineError, PrefixState, PromptLayout, Session, StateError, TokenId,
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
    Cached,
    /// Not in the cache: encoded.
    Encoded,
    /// In the cache but corrupt or stale: removed and encoded again.
    Rebuilt,
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
        let stored = self.store.put(after, &state);
        Ok((state, stored))
    }

    /// The chunk state stored under `key` (marked as used for the LRU), or,
    /// when it is missing or unusable, the state of `tokens()` encoded now
    /// and stored. A failed store costs only speed, never the answer.
    pub fn get_or_encode<E: From<EngineError>>(
        &self,
        session: &mut Session<'_>,
        key: &str,
        alone: bool,
        tokens: impl FnOnce() -> Result<Vec<TokenId>, E>,
    ) -> Result<(ChunkState, Origin), E> {
        let origin = match self.store.get(self.after(alone), key) {
            Lookup::Hit(state) => {
                self.store.touch(key);
                return Ok((state, Origin::Cached));
            }
            Lookup::Miss => Origin::Encoded,
            Lookup::Rejected(_) => Origin::Rebuilt,
        };
        let (state, _) = self.encode(session, &tokens()?, alone)?;
        Ok((state, origin))
    }

    /// [`Self::get_or_encode`] by tokens, for callers without a stored key.
    pub fn chunk(
        &self,
        session: &mut Session<'_>,
        tokens: Vec<TokenId>,
        alone: bool,
    ) -> Result<(ChunkState, Origin), EngineError> {
        let key = self.key(&tokens, alone);
        self.get_or_encode(session, &key, alone, || Ok(tokens))
    }
}
