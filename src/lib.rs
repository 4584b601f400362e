//! ape-chat: chat with a local folder, answering from cached per-chunk KV
//! states with Adaptive Parallel Encoding (APE, Yang, Chen & Chen, ICLR 2025).
//!
//! Data flow: files → chunks → BM25 + dense vectors (retrieval) → per-chunk
//! KV states encoded once after a shared prefix and stored on disk → at
//! question time the retrieved states are loaded side by side at the same
//! positions and only the question is prefilled, with APE's attention
//! correction applied inside llama.cpp. The work is in three crates:
//! `ape-engine` (llama.cpp, states, tiers), `ape-index` (files to chunks,
//! BM25, vectors, watcher) and `ape-service` (answers, the folder's life,
//! the HTTP API); this crate is the front ends: the CLI, the TUI, and the
//! benchmarks and evaluations that drive the others.
#![cfg_attr(not(test), deny(clippy::unwrap_used))]
// Unsafe code lives in the engine's FFI modules (and one `posix_fadvise` in
// the benchmarks), each allowed by name, every block with a `// SAFETY:`.
#![deny(unsafe_code)]
#![deny(clippy::undocumented_unsafe_blocks)]

pub mod bench;
pub mod cli;
pub mod eval;
pub mod svg;
pub mod tui;

// The library crates' modules, under the names the front ends (and the
// integration tests) use: one path per module whichever crate holds it.
pub use ape_engine::{compute, engine, fsutil, kvstore, numfmt, paths, states, statestore};
pub use ape_index::{index, ingest, rlimit, watch};
pub use ape_service::{answer, config, conversation, server, service, workspace};
