#!/usr/bin/env bash
# The project's test command (README, CI): install what is missing (build
# tools, the models), then lint and run every test. Cargo's target
# dir lives outside the clone so llama.cpp is compiled once per machine.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ape-chat/target}"
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"

# The default model too: three tests check real answers, which the tiny
# model cannot give reliably.
scripts/setup.sh
# Lint components, and the documentation the real-documents eval's
# smoke slice answers from: a minimal rustup profile has none of them.
if command -v rustup >/dev/null; then
  for c in rustfmt clippy rust-docs; do
    rustup component list --installed 2>/dev/null | grep -q "^$c" || rustup component add "$c" || echo "warning: could not add the rustup component $c"
  done
fi
# Our packages only (the workspace's): the vendored llama-cpp-sys-2 is not
# ours to format.
cargo fmt --all -- --check
cargo fmt --manifest-path crates/cuda-preflight/Cargo.toml -- --check
cargo clippy --release --all-targets --locked -- -D warnings
# No two modules import each other (ARCHITECTURE.md).
python3 scripts/check-circles.py src crates/ape-engine/src crates/ape-index/src crates/ape-service/src
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
cargo test --release --locked 2>&1 | tee "$log"
# The CUDA kernel's compile test needs NVRTC: run where it is, else say why not.
if [ -n "${APE_CHAT_NVRTC:-}" ] || ldconfig -p 2>/dev/null | grep -q 'libnvrtc\.so'; then
  cargo test --release --locked -p ape-engine --lib -- --ignored engine::cuda::tests 2>&1 | tee -a "$log"
else
  echo "skipped: engine::cuda::tests::kernel_compiles_for_current_gpus (no NVRTC here; set APE_CHAT_NVRTC)"
fi
# One closing line over all test binaries.
awk '/^test result:/ { p += $4; f += $6; i += $8 } END { printf "%d passed, %d failed, %d skipped\n", p, f, i }' "$log"
