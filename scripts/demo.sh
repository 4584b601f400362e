#!/usr/bin/env bash
# Set up everything and run the main job: answer a question about a folder
# (default: the sample documents in assets/sample) with APE on the default
# model. usage: scripts/demo.sh ["question"] [DIR] [more ape-chat flags]
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ape-chat/target}"

question="${1:-How long are nightly backup snapshots kept, and where are the encryption keys?}"
dir="${2:-assets/sample}"
shift $(( $# > 2 ? 2 : $# ))

scripts/setup.sh
cargo build --release --locked --quiet
exec "$CARGO_TARGET_DIR/release/ape-chat" --ask "$question" "$dir" "$@"
