//! The shared state store (`--state-store`) against a real `redis-server`
//! (Debian's, installed by `scripts/setup.sh`), started here on a free
//! loopback port in a temporary directory and stopped after: a second
//! machine (a second cache) encodes nothing and answers the same; a store
//! that dies, holds a damaged value or evicts keys costs encodes, never an
//! answer.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::{ape_chat, json_lines, record, tiny_model_path};

/// A `redis-server` of our own, stopped when dropped.
struct Redis {
    child: Child,
    port: u16,
    _dir: tempfile::TempDir,
}

impl Redis {
    fn start(extra: &[&str]) -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .expect("a free port");
        Self::on(port, extra)
    }

    fn on(port: u16, extra: &[&str]) -> Self {
        let dir = tempfile::tempdir().expect("tmp");
        let child = Command::new("redis-server")
            .args(["--bind", "127.0.0.1", "--port", &port.to_string()])
            .args(["--save", "", "--appendonly", "no", "--dir"])
            .arg(dir.path())
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server (scripts/setup.sh installs it)");
        let r = Self {
            child,
            port,
            _dir: dir,
        };
        let deadline = Instant::now() + Duration::from_secs(20);
        while r.raw("PING\r\n") != "+PONG\r\n" && !r.raw("PING\r\n").starts_with("-NOAUTH") {
            assert!(Instant::now() < deadline, "redis-server never answered");
            std::thread::sleep(Duration::from_millis(50));
        }
        r
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/0", self.port)
    }

    /// One command in Redis's inline protocol; the reply as text.
    fn raw(&self, cmd: &str) -> String {
        let Ok(mut s) = TcpStream::connect(("127.0.0.1", self.port)) else {
            return String::new();
        };
        let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
        let _ = s.write_all(cmd.as_bytes());
        let mut buf = [0u8; 256];
        let n = s.read(&mut buf).unwrap_or(0);
        String::from_utf8_lossy(&buf[..n]).into_owned()
    }

    fn client(&self) -> redis::Connection {
        redis::Client::open(self.url())
            .and_then(|c| c.get_connection())
            .expect("connect")
    }

    fn keys(&self) -> Vec<String> {
        redis::cmd("KEYS")
            .arg("ape-chat:state:*")
            .query(&mut self.client())
            .expect("keys")
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn sample() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/sample"))
}

const QUESTION: &str = "Where are the encryption keys kept?";

/// `--ask` over the sample folder with its own cache, through `store`.
fn ask(cache: &Path, store: &str) -> (String, Value) {
    ask_with(cache, &["--state-store", store])
}

/// `--ask` over the sample folder with its own cache and `extra` flags.
fn ask_with(cache: &Path, extra: &[&str]) -> (String, Value) {
    let out = ape_chat(cache)
        .args([
            "--ask",
            QUESTION,
            "--json",
            "--max-tokens",
            "8",
            "--top-k",
            "3",
        ])
        .args(extra)
        .arg("--model")
        .arg(tiny_model_path())
        .arg(sample())
        .output()
        .expect("run");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines = json_lines(&out.stdout);
    let text = record(&lines, "answer")["text"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    (text, record(&lines, "stats").clone())
}

#[test]
fn a_second_machine_encodes_nothing_and_answers_the_same() {
    let redis = Redis::start(&[]);
    let (a, b) = (
        tempfile::tempdir().expect("tmp"),
        tempfile::tempdir().expect("tmp"),
    );
    let (first, s1) = ask(a.path(), &redis.url());
    assert_eq!(s1["states_encoded"], 3, "{s1}");
    assert_eq!(redis.keys().len(), 3, "the encoded states were shared");
    let (second, s2) = ask(b.path(), &redis.url());
    assert_eq!(s2["states_encoded"], 0, "{s2}");
    assert_eq!(s2["states_from_store"], 3, "{s2}");
    assert!(s2["state_store_bytes"].as_u64() > Some(0), "{s2}");
    assert_eq!(first, second, "token-identical");
}

#[test]
fn a_store_that_dies_costs_encodes_and_is_used_again_once_back() {
    let redis = Redis::start(&[]);
    let port = redis.port;
    let url = redis.url();
    drop(redis);
    let c = tempfile::tempdir().expect("tmp");
    let (text, s) = ask(c.path(), &url);
    assert!(!text.is_empty());
    assert_eq!(s["states_encoded"], 3, "{s}");
    let notes = s["notes"].to_string();
    assert!(notes.contains("unavailable"), "{notes}");
    // Back on the same port (empty): used again, by a process that starts
    // after; a long-lived one retries after its backoff (below).
    let redis = Redis::on(port, &[]);
    let (d, e) = (
        tempfile::tempdir().expect("tmp"),
        tempfile::tempdir().expect("tmp"),
    );
    ask(d.path(), &url);
    let (again, s) = ask(e.path(), &url);
    assert_eq!(s["states_from_store"], 3, "{s}");
    assert_eq!(again, text);
    drop(redis);
}

/// One process: the store goes down mid-run (a note, lookups answered
/// as misses without waiting), comes back, and is used again after the
/// backoff.
#[test]
fn a_long_lived_store_client_retries_after_its_backoff() {
    let redis = Redis::start(&[]);
    let store = ape_chat::statestore::SharedStore::open(&redis.url()).expect("open");
    store.offer("k1", b"v1".to_vec(), false);
    store.flush(Duration::from_secs(5));
    assert_eq!(store.get("k1").as_deref(), Some(&b"v1"[..]));
    let port = redis.port;
    drop(redis);
    assert_eq!(store.get("k1"), None);
    let notes = store.take_notes();
    assert!(notes.iter().any(|n| n.contains("unavailable")), "{notes:?}");
    let redis = Redis::on(port, &[]);
    store.offer("k2", b"v2".to_vec(), false);
    let deadline = Instant::now() + Duration::from_secs(10);
    while store.get("k2").is_none() {
        assert!(Instant::now() < deadline, "never used again");
        store.offer("k2", b"v2".to_vec(), false);
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(store.take_notes().iter().any(|n| n.contains("is back")));
    drop(redis);
}

/// Every value in the store damaged (a byte flipped): each is caught by
/// the file checks, encoded here instead, and replaced in the store.
#[test]
fn a_damaged_value_in_the_store_is_caught_and_replaced() {
    let redis = Redis::start(&[]);
    let a = tempfile::tempdir().expect("tmp");
    let (first, _) = ask(a.path(), &redis.url());
    let mut c = redis.client();
    let keys = redis.keys();
    let mut clean = Vec::new();
    for k in &keys {
        let mut v: Vec<u8> = redis::cmd("GET").arg(k).query(&mut c).expect("get");
        clean.push(v.clone());
        let at = v.len() - 9;
        v[at] ^= 0x5a;
        redis::cmd("SET")
            .arg(k)
            .arg(v)
            .query::<()>(&mut c)
            .expect("set");
    }
    let b = tempfile::tempdir().expect("tmp");
    let (second, s) = ask(b.path(), &redis.url());
    assert_eq!(s["states_from_store"], 0, "{s}");
    assert_eq!(s["states_encoded"], 3, "{s}");
    assert!(s["notes"].to_string().contains("failed its checks"), "{s}");
    assert_eq!(first, second);
    let now: Vec<Vec<u8>> = keys
        .iter()
        .map(|k| redis::cmd("GET").arg(k).query(&mut c).expect("get"))
        .collect();
    assert_eq!(now, clean, "the store's copies were replaced");
}

/// A store far smaller than the folder's states, evicting as it goes:
/// answers stay as without it.
#[test]
fn a_store_smaller_than_the_states_changes_no_answer() {
    let redis = Redis::start(&["--maxmemory", "5mb", "--maxmemory-policy", "allkeys-lru"]);
    let plain = tempfile::tempdir().expect("tmp");
    let (without, _) = ask_with(plain.path(), &[]);
    for _ in 0..3 {
        let dir = tempfile::tempdir().expect("tmp");
        let (text, _) = ask(dir.path(), &redis.url());
        assert_eq!(text, without);
    }
    assert!(
        redis.keys().len() < 3,
        "the store evicted: {:?}",
        redis.keys()
    );
}

#[test]
fn a_bad_url_or_password_is_a_clear_error_without_the_secret() {
    let redis = Redis::start(&["--requirepass", "right-one"]);
    let cache = tempfile::tempdir().expect("tmp");
    let url = format!("redis://:wrong-one@127.0.0.1:{}/0", redis.port);
    let (text, s) = ask(cache.path(), &url);
    assert!(!text.is_empty(), "answered without the store");
    let notes = s["notes"].to_string();
    assert!(notes.contains("unavailable"), "{notes}");
    assert!(!notes.contains("wrong-one"), "{notes}");
    let out = ape_chat(cache.path())
        .args([
            "--ask",
            QUESTION,
            "--state-store",
            "http://u:s3cret@h",
            "--model",
        ])
        .arg(tiny_model_path())
        .arg(sample())
        .output()
        .expect("run");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not a redis://"), "{err}");
    assert!(!err.contains("s3cret"), "{err}");
}

/// `doctor` checks the store with one real state, and `bench store`
/// measures it, every answer the same however its states arrived.
#[test]
fn doctor_checks_the_store_and_the_bench_measures_it() {
    let redis = Redis::start(&[]);
    let cache = tempfile::tempdir().expect("tmp");
    let out = ape_chat(cache.path())
        .args([
            "doctor",
            "--json",
            "--steps",
            "2",
            "--state-store",
            &redis.url(),
            "--model",
        ])
        .arg(tiny_model_path())
        .output()
        .expect("run");
    let r: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(r["state_store"]["passed"], true, "{r}");
    assert!(
        r["state_store"]["result"]["round_trip_bytes"].as_u64() > Some(10_000),
        "{r}"
    );
    let out = ape_chat(cache.path())
        .args([
            "bench",
            "store",
            "--json",
            "--max-tokens",
            "4",
            "--top-k",
            "2",
        ])
        .args([
            "--question",
            QUESTION,
            "--state-store",
            &redis.url(),
            "--model",
        ])
        .arg(tiny_model_path())
        .output()
        .expect("run");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: Value = serde_json::from_slice(&out.stdout).expect("json");
    let q = &r["questions"][0];
    assert_eq!(q["states"], 2, "{r}");
    assert_eq!(q["same_answer"], true, "{r}");
    assert!(r["store_read_mb_per_s"].as_f64() > Some(0.0), "{r}");
    assert!(
        redis.keys().is_empty(),
        "the bench's keys are gone: {:?}",
        redis.keys()
    );
    let stray: Vec<String> = redis::cmd("KEYS")
        .arg("ape-chat:bench:*")
        .query(&mut redis.client())
        .expect("keys");
    assert!(stray.is_empty(), "{stray:?}");
}
