//! A shared store of chunk states behind the local cache: Redis, or
//! anything that speaks its protocol (Valkey, a managed Redis). A state's
//! key already names everything it depends on (model identity, KV type,
//! prefix tokens, chunk tokens, format version), so the same bytes are
//! right on every machine with the same model: a team encodes a folder
//! once. The store is a cache and never the only copy: a miss, an evicted
//! or flushed key, a store that is down or a value that fails its checks
//! costs an encode, never a wrong answer.
//!
//! Reads run on the thread that needs the state (the blocking client, a
//! connect timeout of a second, reads and writes of a few), writes on a
//! thread of their own so an answer never waits for one. A failure marks
//! the store down, with one note, and it is tried again after a backoff
//! (1 s, doubling to a minute).

use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Keys are `ape-chat:state:<content address>`.
pub const NAMESPACE: &str = "ape-chat:state:";

const CONNECT_TIMEOUT: Duration = Duration::from_secs(1);
const IO_TIMEOUT: Duration = Duration::from_secs(5);
const FIRST_BACKOFF: Duration = Duration::from_secs(1);
const MAX_BACKOFF: Duration = Duration::from_secs(60);

/// Why the store cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("state store {url}: {reason}")]
    Url { url: String, reason: String },
    #[error("state store {url}: {reason}")]
    Unavailable { url: String, reason: String },
}

/// What the store did for this process, for `--json`, `/health`, `cache
/// stats` and the TUI.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct StoreStats {
    /// States read from the store (and verified).
    pub fetched: usize,
    pub fetched_bytes: u64,
    /// Time those reads took, in all.
    pub fetch_ms: f64,
    /// Lookups the store did not have.
    pub misses: usize,
    /// States offered to it (set if absent) and written.
    pub written: usize,
    /// Values that failed their checks and were replaced.
    pub replaced: usize,
    /// Failed operations (the store was down or timed out).
    pub failures: usize,
}

/// A connection to the shared store; cheap to clone.
#[derive(Clone)]
pub struct SharedStore {
    inner: Arc<Inner>,
}

struct Inner {
    client: redis::Client,
    /// The URL without its password: what messages name.
    shown: String,
    /// The URL as given: only to take its password out of error texts.
    given: String,
    /// What every key starts with ([`NAMESPACE`], or a benchmark's own).
    namespace: String,
    conn: Mutex<Option<redis::Connection>>,
    health: Mutex<Health>,
    stats: Mutex<StoreStats>,
    writes: Mutex<Sender<Write>>,
    /// Offers not written yet.
    pending: std::sync::atomic::AtomicUsize,
}

/// Whether the store is usable now.
#[derive(Default)]
struct Health {
    down_until: Option<Instant>,
    backoff: Duration,
    /// Notes not yet taken by a front end.
    notes: Vec<String>,
    /// The last failure, as `/health` reports it.
    last_error: Option<String>,
}

struct Write {
    key: String,
    bytes: Vec<u8>,
    /// Overwrite (a value that failed its checks), else set if absent.
    replace: bool,
}

impl std::fmt::Debug for SharedStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SharedStore({})", self.inner.shown)
    }
}

/// `url` with any password replaced by `***`.
pub fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    match rest.rsplit_once('@') {
        Some((auth, host)) => {
            let user = auth.split(':').next().unwrap_or("");
            if auth.contains(':') {
                format!("{scheme}://{user}:***@{host}")
            } else {
                format!("{scheme}://***@{host}")
            }
        }
        None => url.to_string(),
    }
}

impl SharedStore {
    /// The store at `url` (`redis://[user:pass@]host:port/db`,
    /// `rediss://` for TLS). Nothing is connected yet: a store that is
    /// down at start is a note at the first lookup, not an error.
    pub fn open(url: &str) -> Result<Self, StoreError> {
        Self::open_in(url, NAMESPACE)
    }

    /// [`Self::open`] with keys under `namespace` instead (a benchmark's
    /// scratch keys, kept apart from the team's).
    pub fn open_in(url: &str, namespace: &str) -> Result<Self, StoreError> {
        let shown = redact(url);
        if !(url.starts_with("redis://") || url.starts_with("rediss://")) {
            return Err(StoreError::Url {
                url: shown,
                reason: "not a redis:// or rediss:// URL".into(),
            });
        }
        let client = redis::Client::open(url).map_err(|e| StoreError::Url {
            url: shown.clone(),
            reason: scrub(&e.to_string(), url),
        })?;
        let (tx, rx) = mpsc::channel();
        let inner = Arc::new(Inner {
            client,
            shown,
            given: url.to_string(),
            namespace: namespace.to_string(),
            conn: Mutex::new(None),
            health: Mutex::new(Health {
                backoff: FIRST_BACKOFF,
                ..Health::default()
            }),
            stats: Mutex::new(StoreStats::default()),
            writes: Mutex::new(tx),
            pending: std::sync::atomic::AtomicUsize::new(0),
        });
        let weak = Arc::downgrade(&inner);
        std::thread::Builder::new()
            .name("state-store-writer".into())
            .spawn(move || writer(weak, rx))
            .map_err(|e| StoreError::Unavailable {
                url: redact(url),
                reason: e.to_string(),
            })?;
        Ok(Self { inner })
    }

    /// Deletes every key under this store's namespace (a benchmark's
    /// scratch keys); how many went.
    pub fn clear_namespace(&self) -> Option<usize> {
        let pattern = format!("{}*", self.inner.namespace);
        self.inner.run(|c| {
            let keys: Vec<String> = redis::cmd("KEYS").arg(&pattern).query(c)?;
            if keys.is_empty() {
                return Ok(0);
            }
            redis::cmd("DEL").arg(&keys).query::<usize>(c)
        })
    }

    /// The URL, password hidden.
    pub fn url(&self) -> &str {
        &self.inner.shown
    }

    /// The value under `key`, or `None` (missing, or the store is down:
    /// then a note says so, once, and it is tried again after a backoff).
    pub fn get(&self, key: &str) -> Option<Vec<u8>> {
        let t = Instant::now();
        let got = self.inner.run(|c| {
            redis::cmd("GET")
                .arg(format!("{}{key}", self.inner.namespace))
                .query::<Option<Vec<u8>>>(c)
        });
        let mut s = self.inner.stats.lock().ok()?;
        match got {
            Some(Some(bytes)) => {
                s.fetched += 1;
                s.fetched_bytes += bytes.len() as u64;
                s.fetch_ms += t.elapsed().as_secs_f64() * 1e3;
                Some(bytes)
            }
            Some(None) => {
                s.misses += 1;
                None
            }
            None => None,
        }
    }

    /// Offers `bytes` under `key` in the background: set if absent, or
    /// over what is there when `replace` (a value that failed its checks).
    pub fn offer(&self, key: &str, bytes: Vec<u8>, replace: bool) {
        if let Ok(tx) = self.inner.writes.lock() {
            use std::sync::atomic::Ordering;
            self.inner.pending.fetch_add(1, Ordering::SeqCst);
            let sent = tx.send(Write {
                key: key.to_string(),
                bytes,
                replace,
            });
            if sent.is_err() {
                self.inner.pending.fetch_sub(1, Ordering::SeqCst);
            }
        }
    }

    /// Waits (at most `limit`) for the offers made so far to be written:
    /// a process about to exit shares what it encoded. A store that is
    /// down drops them at once.
    pub fn flush(&self, limit: Duration) {
        let deadline = Instant::now() + limit;
        while self.inner.pending.load(std::sync::atomic::Ordering::SeqCst) > 0
            && Instant::now() < deadline
        {
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Counts a fetched value that failed its checks (it is replaced once
    /// encoded here).
    pub fn count_invalid(&self) {
        if let Ok(mut s) = self.inner.stats.lock() {
            s.replaced += 1;
        }
        self.inner.note(
            "a state in the store failed its checks: encoded here, the store's copy replaced",
        );
    }

    pub fn stats(&self) -> StoreStats {
        self.inner
            .stats
            .lock()
            .map(|s| s.clone())
            .unwrap_or_default()
    }

    /// Notes since the last call (the store went down, came back, held a
    /// bad value): for stderr, the TUI's status bar, `notes` in `--json`.
    pub fn take_notes(&self) -> Vec<String> {
        self.inner
            .health
            .lock()
            .map(|mut h| std::mem::take(&mut h.notes))
            .unwrap_or_default()
    }

    /// The last failure, while the store is down.
    pub fn last_error(&self) -> Option<String> {
        self.inner.health.lock().ok()?.last_error.clone()
    }

    /// `doctor`: reachable, writable, `value` (a real state file's bytes)
    /// written under a scratch key, read back the same and deleted, and
    /// how long each took.
    pub fn check(&self, value: &[u8]) -> Result<StoreCheck, StoreError> {
        let unavailable = |e: redis::RedisError| StoreError::Unavailable {
            url: self.inner.shown.clone(),
            reason: self.inner.describe(&e),
        };
        let t = Instant::now();
        let mut c = self
            .inner
            .client
            .get_connection_with_timeout(CONNECT_TIMEOUT)
            .map_err(unavailable)?;
        let _ = c.set_read_timeout(Some(IO_TIMEOUT));
        let _ = c.set_write_timeout(Some(IO_TIMEOUT));
        let connect_ms = ms(t);
        let t = Instant::now();
        redis::cmd("PING")
            .query::<String>(&mut c)
            .map_err(unavailable)?;
        let ping_ms = ms(t);
        let key = format!("{NAMESPACE}doctor:{}", std::process::id());
        let t = Instant::now();
        redis::cmd("SET")
            .arg(&key)
            .arg(value)
            .arg("PX")
            .arg(60_000)
            .query::<()>(&mut c)
            .map_err(unavailable)?;
        let back: Option<Vec<u8>> = redis::cmd("GET")
            .arg(&key)
            .query(&mut c)
            .map_err(unavailable)?;
        let _ = redis::cmd("DEL").arg(&key).query::<i64>(&mut c);
        let round_trip_ms = ms(t);
        if back.as_deref() != Some(value) {
            return Err(StoreError::Unavailable {
                url: self.inner.shown.clone(),
                reason: "a value written did not read back the same".into(),
            });
        }
        Ok(StoreCheck {
            url: self.inner.shown.clone(),
            connect_ms,
            ping_ms,
            round_trip_ms,
            round_trip_bytes: value.len(),
        })
    }
}

/// What `doctor` found of the store.
#[derive(Clone, Debug, serde::Serialize)]
pub struct StoreCheck {
    pub url: String,
    pub connect_ms: f64,
    pub ping_ms: f64,
    /// One chunk state set, read back and deleted.
    pub round_trip_ms: f64,
    pub round_trip_bytes: usize,
}

/// Whether an error means the store cannot be reached or used (network,
/// timeout, authentication), rather than one command refused.
fn down_error(e: &redis::RedisError) -> bool {
    e.is_io_error()
        || e.is_timeout()
        || e.is_connection_refusal()
        || e.is_connection_dropped()
        || matches!(e.kind(), redis::ErrorKind::AuthenticationFailed)
        || ["NOAUTH", "WRONGPASS", "NOPERM", "LOADING"]
            .iter()
            .any(|c| e.to_string().contains(c))
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

/// An error's text with the URL's password taken out, wherever it shows.
fn scrub(text: &str, url: &str) -> String {
    let secret = url
        .split_once("://")
        .and_then(|(_, rest)| rest.rsplit_once('@'))
        .and_then(|(auth, _)| auth.split_once(':').map(|(_, p)| p).or(Some(auth)))
        .filter(|p| !p.is_empty());
    match secret {
        Some(p) => text.replace(p, "***"),
        None => text.to_string(),
    }
}

impl Inner {
    /// Runs `op` on the connection (made now if there is none), unless
    /// the store is down; a failure drops the connection and marks it
    /// down. `None` when it did not run or failed.
    fn run<T>(
        &self,
        op: impl FnOnce(&mut redis::Connection) -> redis::RedisResult<T>,
    ) -> Option<T> {
        if self.down() {
            return None;
        }
        let mut conn = self.conn.lock().ok()?;
        if conn.is_none() {
            match self.client.get_connection_with_timeout(CONNECT_TIMEOUT) {
                Ok(c) => {
                    let _ = c.set_read_timeout(Some(IO_TIMEOUT));
                    let _ = c.set_write_timeout(Some(IO_TIMEOUT));
                    *conn = Some(c);
                }
                Err(e) => {
                    drop(conn);
                    self.failed(&e);
                    return None;
                }
            }
        }
        let c = conn.as_mut()?;
        match op(c) {
            Ok(v) => {
                drop(conn);
                self.up();
                Some(v)
            }
            // The server refused this one command (out of memory under
            // `maxmemory` with `noeviction`, say): counted, the store stays up.
            Err(e) if !down_error(&e) => {
                drop(conn);
                if let Ok(mut s) = self.stats.lock() {
                    s.failures += 1;
                }
                None
            }
            Err(e) => {
                *conn = None;
                drop(conn);
                self.failed(&e);
                None
            }
        }
    }

    fn down(&self) -> bool {
        self.health
            .lock()
            .map(|h| h.down_until.is_some_and(|t| Instant::now() < t))
            .unwrap_or(true)
    }

    fn describe(&self, e: &redis::RedisError) -> String {
        scrub(&e.to_string(), &self.given)
    }

    /// Marks the store down for the backoff; notes it when it was up.
    fn failed(&self, e: &redis::RedisError) {
        let reason = self.describe(e);
        if let Ok(mut s) = self.stats.lock() {
            s.failures += 1;
        }
        let Ok(mut h) = self.health.lock() else {
            return;
        };
        let was_up = h.last_error.is_none();
        h.down_until = Some(Instant::now() + h.backoff);
        let wait = h.backoff;
        h.backoff = (h.backoff * 2).min(MAX_BACKOFF);
        h.last_error = Some(reason.clone());
        if was_up {
            h.notes.push(format!(
                "state store {} unavailable ({reason}): states are encoded here meanwhile; trying it again in {} s",
                self.shown,
                wait.as_secs()
            ));
        }
    }

    fn up(&self) {
        let Ok(mut h) = self.health.lock() else {
            return;
        };
        if h.last_error.take().is_some() {
            h.notes.push(format!(
                "state store {} is back: states are shared again",
                self.shown
            ));
        }
        h.down_until = None;
        h.backoff = FIRST_BACKOFF;
    }

    fn note(&self, text: &str) {
        if let Ok(mut h) = self.health.lock() {
            h.notes.push(text.to_string());
        }
    }
}

/// The writer thread: offers states in order, while the store lives.
fn writer(inner: std::sync::Weak<Inner>, rx: Receiver<Write>) {
    for w in rx {
        let Some(inner) = inner.upgrade() else {
            return;
        };
        let key = format!("{}{}", inner.namespace, w.key);
        let done = inner.run(|c| {
            let mut cmd = redis::cmd("SET");
            cmd.arg(&key).arg(&w.bytes);
            if !w.replace {
                cmd.arg("NX");
            }
            cmd.query::<Option<String>>(c)
        });
        if let (Some(Some(_)), Ok(mut s)) = (done, inner.stats.lock()) {
            s.written += 1;
        }
        inner
            .pending
            .fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_never_reach_a_message() {
        assert_eq!(
            redact("redis://ann:s3cret@cache.lan:6379/2"),
            "redis://ann:***@cache.lan:6379/2"
        );
        assert_eq!(
            redact("rediss://s3cret@cache.lan"),
            "rediss://***@cache.lan"
        );
        assert_eq!(redact("redis://cache.lan:6379"), "redis://cache.lan:6379");
        assert_eq!(
            scrub("WRONGPASS for s3cret", "redis://ann:s3cret@h"),
            "WRONGPASS for ***"
        );
        let e = SharedStore::open("http://ann:s3cret@h").expect_err("not redis");
        assert!(!e.to_string().contains("s3cret"), "{e}");
    }

    /// Nothing listens on this port: the first lookup notes it once and
    /// marks the store down, so later lookups cost nothing until the
    /// backoff ends.
    #[test]
    fn a_store_that_is_down_is_a_note_not_an_error() {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .expect("a free port");
        let store = SharedStore::open(&format!("redis://:pw@127.0.0.1:{port}/0")).expect("open");
        assert_eq!(store.get("k"), None);
        let notes = store.take_notes();
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(notes[0].contains("unavailable"), "{notes:?}");
        assert!(!notes[0].contains("pw@"), "{notes:?}");
        let t = Instant::now();
        assert_eq!(store.get("k"), None);
        assert!(t.elapsed() < CONNECT_TIMEOUT, "down: not tried again yet");
        assert!(store.take_notes().is_empty(), "said once");
        assert_eq!(store.stats().failures, 1);
    }
}
