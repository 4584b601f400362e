//! `ape-chat serve`: the OpenAI-compatible API, tested with the official
//! `openai` Python package (installed by `scripts/setup.sh` in a venv of
//! its own) from `tests/server/openai_client.py`, and here what needs the
//! process itself: the bind refusal, draining on SIGTERM, and an index
//! that lost nothing.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{self, tiny_model_path};

/// A running server, killed when dropped (a failed assertion included).
pub(crate) struct Server {
    pub child: Child,
    pub addr: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    /// Starts `ape-chat serve` on the sample folder, on a free port, and
    /// waits until it answers from its index.
    pub fn start(cache: &Path, args: &[&str]) -> Self {
        Self::start_with(cache, &tiny_model_path(), args)
    }

    /// [`Self::start`] with `model`.
    pub fn start_with(cache: &Path, model: &Path, args: &[&str]) -> Self {
        let server = Self::spawn(cache, model, args);
        let deadline = Instant::now() + Duration::from_secs(120);
        while !server.get("/health").contains("\"status\":\"ok\"") {
            assert!(Instant::now() < deadline, "the server never became ready");
            std::thread::sleep(Duration::from_millis(200));
        }
        server
    }

    /// Starts `ape-chat serve` with `model` on the sample folder and waits
    /// for its listening line only.
    pub fn spawn(cache: &Path, model: &Path, args: &[&str]) -> Self {
        let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/sample");
        let mut child = common::ape_chat(cache)
            .args(["serve", "--port", "0", "--model"])
            .arg(model)
            .args(args)
            .arg(&docs)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn the server");
        let stdout = child.stdout.take().expect("stdout");
        let mut line = String::new();
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("the listening line");
        let addr = line
            .split("http://")
            .nth(1)
            .and_then(|r| r.split('/').next())
            .unwrap_or_else(|| panic!("no address in {line:?}"))
            .to_string();
        Self { child, addr }
    }

    fn base(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// A raw HTTP/1.1 exchange (`Connection: close`): the whole response.
    pub fn http(&self, request: &str) -> String {
        let Ok(mut s) = TcpStream::connect(&self.addr) else {
            return String::new();
        };
        let _ = s.write_all(request.as_bytes());
        let mut out = String::new();
        let _ = s.read_to_string(&mut out);
        out
    }

    pub fn get(&self, path: &str) -> String {
        self.http(&format!(
            "GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
        ))
    }

    /// `/health` as JSON.
    pub fn health(&self) -> serde_json::Value {
        let body = self.get("/health");
        let json = body.split("\r\n\r\n").nth(1).unwrap_or_default();
        serde_json::from_str(json).unwrap_or_default()
    }

    /// SIGTERM, then the exit status within `limit`.
    pub fn terminate(&mut self, limit: Duration) -> std::process::ExitStatus {
        let killed = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .expect("kill");
        assert!(killed.success());
        let deadline = Instant::now() + limit;
        loop {
            if let Some(st) = self.child.try_wait().expect("wait") {
                return st;
            }
            assert!(
                Instant::now() < deadline,
                "the server did not stop within {limit:?}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

fn client_python() -> PathBuf {
    let py = ape_chat::paths::cache_dir().join("openai-venv/bin/python");
    assert!(
        py.is_file(),
        "{} missing: run scripts/setup.sh",
        py.display()
    );
    py
}

#[test]
fn the_official_openai_client_gets_answers_follow_ups_and_clear_errors() {
    let (cache, keyed_cache) = (
        tempfile::tempdir().expect("tmp"),
        tempfile::tempdir().expect("tmp"),
    );
    let server = Server::start(
        cache.path(),
        &[
            "--timeout",
            "2",
            "--queue",
            "8",
            "--max-tokens",
            "24",
            "--metrics",
        ],
    );
    let keyed = Server::start(keyed_cache.path(), &["--api-key", "s3cret"]);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/server/openai_client.py");
    let out = Command::new(client_python())
        .arg(script)
        .arg(server.base())
        .arg(keyed.base())
        .arg("s3cret")
        .arg(server.child.id().to_string())
        .output()
        .expect("run the client");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "client failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The load test's figures (answered, refused, TTFT, peak RSS).
    println!("{stdout}");
    let report: serde_json::Value =
        serde_json::from_str(stdout.lines().last().unwrap_or("")).expect("summary");
    let load = &report["load"];
    assert_eq!(
        load["answered"].as_u64().unwrap_or(0) + load["refused"].as_u64().unwrap_or(0),
        128
    );
    assert!(
        load["refused"].as_u64().unwrap_or(0) > 0,
        "32 clients overflow a queue of 8: {load}"
    );
}

fn clients_python() -> PathBuf {
    let py = ape_chat::paths::cache_dir().join("clients-venv/bin/python");
    assert!(
        py.is_file(),
        "{} missing: run scripts/setup.sh",
        py.display()
    );
    py
}

/// `llm` and LangChain's `ChatOpenAI`, installed from PyPI, against the
/// default model: answers from the folder streamed and not, follow-ups.
#[test]
fn llm_and_langchain_answer_from_the_folder_streaming_and_not() {
    let cache = tempfile::tempdir().expect("tmp");
    let server = Server::start_with(cache.path(), &common::default_model_path(), &[]);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/server/other_clients.py");
    let py = clients_python();
    let bin = py.parent().expect("venv bin");
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = Command::new(&py)
        .arg(script)
        .arg(server.base())
        .arg(cache.path().join("llm"))
        .env("PATH", path)
        .output()
        .expect("run the clients");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "clients failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    println!("{stdout}");
    let h = server.health();
    assert!(h["answered"].as_u64() >= Some(7), "{h}");
}

#[test]
fn another_address_needs_a_key() {
    let cache = tempfile::tempdir().expect("tmp");
    let out = common::ape_chat(cache.path())
        .args(["serve", "--host", "0.0.0.0", "--port", "0"])
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/sample"))
        .output()
        .expect("run");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--api-key"), "{err}");
}

/// SIGTERM while an answer is being generated: the answer is completed,
/// the process exits cleanly, and the index needs nothing redone.
#[test]
fn sigterm_drains_the_request_in_flight_and_loses_nothing() {
    let cache = tempfile::tempdir().expect("tmp");
    let mut server = Server::start(cache.path(), &["--max-tokens", "32"]);
    let body = r#"{"messages":[{"role":"user","content":"Where are the encryption keys kept?"}],"max_tokens":32}"#;
    let request = format!(
        "POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let mut s = TcpStream::connect(&server.addr).expect("connect");
    s.write_all(request.as_bytes()).expect("send");
    std::thread::sleep(Duration::from_millis(300));
    let killed = Command::new("kill")
        .args(["-TERM", &server.child.id().to_string()])
        .status()
        .expect("kill");
    assert!(killed.success());
    let mut reply = String::new();
    s.read_to_string(&mut reply).expect("the drained answer");
    assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
    assert!(reply.contains("\"chat.completion\""), "{reply}");
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(st) = server.child.try_wait().expect("wait") {
            break st;
        }
        assert!(Instant::now() < deadline, "the server did not stop");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(status.success(), "{status:?}");
    // The index as the server left it: nothing to re-read.
    let out = common::ape_chat(cache.path())
        .args(["index", "--json", "--no-states", "--model"])
        .arg(tiny_model_path())
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/sample"))
        .output()
        .expect("index");
    assert!(out.status.success());
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).expect("report");
    assert_eq!(r["files_indexed"], 0, "{r}");
    assert_eq!(r["files_unchanged"], 4, "{r}");
}

#[test]
fn preloaded_states_answer_the_first_question_from_memory() {
    let cache = tempfile::tempdir().expect("tmp");
    let server = Server::start(cache.path(), &["--preload", "on", "--max-tokens", "8"]);
    let deadline = Instant::now() + Duration::from_secs(300);
    let health = loop {
        let body = server.get("/health");
        let json = body.split("\r\n\r\n").nth(1).unwrap_or_default();
        let h: serde_json::Value = serde_json::from_str(json).unwrap_or_default();
        if !h["folder"]["preloaded"].is_null() {
            break h;
        }
        assert!(Instant::now() < deadline, "preloading never ended: {body}");
        std::thread::sleep(Duration::from_millis(200));
    };
    let p = &health["folder"]["preloaded"];
    assert_eq!(p["loaded"], health["folder"]["chunks"], "{health}");
    assert_eq!(p["full"], false, "{health}");
    let body = r#"{"messages":[{"role":"user","content":"Where are the encryption keys kept?"}]}"#;
    let reply = server.http(&format!(
        "POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    ));
    assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
    let json = reply.split("\r\n\r\n").nth(1).unwrap_or_default();
    let r: serde_json::Value = serde_json::from_str(json).expect("a JSON reply");
    let u = &r["usage"];
    assert_eq!(u["states_from_disk"], 0, "{u}");
    assert_eq!(u["states_encoded"], 0, "{u}");
    assert!(u["states_from_memory"].as_u64() > Some(0), "{u}");
}
