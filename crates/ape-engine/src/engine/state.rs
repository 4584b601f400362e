//! KV states of the shared prefix and of chunks, and the chunk state file.
//!
//! A state is only valid for the exact model, KV type and prefix it was made
//! with, so each carries those identities and loading checks them. The file
//! format is versioned and checksummed: a truncated, corrupted, foreign or
//! stale file is rejected with a typed error (callers re-encode), never fed
//! to llama.cpp.
//!
//! Two payloads exist: version 1 holds llama.cpp's state bytes as they are
//! (f16), version 2 the same compacted ([`super::compact`]: K as q8_0, V as
//! q6_K, 0.47× the bytes). Both are read; new states are written compact
//! unless a store is told otherwise ([`StateFormat`]).

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::model_info::ModelId;
use super::TokenId;
use crate::fsutil::write_atomic;

/// Element type of the K cache (V is always f16: llama.cpp needs flash
/// attention for a quantised V, and APE needs it off).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KvType {
    #[default]
    F16,
    Q8_0,
}

impl KvType {
    fn code(self) -> u32 {
        match self {
            KvType::F16 => 1,
            KvType::Q8_0 => 8,
        }
    }

    fn from_code(c: u32) -> Option<Self> {
        [KvType::F16, KvType::Q8_0]
            .into_iter()
            .find(|k| k.code() == c)
    }
}

impl From<KvType> for llama_cpp_2::context::params::KvCacheType {
    fn from(k: KvType) -> Self {
        match k {
            KvType::F16 => Self::F16,
            KvType::Q8_0 => Self::Q8_0,
        }
    }
}

impl fmt::Display for KvType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            KvType::F16 => "f16",
            KvType::Q8_0 => "q8_0",
        })
    }
}

impl std::str::FromStr for KvType {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "f16" => Ok(KvType::F16),
            "q8_0" => Ok(KvType::Q8_0),
            _ => Err(format!("unknown KV type `{s}` (expected f16 or q8_0)")),
        }
    }
}

/// Identity of a shared prefix: model, KV type and prefix tokens.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct PrefixId(pub [u8; 32]);

impl PrefixId {
    pub(crate) fn new(model: ModelId, kv: KvType, tokens: &[TokenId]) -> Self {
        let mut h = blake3::Hasher::new();
        h.update(b"ape-chat prefix v1");
        h.update(&model.0);
        h.update(&kv.code().to_le_bytes());
        tokens.iter().for_each(|t| {
            h.update(&t.to_le_bytes());
        });
        Self(*h.finalize().as_bytes())
    }
}

impl PrefixId {
    /// The identity of chunks encoded *without* this prefix in view but at
    /// the positions that follow it (the PCW baseline's chunk states).
    pub fn alone(self) -> Self {
        let mut h = blake3::Hasher::new();
        h.update(b"ape-chat chunk alone v1");
        h.update(&self.0);
        Self(*h.finalize().as_bytes())
    }
}

/// The shared prefix's KV state (positions `0..P`), computed once.
#[derive(Clone)]
pub struct PrefixState {
    pub(crate) tokens: Vec<TokenId>,
    pub(crate) bytes: Vec<u8>,
    pub(crate) id: PrefixId,
    pub(crate) model: ModelId,
    pub(crate) kv: KvType,
    /// Stands for "no prefix in view, positions from `P` on": chunks encoded
    /// after it see nothing before them ([`Self::alone`]).
    pub(crate) alone: bool,
}

impl PrefixState {
    /// The prefix tokens.
    pub fn tokens(&self) -> &[TokenId] {
        &self.tokens
    }
    /// Identity that chunk states made after this prefix carry.
    pub fn id(&self) -> PrefixId {
        self.id
    }

    /// This prefix's stand-in for encoding chunks without it (PCW): chunks
    /// encoded after the result sit at the same positions as after the
    /// prefix, but never saw it; they carry [`PrefixId::alone`].
    pub fn alone(&self) -> PrefixState {
        PrefixState {
            tokens: self.tokens.clone(),
            bytes: Vec::new(),
            id: self.id.alone(),
            model: self.model,
            kv: self.kv,
            alone: true,
        }
    }
}

/// Where loading state files took its time (summed over files).
#[derive(Clone, Copy, Debug, Default)]
pub struct LoadTimes {
    /// Reading the files.
    pub read: Duration,
    /// Their payload checksums.
    pub verify: Duration,
    /// Widening compact states to the KV cache's types.
    pub decode: Duration,
}

/// One chunk's KV state at positions `P..P+L`, made after the shared prefix.
#[derive(Clone)]
pub struct ChunkState {
    pub(crate) tokens: Vec<TokenId>,
    /// llama.cpp's sequence state from byte `at` on: a state read from a
    /// file keeps the file's buffer rather than copying the payload out.
    pub(crate) bytes: Vec<u8>,
    pub(crate) at: usize,
    pub(crate) prefix: PrefixId,
    pub(crate) n_prefix: u32,
    pub(crate) model: ModelId,
    pub(crate) kv: KvType,
    /// Held in one of the engine's memory tiers ([`super::pool`]): placed
    /// from there, and `bytes` may then be empty.
    pub(crate) resident: Option<super::pool::Lease>,
}

/// Why a stored state cannot be used. Every variant names the file; callers
/// treat all but `Io` as "re-encode this chunk".
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    #[error("{path}: {error}")]
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("{path}: not an ape-chat KV state file")]
    Foreign { path: PathBuf },
    #[error("{path}: KV state format version {found}, this build reads versions up to {expected}")]
    Version {
        path: PathBuf,
        found: u32,
        expected: u32,
    },
    #[error("{path}: truncated KV state file ({len} bytes, expected {expected})")]
    Truncated {
        path: PathBuf,
        len: usize,
        expected: usize,
    },
    #[error("{path}: KV state file is corrupt (checksum mismatch)")]
    Corrupt { path: PathBuf },
    #[error("{path}: KV state was made with another model or KV type")]
    OtherModel { path: PathBuf },
    #[error("{path}: KV state was made after a different shared prefix")]
    OtherPrefix { path: PathBuf },
    #[error("{path}: compact KV state cannot be decoded: {error}")]
    Codec { path: PathBuf, error: String },
}

const MAGIC: &[u8; 8] = b"APECHUNK";
/// Bump on any change to what a state key identifies (the cache key hashes
/// it): what llama.cpp's state bytes mean for the same tokens.
pub const KEY_VERSION: u32 = 1;
/// File versions: llama.cpp's bytes verbatim, or compacted.
const FILE_F16: u32 = 1;
const FILE_COMPACT: u32 = 2;
const HEADER_LEN: usize = 104;

/// How a store writes chunk states.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StateFormat {
    /// llama.cpp's bytes as they are: f16 keys and values.
    F16,
    /// Keys as q8_0 and values as q6_K (0.47× the bytes); a state read back
    /// is what was used when it was encoded ([`ChunkState::pack`]).
    #[default]
    Compact,
}

impl ChunkState {
    /// The chunk's tokens (what sequential prefill decodes).
    pub fn tokens(&self) -> &[TokenId] {
        &self.tokens
    }
    /// Bytes of KV state held for this chunk.
    pub fn state_bytes(&self) -> usize {
        self.payload().len()
    }

    /// A chunk known only by its tokens, for sequential prefill, which
    /// decodes them and needs no state (one given to a parallel load is
    /// refused: its identity matches no prefix).
    pub fn tokens_only(tokens: Vec<TokenId>) -> Self {
        Self {
            tokens,
            bytes: Vec::new(),
            at: 0,
            prefix: PrefixId([0; 32]),
            n_prefix: 0,
            model: ModelId([0; 32]),
            kv: KvType::F16,
            resident: None,
        }
    }

    /// llama.cpp's sequence state of the chunk.
    pub(crate) fn payload(&self) -> &[u8] {
        &self.bytes[self.at..]
    }
    /// Identity of the prefix this state was made after.
    pub fn prefix_id(&self) -> PrefixId {
        self.prefix
    }

    /// Serialises the state with its identities and checksums: the header
    /// and tokens, then the payload (borrowed, written after them).
    pub fn to_file_bytes(&self) -> (Vec<u8>, &[u8]) {
        (self.file_header(FILE_F16, self.payload()), self.payload())
    }

    /// This state in the compact format: the state its file decodes to
    /// (what answers must use, so that a state encoded now and one read
    /// back are the same), and the compact payload to write.
    pub fn pack(&self) -> Result<(ChunkState, Vec<u8>), StateError> {
        let bad = |e: String| StateError::Codec {
            path: PathBuf::new(),
            error: e,
        };
        let payload = super::compact::encode(self.payload()).map_err(bad)?;
        let decoded = super::compact::decode(&payload).map_err(bad)?;
        let state = ChunkState {
            tokens: self.tokens.clone(),
            bytes: decoded,
            at: 0,
            prefix: self.prefix,
            n_prefix: self.n_prefix,
            model: self.model,
            kv: self.kv,
            resident: None,
        };
        Ok((state, payload))
    }

    /// Writes the state to `path` atomically in the compact format, with
    /// `payload` from [`Self::pack`].
    pub fn save_packed(&self, path: &Path, payload: &[u8]) -> Result<(), StateError> {
        let head = self.file_header(FILE_COMPACT, payload);
        write_atomic(path, &[&head, payload]).map_err(|error| StateError::Io {
            path: path.to_owned(),
            error,
        })
    }

    /// The header and tokens of a file of `version` whose payload is
    /// `payload`.
    fn file_header(&self, version: u32, payload: &[u8]) -> Vec<u8> {
        let tokens: Vec<u8> = self.tokens.iter().flat_map(|t| t.to_le_bytes()).collect();
        let mut crc = crc32fast::Hasher::new();
        crc.update(&tokens);
        crc.update(payload);
        let mut h = Vec::with_capacity(HEADER_LEN);
        h.extend_from_slice(MAGIC);
        h.extend_from_slice(&version.to_le_bytes());
        h.extend_from_slice(&self.kv.code().to_le_bytes());
        h.extend_from_slice(&self.prefix.0);
        h.extend_from_slice(&self.model.0);
        h.extend_from_slice(&self.n_prefix.to_le_bytes());
        h.extend_from_slice(&(self.tokens.len() as u32).to_le_bytes());
        h.extend_from_slice(&(payload.len() as u64).to_le_bytes());
        h.extend_from_slice(&crc.finalize().to_le_bytes());
        let header_crc = crc32fast::hash(&h);
        h.extend_from_slice(&header_crc.to_le_bytes());
        debug_assert_eq!(h.len(), HEADER_LEN);
        h.extend_from_slice(&tokens);
        h
    }

    /// Writes the state to `path` atomically.
    pub fn save(&self, path: &Path) -> Result<(), StateError> {
        let (head, body) = self.to_file_bytes();
        write_atomic(path, &[&head, body]).map_err(|error| StateError::Io {
            path: path.to_owned(),
            error,
        })
    }

    /// Reads a state from `path`, accepting it only if it was made after
    /// `prefix` (which pins the model and KV type too).
    pub fn load(path: &Path, prefix: &PrefixState) -> Result<Self, StateError> {
        Self::load_timed(path, prefix, &mut LoadTimes::default())
    }

    /// [`Self::load`], adding where its time went to `times` (benchmarks
    /// report the split: on a GPU the file tier is this CPU work).
    pub fn load_timed(
        path: &Path,
        prefix: &PrefixState,
        times: &mut LoadTimes,
    ) -> Result<Self, StateError> {
        let t = Instant::now();
        let data = std::fs::read(path).map_err(|error| StateError::Io {
            path: path.to_owned(),
            error,
        })?;
        times.read += t.elapsed();
        Self::from_file_data(data, prefix, times).map_err(|e| e.at(path))
    }

    /// Parses file bytes (see [`Self::load`]); errors carry an empty path.
    pub fn from_file_bytes(data: &[u8], prefix: &PrefixState) -> Result<Self, StateError> {
        Self::from_file_data(data.to_vec(), prefix, &mut LoadTimes::default())
    }

    /// [`Self::from_file_bytes`] keeping `data` as the state's buffer.
    fn from_file_data(
        data: Vec<u8>,
        prefix: &PrefixState,
        times: &mut LoadTimes,
    ) -> Result<Self, StateError> {
        let p = PathBuf::new;
        if data.len() < MAGIC.len() || &data[..8] != MAGIC {
            return Err(StateError::Foreign { path: p() });
        }
        let truncated = |expected| StateError::Truncated {
            path: p(),
            len: data.len(),
            expected,
        };
        if data.len() < HEADER_LEN {
            return Err(truncated(HEADER_LEN));
        }
        let u32_at =
            |o: usize| u32::from_le_bytes([data[o], data[o + 1], data[o + 2], data[o + 3]]);
        let version = u32_at(8);
        if version != FILE_F16 && version != FILE_COMPACT {
            return Err(StateError::Version {
                path: p(),
                found: version,
                expected: FILE_COMPACT,
            });
        }
        if crc32fast::hash(&data[..HEADER_LEN - 4]) != u32_at(HEADER_LEN - 4) {
            return Err(StateError::Corrupt { path: p() });
        }
        let mut prefix_id = [0u8; 32];
        prefix_id.copy_from_slice(&data[16..48]);
        let n_prefix = u32_at(80);
        let n_tokens = u32_at(84) as usize;
        let mut len8 = [0u8; 8];
        len8.copy_from_slice(&data[88..96]);
        let payload = u64::from_le_bytes(len8) as usize;
        let expected = HEADER_LEN + 4 * n_tokens + payload;
        if data.len() != expected {
            return Err(truncated(expected));
        }
        let body = &data[HEADER_LEN..];
        let t = Instant::now();
        let sound = crc32fast::hash(body) == u32_at(96);
        times.verify += t.elapsed();
        if !sound {
            return Err(StateError::Corrupt { path: p() });
        }
        let mut model = [0u8; 32];
        model.copy_from_slice(&data[48..80]);
        if ModelId(model) != prefix.model || KvType::from_code(u32_at(12)) != Some(prefix.kv) {
            return Err(StateError::OtherModel { path: p() });
        }
        if PrefixId(prefix_id) != prefix.id {
            return Err(StateError::OtherPrefix { path: p() });
        }
        let tokens = body[..4 * n_tokens]
            .chunks_exact(4)
            .map(|b| i32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        let at = HEADER_LEN + 4 * n_tokens;
        let (bytes, at) = if version == FILE_COMPACT {
            let t = Instant::now();
            let decoded = super::compact::decode(&data[at..])
                .map_err(|error| StateError::Codec { path: p(), error })?;
            times.decode += t.elapsed();
            (decoded, 0)
        } else {
            (data, at)
        };
        Ok(Self {
            tokens,
            at,
            bytes,
            prefix: prefix.id,
            n_prefix,
            model: prefix.model,
            kv: prefix.kv,
            resident: None,
        })
    }

    /// A state of `tokens` made after `after` that only `lease`'s memory
    /// tier holds.
    pub(crate) fn in_tier(
        tokens: &[TokenId],
        after: &PrefixState,
        lease: super::pool::Lease,
    ) -> Self {
        let mut state = ChunkState::tokens_only(tokens.to_vec());
        state.prefix = after.id;
        state.n_prefix = after.tokens.len() as u32;
        state.model = after.model;
        state.kv = after.kv;
        state.resident = Some(lease);
        state
    }

    /// Whether the state file at `path` is in the compact format (reads its
    /// first 12 bytes).
    pub fn file_is_compact(path: &Path) -> bool {
        use std::io::Read;
        let mut head = [0u8; 12];
        std::fs::File::open(path)
            .and_then(|mut f| f.read_exact(&mut head))
            .is_ok_and(|()| &head[..8] == MAGIC && head[8..12] == FILE_COMPACT.to_le_bytes())
    }

    /// Whether the state's bytes are in host memory (not only in a tier).
    pub fn has_bytes(&self) -> bool {
        self.bytes.len() > self.at
    }

    /// The memory tier holding the state, if one does.
    pub fn resident(&self) -> Option<&super::pool::Lease> {
        self.resident.as_ref()
    }
}

impl StateError {
    fn at(self, path: &Path) -> Self {
        let path = path.to_owned();
        match self {
            StateError::Io { error, .. } => StateError::Io { path, error },
            StateError::Foreign { .. } => StateError::Foreign { path },
            StateError::Version {
                found, expected, ..
            } => StateError::Version {
                path,
                found,
                expected,
            },
            StateError::Truncated { len, expected, .. } => StateError::Truncated {
                path,
                len,
                expected,
            },
            StateError::Corrupt { .. } => StateError::Corrupt { path },
            StateError::OtherModel { .. } => StateError::OtherModel { path },
            StateError::OtherPrefix { .. } => StateError::OtherPrefix { path },
            StateError::Codec { error, .. } => StateError::Codec { path, error },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prefix(model: u8, tokens: &[TokenId]) -> PrefixState {
        let model = ModelId([model; 32]);
        PrefixState {
            tokens: tokens.to_vec(),
            bytes: vec![],
            id: PrefixId::new(model, KvType::F16, tokens),
            model,
            kv: KvType::F16,
            alone: false,
        }
    }

    fn chunk(p: &PrefixState) -> ChunkState {
        ChunkState {
            tokens: vec![5, 6, 7],
            bytes: (0..200u8).collect(),
            at: 0,
            prefix: p.id,
            n_prefix: p.tokens.len() as u32,
            model: p.model,
            kv: p.kv,
            resident: None,
        }
    }

    fn bytes(c: &ChunkState) -> Vec<u8> {
        let (mut h, b) = c.to_file_bytes();
        h.extend_from_slice(b);
        h
    }

    #[test]
    fn round_trips() {
        let p = prefix(1, &[1, 2]);
        let c = chunk(&p);
        let back = ChunkState::from_file_bytes(&bytes(&c), &p).expect("parse");
        assert_eq!(back.tokens, c.tokens);
        assert_eq!(back.payload(), c.payload());
    }

    #[test]
    fn every_kind_of_damage_is_detected() {
        let p = prefix(1, &[1, 2]);
        let good = bytes(&chunk(&p));
        let parse = |d: &[u8]| ChunkState::from_file_bytes(d, &p).err();
        assert!(matches!(
            parse(&good[..50]),
            Some(StateError::Truncated { .. })
        ));
        assert!(matches!(
            parse(&good[..good.len() - 1]),
            Some(StateError::Truncated { .. })
        ));
        assert!(matches!(
            parse(b"GGUF and more"),
            Some(StateError::Foreign { .. })
        ));
        for at in [20, 90, HEADER_LEN + 2, good.len() - 1] {
            let mut bad = good.clone();
            bad[at] ^= 0x40;
            assert!(
                matches!(parse(&bad), Some(StateError::Corrupt { .. })),
                "flip at {at}"
            );
        }
        let mut old = good.clone();
        old[8] = 0;
        assert!(matches!(
            parse(&old),
            Some(StateError::Version { found: 0, .. })
        ));
    }

    #[test]
    fn states_from_another_model_or_prefix_are_refused() {
        let p = prefix(1, &[1, 2]);
        let data = bytes(&chunk(&p));
        let other_model = prefix(2, &[1, 2]);
        let other_prefix = prefix(1, &[1, 2, 3]);
        assert!(matches!(
            ChunkState::from_file_bytes(&data, &other_model),
            Err(StateError::OtherModel { .. })
        ));
        assert!(matches!(
            ChunkState::from_file_bytes(&data, &other_prefix),
            Err(StateError::OtherPrefix { .. })
        ));
    }
}
