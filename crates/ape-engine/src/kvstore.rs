//! Content-addressed store of chunk KV states on disk.
//!
//! The key hashes everything that changes a state: the prefix identity (which
//! covers model identity, KV type and prefix tokens), the chunk tokens and the
//! file format version. Identical chunks in different files share one entry.
//! An entry shown invalid (corrupt, truncated, stale or foreign) is deleted
//! and reported, so the caller re-encodes it: never used. An entry that
//! merely cannot be read now (too many open files, a permission, an I/O
//! error, a newer build's format) is tried again, then reported and kept:
//! a hiccup never costs the cache its states. Entries are written
//! in the store's [`StateFormat`] (compact unless told otherwise); both
//! formats are read.

use std::path::PathBuf;

use crate::engine::state::KEY_VERSION;
use crate::engine::{ChunkState, PrefixState, StateError, StateFormat, TierStats, TokenId};
use crate::statestore::SharedStore;

/// What a lookup found.
pub enum Lookup {
    /// The state, and the bytes read from disk for it.
    Hit(ChunkState, u64),
    /// Not on disk but in the shared store: fetched, verified and written
    /// to the local cache; its bytes and how long the fetch took.
    Fetched(ChunkState, u64, std::time::Duration),
    Miss,
    /// An unusable entry was found and removed; the reason is for the report.
    Rejected(StateError),
    /// The entry could not be read (after retries), and was kept.
    Unreadable(StateError),
}

/// Waits before reading an entry again after an error that says nothing
/// about the file.
const RETRY_AFTER: [std::time::Duration; 2] = [
    std::time::Duration::from_millis(20),
    std::time::Duration::from_millis(200),
];

/// Whether a load error leaves the file's own validity unknown: the read
/// failed (not for lack of bytes: a short file is truncated), or the file
/// is of a newer format than this build reads.
fn says_nothing_of_the_file(e: &StateError) -> bool {
    match e {
        StateError::Io { error, .. } => error.kind() != std::io::ErrorKind::UnexpectedEof,
        StateError::Version {
            found, expected, ..
        } => found > expected,
        _ => false,
    }
}

/// A directory of `<key>.kvstate` files, with the team's shared store
/// behind it when one is configured.
pub struct KvStore {
    root: PathBuf,
    format: StateFormat,
    shared: Option<SharedStore>,
    /// Keys whose shared value failed its checks: the next put overwrites.
    bad_shared: std::sync::Mutex<std::collections::HashSet<String>>,
}

impl KvStore {
    /// Opens (lazily creates) the store at `root`, writing compact states.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self {
            root: root.into(),
            format: StateFormat::default(),
            shared: None,
            bad_shared: Default::default(),
        }
    }

    /// Reads states missing on disk from `shared`, and offers it the
    /// states encoded here.
    pub fn with_shared(mut self, shared: Option<SharedStore>) -> Self {
        self.shared = shared;
        self
    }

    /// The shared store behind this cache, if any.
    pub fn shared(&self) -> Option<&SharedStore> {
        self.shared.as_ref()
    }

    /// What the shared store has to say since the last call.
    pub fn take_notes(&self) -> Vec<String> {
        self.shared
            .as_ref()
            .map(SharedStore::take_notes)
            .unwrap_or_default()
    }

    /// A state missing on disk, from the shared store: written to the
    /// local cache atomically, then loaded and checked as any file is (a
    /// value that fails is removed, counted, and replaced in the store by
    /// the next put).
    fn fetch(&self, prefix: &PrefixState, key: &str) -> Lookup {
        let Some(shared) = &self.shared else {
            return Lookup::Miss;
        };
        let t = std::time::Instant::now();
        let Some(bytes) = shared.get(key) else {
            return Lookup::Miss;
        };
        let took = t.elapsed();
        let path = self.path(key);
        if crate::fsutil::write_atomic(&path, &[&bytes]).is_err() {
            return Lookup::Miss; // a full disk: encoded and tried later
        }
        match ChunkState::load(&path, prefix) {
            Ok(s) if self.key(prefix, s.tokens()) == key => {
                Lookup::Fetched(s, bytes.len() as u64, took)
            }
            _ => {
                let _ = std::fs::remove_file(&path);
                shared.count_invalid();
                if let Ok(mut bad) = self.bad_shared.lock() {
                    bad.insert(key.to_string());
                }
                Lookup::Miss
            }
        }
    }

    /// Whether the shared store holds `key` (fetched into the local cache
    /// and checked): what the states stage asks before encoding.
    pub fn fetch_shared(&self, prefix: &PrefixState, key: &str) -> bool {
        matches!(self.fetch(prefix, key), Lookup::Fetched(..))
    }

    /// The store writing states in `format`.
    pub fn with_format(mut self, format: StateFormat) -> Self {
        self.format = format;
        self
    }

    /// How this store writes states.
    pub fn format(&self) -> StateFormat {
        self.format
    }

    /// The store under the user's cache directory.
    pub fn default_location() -> Self {
        Self::new(crate::paths::kv_dir())
    }

    /// The store evaluation and calibration use (index GC never sees it).
    pub fn eval_location() -> Self {
        Self::new(crate::paths::eval_kv_dir())
    }

    /// The evaluation store for states kept in `format` (one directory per
    /// format: the two share keys).
    pub fn eval_location_for(format: StateFormat) -> Self {
        match format {
            StateFormat::Compact => Self::eval_location(),
            StateFormat::F16 => Self::new(crate::paths::eval_kv_dir().with_extension("f16"))
                .with_format(StateFormat::F16),
        }
    }

    /// The key of the state of `tokens` after `prefix`.
    pub fn key(&self, prefix: &PrefixState, tokens: &[TokenId]) -> String {
        let mut h = blake3::Hasher::new();
        h.update(&KEY_VERSION.to_le_bytes());
        h.update(&prefix.id().0);
        tokens.iter().for_each(|t| {
            h.update(&t.to_le_bytes());
        });
        h.finalize().to_hex().to_string()
    }

    /// Where the entry for `key` lives.
    pub fn path(&self, key: &str) -> PathBuf {
        self.root
            .join(key.get(..2).unwrap_or("xx"))
            .join(format!("{key}.kvstate"))
    }

    /// Loads entry `key`, checked end to end: checksums, model and prefix
    /// identity, and that its tokens hash to `key`.
    pub fn get(&self, prefix: &PrefixState, key: &str) -> Lookup {
        let path = self.path(key);
        let reject = |e: StateError| {
            let _ = std::fs::remove_file(&path);
            Lookup::Rejected(e)
        };
        let mut retries = RETRY_AFTER.iter();
        loop {
            let read = std::fs::metadata(&path).map_or(0, |m| m.len());
            return match ChunkState::load(&path, prefix) {
                Ok(s) if self.key(prefix, s.tokens()) == key => Lookup::Hit(s, read),
                Ok(_) => reject(StateError::OtherPrefix { path: path.clone() }),
                Err(StateError::Io { error, .. })
                    if error.kind() == std::io::ErrorKind::NotFound =>
                {
                    self.fetch(prefix, key)
                }
                Err(e) if says_nothing_of_the_file(&e) => match retries.next() {
                    Some(wait) if matches!(e, StateError::Io { .. }) => {
                        std::thread::sleep(*wait);
                        continue;
                    }
                    _ => Lookup::Unreadable(e),
                },
                Err(e) => reject(e),
            };
        }
    }

    /// Stores a state atomically under its key: as it is for the f16
    /// format, else its compact `packed` payload ([`ChunkState::pack`]).
    pub fn put(
        &self,
        prefix: &PrefixState,
        state: &ChunkState,
        packed: Option<&[u8]>,
    ) -> Result<String, StateError> {
        let key = self.key(prefix, state.tokens());
        let path = self.path(&key);
        match packed {
            Some(p) => state.save_packed(&path, p)?,
            None => state.save(&path)?,
        }
        if let Some(shared) = &self.shared {
            // The file's own bytes: what another machine's check expects.
            if let Ok(bytes) = std::fs::read(&path) {
                let replace = self.bad_shared.lock().is_ok_and(|mut b| b.remove(&key));
                shared.offer(&key, bytes, replace);
            }
        }
        Ok(key)
    }
}

impl Drop for KvStore {
    /// What was encoded here reaches the shared store before the process
    /// goes (a few seconds at most).
    fn drop(&mut self) {
        if let Some(s) = &self.shared {
            s.flush(std::time::Duration::from_secs(10));
        }
    }
}

/// Size of the store.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct CacheStats {
    pub entries: usize,
    pub bytes: u64,
    /// Entries some folder index refers to.
    pub referenced: usize,
    pub referenced_bytes: u64,
    /// Entries in the compact format (the rest hold f16 as llama.cpp wrote it).
    pub compact: usize,
    /// The memory tiers of the ape-chat processes running now.
    pub memory: Vec<ProcessTiers>,
}

/// What one running process holds in its memory tiers, as it last
/// published it (after each answer).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct ProcessTiers {
    pub pid: u32,
    /// The model file's name.
    pub model: String,
    pub tiers: Vec<TierStats>,
    /// What the shared state store did for it, when it reads through one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state_store: Option<crate::statestore::StoreStats>,
}

/// Publishes this process's memory tiers (and its shared-store figures)
/// for `cache stats` (best effort: a read-only cache only loses the report).
pub fn publish_tiers(
    model: &str,
    tiers: &[TierStats],
    state_store: Option<crate::statestore::StoreStats>,
) {
    let p = ProcessTiers {
        pid: std::process::id(),
        model: model.to_string(),
        tiers: tiers.to_vec(),
        state_store,
    };
    if let Ok(json) = serde_json::to_vec(&p) {
        let path = crate::paths::tiers_dir().join(format!("{}.json", p.pid));
        let _ = crate::fsutil::write_atomic(&path, &[&json]);
    }
}

/// Removes this process's report (when it stops answering).
pub fn unpublish_tiers() {
    let path = crate::paths::tiers_dir().join(format!("{}.json", std::process::id()));
    let _ = std::fs::remove_file(path);
}

/// The reports of processes still running; those of processes gone are
/// removed.
pub fn live_tiers() -> Vec<ProcessTiers> {
    let mut live = Vec::new();
    for f in std::fs::read_dir(crate::paths::tiers_dir())
        .into_iter()
        .flatten()
        .flatten()
    {
        let Some(p) = std::fs::read(f.path())
            .ok()
            .and_then(|b| serde_json::from_slice::<ProcessTiers>(&b).ok())
        else {
            continue;
        };
        if running(p.pid) {
            live.push(p);
        } else {
            let _ = std::fs::remove_file(f.path());
        }
    }
    live.sort_by_key(|p| p.pid);
    live
}

/// Whether process `pid` runs (Linux: `/proc`; elsewhere assumed).
fn running(pid: u32) -> bool {
    let proc = std::path::Path::new("/proc");
    !proc.is_dir() || proc.join(pid.to_string()).exists()
}

/// What a garbage collection does with states no index refers to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unreferenced {
    /// Remove them all: `ape-chat cache gc`, a user trimming the cache.
    Remove,
    /// Keep them while the budget allows, first to go past it: an index pass
    /// that re-keys a folder (another model, a file's old content back from
    /// `git checkout`) then finds its states instead of re-encoding them.
    Keep,
}

/// What a garbage collection removed.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct GcReport {
    pub temp_files_removed: usize,
    pub unreferenced_removed: usize,
    pub evicted: usize,
    pub bytes_freed: u64,
    pub bytes_after: u64,
}

struct Entry {
    key: String,
    path: PathBuf,
    bytes: u64,
    used: std::time::SystemTime,
}

impl KvStore {
    fn entries(&self) -> (Vec<Entry>, Vec<PathBuf>) {
        let (mut entries, mut temps) = (Vec::new(), Vec::new());
        for sub in std::fs::read_dir(&self.root)
            .into_iter()
            .flatten()
            .flatten()
        {
            for f in std::fs::read_dir(sub.path())
                .into_iter()
                .flatten()
                .flatten()
            {
                let path = f.path();
                let name = f.file_name().to_string_lossy().into_owned();
                let Ok(meta) = f.metadata() else { continue };
                if name.ends_with(".tmp") {
                    temps.push(path);
                } else if let Some(key) = name.strip_suffix(".kvstate") {
                    let used = meta.modified().unwrap_or(std::time::UNIX_EPOCH);
                    entries.push(Entry {
                        key: key.to_string(),
                        path,
                        bytes: meta.len(),
                        used,
                    });
                }
            }
        }
        (entries, temps)
    }

    /// Marks entry `key` as just used (its mtime is the LRU clock).
    pub fn touch(&self, key: &str) {
        if let Ok(f) = std::fs::File::options().write(true).open(self.path(key)) {
            let _ = f.set_modified(std::time::SystemTime::now());
        }
    }

    /// Entry count and bytes, and how many are `referenced`.
    pub fn stats(&self, referenced: &std::collections::HashSet<String>) -> CacheStats {
        let (entries, _) = self.entries();
        let mut s = CacheStats {
            memory: live_tiers(),
            ..CacheStats::default()
        };
        for e in &entries {
            s.entries += 1;
            s.bytes += e.bytes;
            s.compact += usize::from(ChunkState::file_is_compact(&e.path));
            if referenced.contains(&e.key) {
                s.referenced += 1;
                s.referenced_bytes += e.bytes;
            }
        }
        s
    }

    /// Removes leftover temp files of killed writers (older than a minute),
    /// then states until the store fits in `budget` bytes: those no index
    /// refers to first, then the least recently used. `unreferenced` says
    /// whether states no index refers to go even within the budget.
    /// Evicted states an index still refers to are re-encoded by its next
    /// update.
    pub fn gc(
        &self,
        referenced: &std::collections::HashSet<String>,
        budget: u64,
        unreferenced: Unreferenced,
    ) -> GcReport {
        let mut r = GcReport::default();
        let (mut entries, temps) = self.entries();
        let minute_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
        for t in temps {
            let old = std::fs::metadata(&t)
                .and_then(|m| m.modified())
                .is_ok_and(|m| m < minute_ago);
            if old && std::fs::remove_file(&t).is_ok() {
                r.temp_files_removed += 1;
            }
        }
        // Unreferenced before referenced, each least recently used first.
        entries.sort_by_key(|e| (referenced.contains(&e.key), e.used));
        let mut total: u64 = entries.iter().map(|e| e.bytes).sum();
        for e in &entries {
            let is_referenced = referenced.contains(&e.key);
            if total <= budget && (is_referenced || unreferenced == Unreferenced::Keep) {
                break;
            }
            if std::fs::remove_file(&e.path).is_ok() {
                total -= e.bytes;
                r.bytes_freed += e.bytes;
                if is_referenced {
                    r.evicted += 1;
                } else {
                    r.unreferenced_removed += 1;
                }
            }
        }
        r.bytes_after = total;
        r
    }

    /// Removes every entry; returns how many.
    pub fn clear(&self) -> usize {
        let (entries, temps) = self.entries();
        temps.iter().for_each(|t| {
            let _ = std::fs::remove_file(t);
        });
        entries
            .iter()
            .filter(|e| std::fs::remove_file(&e.path).is_ok())
            .count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    fn entry(store: &KvStore, key: &str, bytes: usize, age_s: u64) {
        let p = store.path(key);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(&p, vec![0u8; bytes]).expect("write");
        let t = std::time::SystemTime::now() - std::time::Duration::from_secs(age_s);
        std::fs::File::options()
            .write(true)
            .open(&p)
            .expect("open")
            .set_modified(t)
            .expect("mtime");
    }

    /// Four 100-byte entries: three referenced, aa01 the least recently
    /// used; one unreferenced, cc04, used more recently than aa01 and bb03.
    fn four(dir: &std::path::Path) -> (KvStore, HashSet<String>) {
        let store = KvStore::new(dir);
        entry(&store, "aa01", 100, 30);
        entry(&store, "aa02", 100, 20);
        entry(&store, "bb03", 100, 10);
        entry(&store, "cc04", 100, 5);
        store.touch("aa02"); // now the most recent
        let refs: HashSet<String> = ["aa01", "aa02", "bb03"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        (store, refs)
    }

    fn left(store: &KvStore) -> Vec<&'static str> {
        ["aa01", "aa02", "bb03", "cc04"]
            .into_iter()
            .filter(|k| store.path(k).exists())
            .collect()
    }

    /// One collection's (unreferenced removed, evicted, bytes after).
    fn gc(
        store: &KvStore,
        refs: &HashSet<String>,
        budget: u64,
        mode: Unreferenced,
    ) -> (usize, usize, u64) {
        let r = store.gc(refs, budget, mode);
        (r.unreferenced_removed, r.evicted, r.bytes_after)
    }

    #[test]
    fn gc_evicts_unreferenced_then_least_recently_used_and_keeps_what_fits() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (store, refs) = four(dir.path());
        assert_eq!(store.stats(&refs).referenced, 3);
        // Within the budget nothing goes, not even the unreferenced entry.
        assert_eq!(gc(&store, &refs, 400, Unreferenced::Keep), (0, 0, 400));
        // Past it the unreferenced entry goes first, though not the oldest.
        assert_eq!(gc(&store, &refs, 300, Unreferenced::Keep), (1, 0, 300));
        assert_eq!(left(&store), ["aa01", "aa02", "bb03"]);
        // Then the least recently used referenced one.
        assert_eq!(gc(&store, &refs, 200, Unreferenced::Keep), (0, 1, 200));
        assert_eq!(left(&store), ["aa02", "bb03"]);
        assert_eq!(store.clear(), 2);
        assert_eq!(store.stats(&refs).entries, 0);
    }

    #[test]
    fn gc_that_removes_unreferenced_does_so_within_the_budget_too() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (store, refs) = four(dir.path());
        assert_eq!(gc(&store, &refs, 1000, Unreferenced::Remove), (1, 0, 300));
        assert_eq!(left(&store), ["aa01", "aa02", "bb03"]);
        assert_eq!(gc(&store, &refs, 200, Unreferenced::Remove), (0, 1, 200));
        assert_eq!(left(&store), ["aa02", "bb03"]);
    }
}
