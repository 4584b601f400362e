//! The llama.cpp side of ape-chat: the model and its sessions ([`engine`]:
//! chunk states, APE inside the patched attention, memory tiers), chunk
//! states on disk ([`kvstore`], shared through [`statestore`]) and their
//! keys ([`states`]), and the machine-wide compute budget ([`compute`]).
//! Nothing here knows about folders or questions: the index and the
//! service crates build on it.
#![cfg_attr(not(test), deny(clippy::unwrap_used))]
// Unsafe code lives in the engine's FFI modules, each allowed by name,
// every block with a `// SAFETY:`.
#![deny(unsafe_code)]
#![deny(clippy::undocumented_unsafe_blocks)]

pub mod compute;
pub mod engine;
pub mod fsutil;
pub mod kvstore;
pub mod numfmt;
pub mod paths;
pub mod states;
pub mod statestore;
