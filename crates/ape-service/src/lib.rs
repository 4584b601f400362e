//! A folder's life, for every front end: settings ([`config`]), an answer
//! from retrieval to streamed text ([`answer`], [`conversation`]), a folder
//! opened with its index, states and embedder ([`workspace`]), the one
//! loop that answers questions first and indexes in the background
//! ([`service`]), and the OpenAI-compatible HTTP API over it ([`server`]).
#![cfg_attr(not(test), deny(clippy::unwrap_used))]
#![deny(unsafe_code)]
#![deny(clippy::undocumented_unsafe_blocks)]

pub mod answer;
pub mod config;
pub mod conversation;
#[cfg(test)]
mod fuzz;
pub mod server;
pub mod service;
pub mod workspace;

// The lower crates' modules under the paths this crate's code names them
// by (`crate::engine::…`), not part of its API.
pub(crate) use ape_engine::{compute, engine, fsutil, kvstore, numfmt, paths, states, statestore};
pub(crate) use ape_index::{index, ingest, watch};
