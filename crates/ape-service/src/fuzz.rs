//! The service's fuzz targets, run as bounded property tests in every
//! `cargo test`: the HTTP request parser and origin guard on arbitrary bytes
//! and headers (the format readers' are in `ape-index`). The property is
//! the one a server left running needs: any input gives a value or an
//! error, never a panic.

use proptest::prelude::*;

use ape_index::fuzz::{config, edits, mutate};

proptest! {
    #![proptest_config(config())]

    /// The request body parser on mutated requests and on raw bytes.
    #[test]
    fn the_request_parser_never_panics(e in edits(), raw in prop::collection::vec(any::<u8>(), 0..256)) {
        let seed = br#"{"model":"m","messages":[{"role":"system","content":"s"},{"role":"user","content":[{"type":"text","text":"q"}]},{"role":"assistant","content":null},{"role":"user","content":"q2"}],"stream":true,"stream_options":{"include_usage":true},"max_tokens":8,"temperature":0.5,"top_p":0.9,"seed":-1,"top_k":"all","files":["a.md"],"n":1,"stop":null,"store":false}"#;
        let base = crate::answer::AskOptions::default();
        let _ = crate::server::request::parse(&base, &mutate(seed, &e));
        let _ = crate::server::request::parse(&base, &raw);
    }

    /// The origin guard on arbitrary Host, Origin and Content-Type values.
    #[test]
    fn the_guard_never_panics(host in "\\PC{0,40}", origin in "\\PC{0,40}", ct in "\\PC{0,40}") {
        use axum::http::{HeaderMap, HeaderValue, Method};
        let g = crate::server::guard::Guard::new(
            "127.0.0.1:8080".parse().expect("addr"), &["docs.lan".into()], &["https://a.example".into()]);
        let mut h = HeaderMap::new();
        for (k, v) in [("host", &host), ("origin", &origin), ("content-type", &ct)] {
            if let Ok(v) = HeaderValue::from_str(v) {
                h.insert(k, v);
            }
        }
        let _ = g.check(&Method::POST, &h);
    }
}
