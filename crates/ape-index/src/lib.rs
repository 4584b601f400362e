//! A folder as chunks an answer can read: [`ingest`] (walk, formats,
//! chunking; the extract worker runs under [`rlimit`]'s caps), [`index`]
//! (BM25, vectors and the manifest, kept in step with the files in three
//! resumable stages) and [`watch`] (the debounced watcher).
#![cfg_attr(not(test), deny(clippy::unwrap_used))]
#![deny(unsafe_code)]
#![deny(clippy::undocumented_unsafe_blocks)]

#[cfg(any(test, feature = "fuzzing"))]
pub mod fuzz;
pub mod index;
pub mod ingest;
pub mod rlimit;
pub mod watch;

// The engine crate's modules under the paths this crate's code names them
// by (`crate::engine::…`), not part of its API.
pub(crate) use ape_engine::{engine, fsutil, kvstore, paths, states};
