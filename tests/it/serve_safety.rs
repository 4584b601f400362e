//! `ape-chat serve` left running beside a person's documents: requests
//! from a web page or a rebinding DNS name refused before any work,
//! stalled and idle clients cut, a connection cap that still lets a new
//! client in, a bounded shutdown whatever the clients do, a fatal start
//! error that neither deadlocks nor hides, and a client that leaves while
//! its question waits costing no prefill. Raw HTTP on sockets: these are
//! the requests a browser or an attacker sends, not what an SDK sends.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use crate::common::tiny_model_path;
use crate::server::Server;

const BODY: &str = r#"{"messages":[{"role":"user","content":"Where are the encryption keys kept?"}],"max_tokens":4}"#;

fn post(host: &str, extra: &str, body: &str) -> String {
    format!(
        "POST /v1/chat/completions HTTP/1.1\r\nHost: {host}\r\n{extra}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}

fn status(reply: &str) -> &str {
    reply.get(9..12).unwrap_or("")
}

/// Reads until the server closes the connection (or `limit` passes);
/// whether it closed.
fn closed_within(s: &mut TcpStream, limit: Duration) -> bool {
    s.set_read_timeout(Some(limit)).expect("timeout");
    let mut buf = [0u8; 512];
    let t = Instant::now();
    loop {
        match s.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => continue,
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return true,
            Err(_) => return t.elapsed() < limit,
        }
    }
}

#[test]
fn requests_from_web_pages_and_rebound_names_are_refused_before_any_work() {
    let cache = tempfile::tempdir().expect("tmp");
    let server = Server::start(cache.path(), &["--max-tokens", "4"]);
    let json = "Content-Type: application/json\r\n";
    // A page on another site POSTing as a form would (no preflight).
    let cross = server.http(&post(
        &server.addr,
        "Origin: https://evil.example\r\nContent-Type: text/plain\r\n",
        BODY,
    ));
    assert_eq!(status(&cross), "403", "{cross}");
    assert!(cross.contains("--cors https://evil.example"), "{cross}");
    // The same with a JSON type: the origin alone refuses it.
    let cross = server.http(&post(
        &server.addr,
        &format!("Origin: https://evil.example\r\n{json}"),
        BODY,
    ));
    assert_eq!(status(&cross), "403", "{cross}");
    // DNS rebinding: the attacker's name, resolved to 127.0.0.1.
    let rebound = server.http(&post("evil.example:8080", json, BODY));
    assert_eq!(status(&rebound), "403", "{rebound}");
    assert!(rebound.contains("DNS rebinding"), "{rebound}");
    let health =
        server.http("GET /health HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n");
    assert_eq!(status(&health), "403", "the folder's figures too: {health}");
    // No preflight for a simple text/plain request from curl either: the
    // body must say it is JSON.
    let plain = server.http(&post(&server.addr, "Content-Type: text/plain\r\n", BODY));
    assert_eq!(status(&plain), "415", "{plain}");
    // None of them reached the model.
    assert_eq!(server.health()["started"], 0);
    // What clients send is answered: the bound address and localhost.
    for host in [server.addr.clone(), "localhost".into()] {
        let ok = server.http(&post(&host, json, BODY));
        assert_eq!(status(&ok), "200", "{host}: {ok}");
    }
}

#[test]
fn cors_lets_a_listed_page_in_with_its_api_key() {
    let cache = tempfile::tempdir().expect("tmp");
    let server = Server::start(
        cache.path(),
        &[
            "--api-key",
            "k3y",
            "--cors",
            "https://notes.example",
            "--max-request-chunks",
            "5",
        ],
    );
    let preflight = server.http(&format!(
        "OPTIONS /v1/chat/completions HTTP/1.1\r\nHost: {}\r\nOrigin: https://notes.example\r\n\
         Access-Control-Request-Method: POST\r\nAccess-Control-Request-Headers: authorization, content-type\r\n\
         Connection: close\r\n\r\n",
        server.addr
    ));
    assert_eq!(status(&preflight), "200", "{preflight}");
    let lower = preflight.to_ascii_lowercase();
    assert!(
        lower.contains("access-control-allow-headers: authorization, content-type"),
        "the preflight allows the key's header: {preflight}"
    );
    assert!(lower.contains("access-control-allow-origin: https://notes.example"));
    let answered = server.http(&post(
        &server.addr,
        "Origin: https://notes.example\r\nContent-Type: application/json\r\nAuthorization: Bearer k3y\r\n",
        BODY,
    ));
    assert_eq!(status(&answered), "200", "{answered}");
    let other = server.http(&format!(
        "OPTIONS /v1/chat/completions HTTP/1.1\r\nHost: {}\r\nOrigin: https://evil.example\r\n\
         Access-Control-Request-Method: POST\r\nConnection: close\r\n\r\n",
        server.addr
    ));
    assert_eq!(status(&other), "403", "{other}");
    // One request may not read the whole folder past the configured cap.
    let key = "Content-Type: application/json\r\nAuthorization: Bearer k3y\r\n";
    let all =
        r#"{"messages":[{"role":"user","content":"Everything?"}],"top_k":"all","max_tokens":2}"#;
    let capped = server.http(&post("localhost", key, all));
    assert_eq!(status(&capped), "400", "{capped}");
    assert!(capped.contains("at most 5"), "{capped}");
    // Streamed, the same 400: headers wait for the answer's first text.
    let streamed =
        r#"{"messages":[{"role":"user","content":"Everything?"}],"top_k":"all","stream":true}"#;
    let events = server.http(&post("localhost", key, streamed));
    assert_eq!(status(&events), "400", "{events}");
    assert!(events.contains("at most 5"), "{events}");
    assert!(events.contains("too_many_chunks"), "{events}");
    assert!(
        !events.contains("[DONE]"),
        "an error object, not a stream: {events}"
    );
}

/// A client that sends half a header (slowloris) or nothing at all is cut
/// after the idle timeout; SIGTERM with such a client connected exits at
/// once rather than waiting for it.
#[test]
fn stalled_and_idle_clients_are_cut_and_never_hold_shutdown() {
    let cache = tempfile::tempdir().expect("tmp");
    let mut server = Server::start(
        cache.path(),
        &["--idle-timeout", "2", "--shutdown-timeout", "5"],
    );
    let mut half = TcpStream::connect(&server.addr).expect("connect");
    half.write_all(b"POST /v1/chat/completions HTTP/1.1\r\nHost: local")
        .expect("half a header");
    let mut silent = TcpStream::connect(&server.addr).expect("connect");
    let mut kept = TcpStream::connect(&server.addr).expect("connect");
    kept.write_all(b"GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n")
        .expect("a kept-alive request");
    let mut reply = [0u8; 4096];
    let n = kept.read(&mut reply).expect("the reply");
    assert!(reply[..n].starts_with(b"HTTP/1.1 200"));
    let t = Instant::now();
    for s in [&mut half, &mut silent, &mut kept] {
        assert!(closed_within(s, Duration::from_secs(20)), "not cut");
    }
    assert!(t.elapsed() >= Duration::from_secs(1), "cut too soon");
    // Shutdown with a stalled header in flight.
    let mut stalled = TcpStream::connect(&server.addr).expect("connect");
    stalled
        .write_all(b"POST /v1/chat/completions HTTP/1.1\r\nHost: local")
        .expect("half a header");
    std::thread::sleep(Duration::from_millis(200));
    let st = server.terminate(Duration::from_secs(10));
    assert!(st.success(), "{st:?}");
}

/// A client that sends requests but never reads the replies: once the
/// replies fill the socket buffers the server's writes stall, and after
/// the idle timeout it drops the connection instead of holding it busy.
#[test]
fn a_client_that_never_reads_is_cut() {
    let cache = tempfile::tempdir().expect("tmp");
    let server = Server::start(cache.path(), &["--idle-timeout", "2"]);
    let mut s = TcpStream::connect(&server.addr).expect("connect");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let req = b"GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n".repeat(256);
        // Pipelined requests until the server closes the connection.
        let sent = (0..100_000)
            .take_while(|_| s.write_all(&req).is_ok())
            .count();
        let _ = tx.send(sent);
    });
    let sent = rx
        .recv_timeout(Duration::from_secs(120))
        .expect("the server never closed the connection");
    assert!(sent < 100_000, "every write went through: {sent}");
    // And it still serves others.
    assert_eq!(status(&server.get("/health")), "200");
}

/// 2,000 idle connections (over the cap of 1,024): the longest-open idle
/// ones are closed to make room, and a new client is answered.
#[test]
fn two_thousand_idle_connections_do_not_lock_a_new_client_out() {
    let _ = ape_chat::rlimit::raise_open_files();
    let cache = tempfile::tempdir().expect("tmp");
    let server = Server::start(
        cache.path(),
        &["--idle-timeout", "300", "--max-tokens", "4"],
    );
    let idle: Vec<TcpStream> = (0..2000)
        .map(|_| TcpStream::connect(&server.addr).expect("connect"))
        .collect();
    let reply = server.http(&post(
        &server.addr,
        "Content-Type: application/json\r\n",
        BODY,
    ));
    assert_eq!(status(&reply), "200", "{reply}");
    drop(idle);
}

/// Every connection busy (requests whose bodies are still arriving): a
/// connection past the cap gets 503 at once, and the server is fine after.
#[test]
fn past_the_cap_with_every_connection_busy_is_a_503() {
    let cache = tempfile::tempdir().expect("tmp");
    let server = Server::start(cache.path(), &["--max-connections", "2", "--timeout", "30"]);
    let busy: Vec<TcpStream> = (0..2)
        .map(|_| {
            let mut s = TcpStream::connect(&server.addr).expect("connect");
            s.write_all(
                b"POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{",
            )
            .expect("a header and a byte");
            s
        })
        .collect();
    std::thread::sleep(Duration::from_millis(500));
    let refused =
        server.http("GET /health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    assert_eq!(status(&refused), "503", "{refused}");
    assert!(refused.contains("too many connections"), "{refused}");
    drop(busy);
    let deadline = Instant::now() + Duration::from_secs(10);
    while status(&server.get("/health")) != "200" {
        assert!(
            Instant::now() < deadline,
            "the server never took connections again"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A model that does not load: `/health` says why, a question gets the
/// reason as a 503 (not a 429 once the queue "fills"), and SIGTERM exits.
#[test]
fn a_fatal_start_error_is_reported_and_shutdown_still_works() {
    let cache = tempfile::tempdir().expect("tmp");
    let cut = cache.path().join("cut.gguf");
    let bytes = std::fs::read(tiny_model_path()).expect("read model");
    std::fs::write(&cut, &bytes[..bytes.len() / 3]).expect("write");
    let mut server = Server::spawn(cache.path(), &cut, &["--queue", "1"]);
    let deadline = Instant::now() + Duration::from_secs(60);
    let health = loop {
        let h = server.health();
        if h["status"] == "error" {
            break h;
        }
        assert!(Instant::now() < deadline, "no error on /health: {h}");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(
        health["folder"]["error"]
            .as_str()
            .unwrap_or("")
            .contains("cut.gguf"),
        "{health}"
    );
    for _ in 0..3 {
        let reply = server.http(&post(
            "localhost",
            "Content-Type: application/json\r\n",
            BODY,
        ));
        assert_eq!(status(&reply), "503", "{reply}");
        assert!(reply.contains("cut.gguf"), "{reply}");
    }
    let st = server.terminate(Duration::from_secs(15));
    assert!(st.success(), "{st:?}");
}

/// A question that waits behind a long answer and whose client leaves is
/// dropped unread: no retrieval, no state, no prefill.
#[test]
fn a_client_gone_while_queued_costs_no_prefill() {
    let cache = tempfile::tempdir().expect("tmp");
    let server = Server::start(cache.path(), &[]);
    let long = r#"{"messages":[{"role":"user","content":"Write a very long story about backups."}],"max_tokens":300,"stream":true}"#;
    let mut first = TcpStream::connect(&server.addr).expect("connect");
    first
        .write_all(post("localhost", "Content-Type: application/json\r\n", long).as_bytes())
        .expect("send");
    // The long answer is under way once the service took it up.
    let deadline = Instant::now() + Duration::from_secs(60);
    while server.health()["started"] != 1 {
        assert!(
            Instant::now() < deadline,
            "not started: {}",
            server.health()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut queued = TcpStream::connect(&server.addr).expect("connect");
    queued
        .write_all(post("localhost", "Content-Type: application/json\r\n", BODY).as_bytes())
        .expect("send");
    let deadline = Instant::now() + Duration::from_secs(10);
    while server.health()["waiting"] != 2 {
        assert!(Instant::now() < deadline, "not queued: {}", server.health());
        std::thread::sleep(Duration::from_millis(20));
    }
    drop(queued);
    std::thread::sleep(Duration::from_millis(300));
    drop(first);
    let deadline = Instant::now() + Duration::from_secs(120);
    let h = loop {
        let h = server.health();
        if h["waiting"] == 0 && h["in_flight"] == 0 {
            break h;
        }
        assert!(Instant::now() < deadline, "never idle: {h}");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(h["started"], 1, "only the long answer was taken up: {h}");
    assert_eq!(h["abandoned"], 1, "{h}");
    assert_eq!(
        h["cancelled"], 1,
        "the long answer stopped with its client: {h}"
    );
}
