//! Integration tests: one binary, a module per area. Model-based tests use
//! the tiny SmolLM2 model installed by `scripts/setup.sh --tiny`.

mod cli;
mod common;
mod doubt;
mod engine;
mod eval;
mod formats;
mod index;
mod longer;
mod serve_errors;
mod serve_safety;
mod server;
mod state_store;
mod tiers;
mod tui;
mod watch;
