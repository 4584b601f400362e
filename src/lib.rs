//! ape-chat: chat with a local folder, answering from cached per-chunk KV
//! states with Adaptive Parallel Encoding (APE, Yang, Chen & Chen, ICLR 2025).
//!
//! Data flow: files → chunks → BM25 + dense vectors (retrieval) → per-chunk
//! KV states encoded once after a shared prefix and stored on disk → at
//! question time the retrieved states are loaded side by side at the same
//! positions and only the question is prefilled, with APE's attention
//! correction applied inside llama.cpp. [`engine`] is the only module that
//! touches llama.cpp; `cli` is a thin shell over the library.
#![cfg_attr(not(test), deny(clippy::unwrap_used))]
// Unsafe code lives in the engine's FFI modules (and one `posix_fadvise` in
// the benchmarks), each allowed by name, every block with a `// SAFETY:`.
#![deny(unsafe_code)]
#![deny(clippy::undocumented_unsafe_blocks)]

pub mod answer;
pub mod bench;
pub mod cli;
pub mod compute;
pub mod config;
pub mod conversation;
pub mod engine;
pub mod eval;
pub mod fsutil;
#[cfg(test)]
mod fuzz;
pub mod index;
pub mod ingest;
pub mod kvstore;
pub mod numfmt;
pub mod paths;
pub mod rlimit;
pub mod server;
pub mod service;
pub mod states;
pub mod statestore;
pub mod svg;
pub mod tui;
pub mod watch;
pub mod workspace;
