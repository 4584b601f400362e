//! Every way a chat request can fail, as a client sees it: each refusal
//! is a 4xx with an OpenAI error object naming its cause, streamed or not,
//! and 5xx is kept for the server's own faults, so no request a fuzzer
//! makes from real requests gets one. Raw HTTP, so the exact status and
//! body are what is checked.

use std::io::{Read, Write};
use std::net::TcpStream;

use crate::server::Server;

/// A question of `words` words, made of the sample folder's vocabulary.
fn long_question(words: usize) -> String {
    const VOCAB: &[&str] = &[
        "nightly",
        "snapshots",
        "kept",
        "backup",
        "policy",
        "encryption",
        "keys",
        "rotation",
        "engineer",
        "release",
        "kestrels",
        "field",
        "notes",
        "weekly",
        "monthly",
        "restore",
    ];
    (0..words)
        .map(|i| VOCAB[(i * 7 + i / 16) % VOCAB.len()])
        .collect::<Vec<_>>()
        .join(" ")
}

/// The reply to one request: status code and body.
fn send(server: &Server, head: &str, body: &[u8]) -> (u16, String) {
    let Ok(mut s) = TcpStream::connect(&server.addr) else {
        return (0, String::new());
    };
    let head = format!(
        "POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\n{head}Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let _ = s.write_all(head.as_bytes());
    let _ = s.write_all(body);
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    let out = String::from_utf8_lossy(&out).into_owned();
    let status = out.get(9..12).and_then(|c| c.parse().ok()).unwrap_or(0);
    let body = out.split_once("\r\n\r\n").map(|(_, b)| b.to_string());
    (status, body.unwrap_or_default())
}

fn json(server: &Server, body: &str) -> (u16, String) {
    send(
        server,
        "Content-Type: application/json\r\n",
        body.as_bytes(),
    )
}

fn ask(question: &str, extra: &str) -> String {
    let q = serde_json::to_string(question).expect("a string");
    format!(r#"{{"messages":[{{"role":"user","content":{q}}}],"max_tokens":2{extra}}}"#)
}

/// The error object of a refusal: its message, type and code.
fn error(body: &str) -> serde_json::Value {
    serde_json::from_str::<serde_json::Value>(body)
        .map(|v| v["error"].clone())
        .unwrap_or_else(|e| panic!("not an error object ({e}): {body:.300}"))
}

#[test]
fn every_client_error_is_a_4xx_naming_its_cause_and_fuzzed_requests_never_get_a_5xx() {
    let cache = tempfile::tempdir().expect("tmp");
    let server = Server::start(
        cache.path(),
        // A short question over two chunks fits the memory budget (about
        // 360 MB with the tiny model); a 6,000-word one, inside the
        // window, does not (about 650 MB).
        &[
            "--max-tokens",
            "4",
            "--max-request-chunks",
            "8",
            "--top-k",
            "2",
            "--memory-budget-gb",
            "0.55",
        ],
    );
    let past_window = long_question(60_000);
    let q = "How long are nightly snapshots kept?";
    // (what, body, status, words the message says, code)
    let cases: Vec<(&str, String, u16, &str, Option<&str>)> = vec![
        ("malformed JSON", r#"{"messages": ["#.into(), 400, "not a chat request", None),
        ("no messages", r#"{"messages":[]}"#.into(), 400, "no messages", None),
        ("no messages field", r#"{"model":"x"}"#.into(), 400, "missing field `messages`", None),
        (
            "an assistant last",
            r#"{"messages":[{"role":"assistant","content":"hi"}]}"#.into(),
            400,
            "last message",
            None,
        ),
        (
            "an image",
            r#"{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:"}}]}]}"#.into(),
            400,
            "only text parts",
            None,
        ),
        ("n", ask(q, r#","n":3"#), 400, "n must be 1", Some("unsupported_parameter")),
        (
            "tools",
            ask(q, r#","tools":[{"type":"function","function":{"name":"f"}}]"#),
            400,
            "tools",
            Some("unsupported_parameter"),
        ),
        ("logit_bias", ask(q, r#","logit_bias":{"5":1}"#), 400, "logit_bias", Some("unsupported_parameter")),
        ("a penalty", ask(q, r#","presence_penalty":1"#), 400, "presence_penalty", Some("unsupported_parameter")),
        (
            "JSON output",
            ask(q, r#","response_format":{"type":"json_object"}"#),
            400,
            "text response format",
            Some("unsupported_parameter"),
        ),
        ("temperature", ask(q, r#","temperature":9"#), 400, "between 0 and 2", None),
        ("top_p", ask(q, r#","top_p":0"#), 400, "top_p", None),
        ("max_tokens 0", ask(q, r#","max_tokens":0"#), 400, "max_tokens", None),
        ("max_tokens huge", ask(q, r#","max_tokens":100000"#), 400, "max_tokens", None),
        ("five stops", ask(q, r#","stop":["a","b","c","d","e"]"#), 400, "at most 4", None),
        ("an empty stop", ask(q, r#","stop":[""]"#), 400, "must not be empty", None),
        ("top_logprobs alone", ask(q, r#","top_logprobs":2"#), 400, "needs logprobs", None),
        (
            "top_logprobs 21",
            ask(q, r#","logprobs":true,"top_logprobs":21"#),
            400,
            "between 0 and 20",
            None,
        ),
        ("top_k", ask(q, r#","top_k":"many""#), 400, "top-k must be", None),
        ("seed", ask(q, r#","seed":0.5"#), 400, "seed must be an integer", None),
        (
            "an unknown file",
            ask(q, r#","files":["no-such-notes.md"]"#),
            400,
            "not an indexed file",
            Some("file_not_found"),
        ),
        (
            "more chunks than a request may read",
            ask(q, r#","top_k":"all""#),
            400,
            "chunks",
            Some("too_many_chunks"),
        ),
        (
            "a context over the memory budget",
            ask(&long_question(6_000), ""),
            400,
            "memory budget",
            Some("over_memory_budget"),
        ),
        (
            "a question past the window",
            ask(&past_window, ""),
            400,
            "past the",
            Some("context_length_exceeded"),
        ),
    ];
    for (what, body, want, says, code) in &cases {
        for stream in [false, true] {
            let body = if stream && body.ends_with('}') && body.contains("\"messages\":[{") {
                format!("{},\"stream\":true}}", &body[..body.len() - 1])
            } else if stream {
                continue;
            } else {
                body.clone()
            };
            let (status, reply) = json(&server, &body);
            assert_eq!(status, *want, "{what} (stream {stream}): {reply:.400}");
            let e = error(&reply);
            let message = e["message"].as_str().unwrap_or_default();
            assert!(message.contains(says), "{what}: {message:?} lacks {says:?}");
            assert_eq!(e["type"], "invalid_request_error", "{what}: {e}");
            if let Some(code) = code {
                assert_eq!(e["code"], *code, "{what}: {e}");
            }
        }
    }
    // What the window message tells: how far the question reached, and the
    // limit.
    let (_, reply) = json(&server, &ask(&past_window, ""));
    let message = error(&reply)["message"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        message.contains("8192") && message.contains("position"),
        "{message}"
    );
    // Outside the JSON: the body's bytes and type, and the endpoint.
    let (status, reply) = send(
        &server,
        "Content-Type: application/json\r\n",
        b"{\"messages\":[{\"role\":\"user\",\"content\":\"\xff\"}]}",
    );
    assert_eq!(status, 400, "{reply}");
    assert!(error(&reply)["message"]
        .as_str()
        .unwrap_or_default()
        .contains("UTF-8"));
    let (status, _) = send(
        &server,
        "Content-Type: text/plain\r\n",
        ask(q, "").as_bytes(),
    );
    assert_eq!(status, 415);
    let (status, _) = json(&server, &"x".repeat(2 << 20));
    assert_eq!(status, 413);
    let (status, reply) = json(&server, &ask(q, ""));
    assert_eq!(status, 200, "the same server still answers: {reply}");

    // Requests made from real ones, as a fuzzer would: fields dropped,
    // given every kind of value, bytes flipped. Answers or refusals, never
    // a server fault.
    let seeds = [
        ask(q, ""),
        ask(q, r#","stream":true,"stop":["\n"],"logprobs":true,"top_logprobs":3"#),
        ask(q, r#","temperature":0.7,"top_p":0.9,"seed":7,"files":["backup-policy.md"],"top_k":1"#),
        r#"{"messages":[{"role":"system","content":"s"},{"role":"user","content":"When?"},{"role":"assistant","content":"Then."},{"role":"user","content":"Why?"}],"max_tokens":2}"#.to_string(),
    ];
    const VALUES: &[&str] = &[
        "null",
        "true",
        "0",
        "-1",
        "1",
        "3",
        "2.5",
        "1e309",
        "\"\"",
        "\"all\"",
        "\"x\"",
        "[]",
        "[\"\\n\"]",
        "[1]",
        "{}",
        "{\"type\":\"text\"}",
        "[{\"role\":\"user\",\"content\":\"\"}]",
        "[{\"role\":\"tool\",\"content\":\"x\"}]",
        "[{\"role\":\"user\"}]",
        "18446744073709551616",
    ];
    const FIELDS: &[&str] = &[
        "messages",
        "max_tokens",
        "max_completion_tokens",
        "temperature",
        "top_p",
        "seed",
        "n",
        "stop",
        "logprobs",
        "top_logprobs",
        "top_k",
        "files",
        "stream",
        "stream_options",
        "response_format",
        "tools",
        "tool_choice",
        "logit_bias",
        "frequency_penalty",
        "model",
    ];
    let mut rng = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move |n: usize| {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        (rng % n as u64) as usize
    };
    let mut statuses = std::collections::BTreeMap::<u16, usize>::new();
    for i in 0..160 {
        let seed = &seeds[next(seeds.len())];
        let mut v: serde_json::Value = serde_json::from_str(seed).expect("a seed");
        let mut body = match i % 4 {
            // A field given another value (answers stay short: no
            // max_tokens past 3 reaches the model).
            0 | 1 => {
                let field = FIELDS[next(FIELDS.len())];
                let value: serde_json::Value =
                    serde_json::from_str(VALUES[next(VALUES.len())]).unwrap_or_default();
                let short = value.as_u64().is_none_or(|n| n <= 3);
                if short || !field.contains("tokens") {
                    v[field] = value;
                }
                v.to_string().into_bytes()
            }
            // A field dropped.
            2 => {
                if let Some(o) = v.as_object_mut() {
                    let keys: Vec<String> = o.keys().cloned().collect();
                    o.remove(&keys[next(keys.len())]);
                }
                v.to_string().into_bytes()
            }
            // Bytes flipped, cut or inserted.
            _ => seed.clone().into_bytes(),
        };
        if i % 4 == 3 || next(5) == 0 {
            for _ in 0..1 + next(4) {
                let at = next(body.len().max(1));
                match next(3) {
                    0 => body.truncate(at),
                    1 => body.insert(at, next(256) as u8),
                    _ => {
                        if let Some(b) = body.get_mut(at) {
                            *b ^= 1 << next(8);
                        }
                    }
                }
            }
        }
        let (status, reply) = send(&server, "Content-Type: application/json\r\n", &body);
        assert!(
            (200..500).contains(&status),
            "a server fault for {:?}: {status} {reply:.300}",
            String::from_utf8_lossy(&body)
        );
        *statuses.entry(status).or_default() += 1;
    }
    println!("fuzzed requests by status: {statuses:?}");
    assert!(statuses.get(&200).is_some_and(|&n| n > 10), "{statuses:?}");
    assert!(statuses.get(&400).is_some_and(|&n| n > 10), "{statuses:?}");
}
