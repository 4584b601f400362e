#!/usr/bin/env bash
# Regenerates packaging/completions and packaging/man from the clap
# definitions (a test fails when they are out of date).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ape-chat/target}"
cargo build --release --locked --quiet
bin="$CARGO_TARGET_DIR/release/ape-chat"
"$bin" completions bash > packaging/completions/ape-chat.bash
"$bin" completions zsh > packaging/completions/_ape-chat
"$bin" completions fish > packaging/completions/ape-chat.fish
"$bin" man > packaging/man/ape-chat.1
