#!/usr/bin/env bash
# APE on an NVIDIA GPU, for a GPU machine that has the CUDA toolkit but no
# Rust and no network (the device machine here), in two halves:
#
#   scripts/gpu-check.sh prepare
#       On a machine with Rust: builds ape-chat with llama.cpp as shared
#       libraries (--features llama-shared) and packs into .gpu/ the binary,
#       the exact llama.cpp sources it was built against (llama-cpp-sys-2's,
#       with ape-chat's patch: vendor/llama-cpp-sys-2), and the `gguf`
#       Python package. Only .gpu/ has to travel (well under 64 MiB).
#
#   scripts/gpu-check.sh device [OUT]
#       On the GPU machine: builds llama.cpp's shared libraries with CUDA from
#       those very sources (same ABI as the binary, which then loads them),
#       writes random-weight models of real shapes (a qwen2 and a Llama-3-8B)
#       and, with every layer on the GPU, most telling first: `doctor` on
#       both, `bench ttft` on the 8B shape at 8K tokens (chunks of 512),
#       `bench context` (8K to 128K cached tokens) on the qwen shape, the
#       CUDA-graphs diagnosis (diagnose_graphs), `bench ttft --chunks 10
#       --chunk-tokens 256` on the qwen shape (the CPU headline's setting),
#       then the 8B shape at 16K to 64K (STEPS picks and orders these:
#       doctor-qwen doctor-8b ttft-8b context graphs ttft-256 ttft-8b-rest);
#       each step's start is logged.
#       `bench ttft` times every mode with
#       states read cold from disk, from the page cache, from pinned host
#       memory and from GPU memory, against sequential prefill with flash
#       attention off and on (the fair baseline is the faster). The log is
#       OUT/gpu.txt (default OUT: .gpu/out); JSON and SVG results are packed
#       into OUT/results.tar after every step. CUDA libraries already in
#       .gpu/lib/ (an earlier call on the same machine) or carried as
#       .gpu/lib.tar.xz.* (an earlier run's OUT with KEEP_LIB=1) skip the
#       build when they were built from the same sources (.gpu/SOURCE, a
#       content hash) for the same GPU generation. What travels (carry,
#       8 paths, about 50 MB with saved libraries; the uncompressed binary
#       stays here): .gpu/ape-chat.xz .gpu/SOURCE .gpu/llama.cpp.tar.xz
#       .gpu/gguf-0.19.0-py3-none-any.whl .gpu/random-gguf.py
#       .gpu/lib.tar.xz.00 .gpu/lib.tar.xz.01 .gpu/lib.tar.xz.02
#
# Environment: CUDA_ARCH (default: the GPU's own), BENCH_CONTEXTS (default
# "8192 16384 32768 65536"), CONTEXT_TOKENS (bench context's sizes, default
# "8192,16384,32768,65536,131072"), REPEATS (default 3; REPEATS_8B for the
# 8B shape's bench ttft, default REPEATS), STEPS, SKIP_8B=1, BUDGET_S
# (start no new step after this many seconds: device time is metered).
set -euo pipefail
cd "$(dirname "$0")/.."
GPU=.gpu

prepare() {
  export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ape-chat/target}"
  scripts/vendor-llama.sh
  # llama-cpp-sys-2's build script hard-links the shared libraries into the
  # target dir and fails on a dangling link left by an earlier build.
  find "$CARGO_TARGET_DIR/release" -maxdepth 2 -name 'lib*.so*' -xtype l -delete 2>/dev/null || true
  cargo build --release --locked --features llama-shared
  mkdir -p "$GPU"
  cp "$CARGO_TARGET_DIR/release/ape-chat" "$GPU/ape-chat"
  strip "$GPU/ape-chat"
  # Compressed too: what travels with saved CUDA libraries must stay under
  # the device's 64 MiB (the binary is 22 MB, the libraries 40 MB).
  xz -T0 -c "$GPU/ape-chat" >"$GPU/ape-chat.xz"
  # The patched llama.cpp tree the binary was built against, without the
  # backends, tools and tests the CUDA build does not need, and a hash of
  # its content (not its files' dates): saved CUDA libraries are used only
  # when built from the same sources.
  local src=vendor/llama-cpp-sys-2/llama.cpp
  local excludes=(
    --exclude='llama.cpp/ggml/src/ggml-'{vulkan,sycl,metal,opencl,hexagon,cann,webgpu,openvino,et,virtgpu,rpc,musa,hip,kompute,blas,zdnn,zendnn}
    --exclude='llama.cpp/'{tests,docs,examples,tools,models,ci,pocs,gguf-py,common,grammars,media,scripts}
  )
  tar -C "$(dirname "$src")" -cJf "$GPU/llama.cpp.tar.xz" "${excludes[@]}" llama.cpp
  tar -C "$(dirname "$src")" -cf - --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner \
    "${excludes[@]}" llama.cpp | sha256sum | cut -c1-16 >"$GPU/SOURCE"
  # GGUF writer for the random models (pure Python; numpy is on the device).
  python3 -m pip download --quiet --no-deps --disable-pip-version-check -d "$GPU" gguf==0.19.0
  cp scripts/random-gguf.py "$GPU/"
  du -sh "$GPU"/*
}

in_budget() {
  pack
  [ "$SECONDS" -lt "${BUDGET_S:-999999}" ] && return 0
  echo "time budget of ${BUDGET_S} s reached after $SECONDS s: stopping here" | tee -a "$out/gpu.txt"
  return 1
}

device() {
  out="${1:-$GPU/out}"
  local arch="${CUDA_ARCH:-}"
  out=$(realpath -m "$out")
  mkdir -p "$out"
  local work=/tmp/ape-gpu
  # Results gather in $res and are packed into OUT/results.tar after every
  # step (a device run returns at most 8 files; a run cut short keeps what
  # the steps before it measured). OUT/gpu.txt is the readable log.
  res="$work/results"
  mkdir -p "$work" "$res"
  # Also every 20 s, so that a step cut short by the command's time limit
  # (bench context writes its JSON after every size) keeps what it wrote.
  ( while sleep 20; do pack; done ) &
  trap "kill $! 2>/dev/null || true" EXIT
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$out/gpu.txt"
  # Random-weight models of real shapes (speed is independent of the values;
  # exactness holds for any weights).
  local site="$work/site"
  python3 -m pip install -q --no-index --no-deps --target "$site" "$GPU"/gguf-*.whl
  export PYTHONPATH="$site${PYTHONPATH:+:$PYTHONPATH}"
  start_models
  # The binary travels compressed (a stale one from an earlier call on a
  # warm machine is replaced).
  if [ -s "$GPU/ape-chat.xz" ]; then
    xz -dc "$GPU/ape-chat.xz" >"$GPU/ape-chat.part" && chmod +x "$GPU/ape-chat.part" \
      && mv "$GPU/ape-chat.part" "$GPU/ape-chat"
  fi
  # CUDA libraries: kept from an earlier call on this machine, or carried
  # in pieces (KEEP_LIB=1 below), when built from these sources for this
  # GPU; else built.
  [ -n "$arch" ] || arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -n1 | tr -d .)
  local want
  want="$(cat "$GPU/SOURCE" 2>/dev/null || echo unknown) sm_${arch:-90}"
  if [ "$(cat "$GPU/lib/SOURCE" 2>/dev/null)" != "$want" ]; then
    rm -rf "$GPU/lib"
    if ls "$GPU"/lib.tar.xz.* >/dev/null 2>&1; then
      cat "$GPU"/lib.tar.xz.* | tar -C "$GPU" -xJ
      if [ "$(cat "$GPU/lib/SOURCE" 2>/dev/null)" != "$want" ]; then
        echo "carried CUDA libraries are for $(cat "$GPU/lib/SOURCE" 2>/dev/null || echo 'unknown sources'), not $want: building" | tee -a "$out/gpu.txt"
        rm -rf "$GPU/lib"
      else
        echo "CUDA libraries carried ($want)" | tee -a "$out/gpu.txt"
      fi
    fi
  fi
  if ! ls "$GPU"/lib/libggml-cuda.so* >/dev/null 2>&1; then
    tar -C "$work" -xJf "$GPU/llama.cpp.tar.xz"
    local t0=$SECONDS
    # The options llama-cpp-sys-2 sets for the binary's own build (shared
    # libraries, no OpenMP, portable AVX2), plus CUDA for one architecture.
    # Flash-attention kernels are built: APE runs without them (it edits the
    # softmax), but the fair sequential baseline is llama.cpp's fastest
    # prefill, which uses them.
    local log="$work/build.log"
    cmake -S "$work/llama.cpp" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DBUILD_SHARED_LIBS=ON -DGGML_CUDA=ON -DGGML_CUDA_FA=ON -DGGML_CUDA_NCCL=OFF \
      -DCMAKE_CUDA_ARCHITECTURES="${arch:-90}" -DGGML_OPENMP=OFF -DGGML_NATIVE=OFF \
      -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON \
      -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=OFF \
      -DLLAMA_BUILD_SERVER=OFF -DLLAMA_BUILD_APP=OFF -DLLAMA_BUILD_COMMON=OFF -DLLAMA_CURL=OFF \
      >"$log" 2>&1 || { tail -n 40 "$log"; exit 1; }
    ninja -C "$work/build" llama >>"$log" 2>&1 || { tail -n 60 "$log"; exit 1; }
    echo "llama.cpp CUDA build (sm_${arch:-90}): $((SECONDS - t0)) s" | tee -a "$out/gpu.txt"
    mkdir -p "$GPU/lib"
    find "$work/build" -name 'lib*.so*' -exec cp -P {} "$GPU/lib/" \;
    echo "$want" >"$GPU/lib/SOURCE"
    # KEEP_LIB=1: in pieces small enough to come back (about 40 MB, 3
    # files), so a later run can carry them (copied into .gpu/ here) and
    # skip this build.
    if [ "${KEEP_LIB:-0}" = 1 ]; then
      XZ_OPT=-T0 tar -C "$GPU" -cJf "$work/lib.tar.xz" lib
      split -b 15m -d "$work/lib.tar.xz" "$out/lib.tar.xz."
      du -h "$work/lib.tar.xz" | tee -a "$out/gpu.txt"
    fi
  fi
  export LD_LIBRARY_PATH="$(realpath "$GPU/lib")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  local bin="$GPU/ape-chat"
  ldd "$bin" | grep -E 'llama|ggml' | tee -a "$out/gpu.txt"

  local cache="$work/cache"
  export APE_CHAT_CACHE_DIR="$cache" APE_CHAT_CONFIG="$work/config.toml"
  # Most telling first by default (device time is metered): doctor on both
  # shapes, the 8B shape at the first context, cost vs context (8K-128K
  # cached tokens), the CUDA-graphs diagnosis, the CPU headline's setting
  # (10 x 256, the 0.5B model's shape), then the 8B shape's other
  # contexts. STEPS picks and orders them.
  local contexts=(${BENCH_CONTEXTS:-8192 16384 32768 65536})
  local steps="${STEPS:-doctor-qwen doctor-8b ttft-8b context graphs ttft-256 ttft-8b-rest}"
  local s ctx
  for s in $steps; do
    case "$s" in
      doctor-qwen) doctor qwen2.5-0.5b ;;
      doctor-8b) [ "${SKIP_8B:-0}" = 1 ] || doctor llama3-8b ;;
      ttft-8b) [ "${SKIP_8B:-0}" = 1 ] || ttft_8b "${contexts[0]}" ;;
      ttft-8b-rest)
        [ "${SKIP_8B:-0}" = 1 ] || for ctx in "${contexts[@]:1}"; do ttft_8b "$ctx"; done ;;
      context) bench_context ;;
      graphs) diagnose_graphs ;;
      ttft-256) ttft_256 ;;
      *) echo "unknown step $s" | tee -a "$out/gpu.txt"; exit 2 ;;
    esac
  done
  pack
}

doctor() {
  wait_model "$1"
  in_budget || return 0
  step "doctor, $1 shape"
  "$bin" doctor --model "$work/$1.gguf" --json >"$res/doctor-$1.json" 2>>"$out/gpu.txt" || true
  doctor_summary "$res/doctor-$1.json" | tee -a "$out/gpu.txt"
}

bench_context() {
  wait_model qwen2.5-0.5b
  in_budget || return 0
  step "bench context, qwen2.5-0.5b shape"
  "$bin" bench context --model "$work/qwen2.5-0.5b.gguf" --sequential-max 32768 \
    --tokens "${CONTEXT_TOKENS:-8192,16384,32768,65536,131072}" \
    --out "$res" 2>>"$out/gpu.txt" | tee -a "$out/gpu.txt" || tail -n 20 "$out/gpu.txt"
}

ttft_256() {
  wait_model qwen2.5-0.5b
  in_budget || return 0
  step "bench ttft 10 x 256, qwen2.5-0.5b shape"
  "$bin" bench ttft --model "$work/qwen2.5-0.5b.gguf" --chunks 10 --chunk-tokens 256 \
    --repeats "${REPEATS:-3}" --json >"$res/bench-ttft-10x256.json" 2>>"$out/gpu.txt" \
    && summarize "$res/bench-ttft-10x256.json" | tee -a "$out/gpu.txt" || tail -n 20 "$out/gpu.txt"
}

# ape-chat turns llama.cpp's CUDA graphs off (engine::configure_cuda_graphs):
# with them on, the first bench on the H200 stopped with "an illegal
# instruction was encountered" (what a kernel's __trap() reports, e.g.
# ggml-cuda's NO_DEVICE_CODE). Which part needs them off: graphs on, with
# and without llama.cpp's graph reuse (a reused graph's CUDA graph is
# replayed without comparing its nodes) and op fusion; each line names the
# step that was running (bench's progress), the kernel's own message if it
# printed one, and the error. When the plain run fails, compute-sanitizer
# names the faulting kernel (kernel errors only: llama.cpp handles the
# cudaGraphExecUpdate failures it would list first). On the H100
# (2026-11-27) it was cuBLAS's sm90 f16 GEMM, replayed from a CUDA graph.
diagnose_graphs() {
  local v rc log="$work/graphs.log"
  wait_model qwen2.5-0.5b
  local cmd=("$bin" bench ttft --model "$work/qwen2.5-0.5b.gguf" --chunks 10 --chunk-tokens 256
    --repeats 1 --no-flash-baseline)
  for v in "APE_CHAT_CUDA_GRAPHS=1" "APE_CHAT_CUDA_GRAPHS=1 LLAMA_GRAPH_REUSE_DISABLE=1" \
    "APE_CHAT_CUDA_GRAPHS=1 GGML_CUDA_DISABLE_FUSION=1"; do
    in_budget || return 0
    step "CUDA graphs diagnosis [$v]"
    rc=0
    env $v APE_CHAT_LLAMA_LOG=1 APE_CHAT_CACHE_DIR="$work/graphs-cache" timeout 120 "${cmd[@]}" \
      >/dev/null 2>"$log" || rc=$?
    echo "CUDA graphs diagnosis [$v]: rc $rc; $(graphs_failure "$log")" | tee -a "$out/gpu.txt"
    local san
    san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
    if [ "$v" = APE_CHAT_CUDA_GRAPHS=1 ] && [ "$rc" != 0 ] && [ -x "$san" ]; then
      in_budget || return 0
      step "compute-sanitizer, graphs on"
      rc=0
      APE_CHAT_CUDA_GRAPHS=1 APE_CHAT_CACHE_DIR="$work/graphs-cache" timeout 100 "$san" \
        --tool memcheck --report-api-errors no --print-limit 20 "${cmd[@]}" >"$work/sanitizer.log" 2>&1 || rc=$?
      cp "$work/sanitizer.log" "$res/compute-sanitizer.log"
      echo "compute-sanitizer: rc $rc; $(grep -m8 -E '=========.*(Error|error|at |by thread|in )' "$work/sanitizer.log" | tr '\n' ' ')" \
        | tee -a "$out/gpu.txt"
    fi
  done
}

# The last progress line before the error, the error, a kernel's own message.
graphs_failure() {
  grep -E 'encoding|repeat|starting' "$1" | tail -n1 | tr '\n' ' '
  grep -A2 -m1 'CUDA error' "$1" | tr '\n' ' '
  grep -m2 -i -E 'no device code|ERROR: ' "$1" | tr '\n' ' '
}

step() {
  echo "-- [${SECONDS} s] $*" >>"$out/gpu.txt"
}

pack() {
  local part="$out/results.tar.$BASHPID.part"
  [ -n "${res:-}" ] && tar -C "$res" -cf "$part" . && mv "$part" "$out/results.tar"
  return 0
}

# Writes the random model SHAPE in the background (started before the CUDA
# build, which leaves the disk idle) and waits for it here.
start_models() {
  local shape shapes="qwen2.5-0.5b"
  [ "${SKIP_8B:-0}" = 1 ] || shapes="$shapes llama3-8b"
  for shape in $shapes; do
    [ -s "$work/$shape.gguf" ] && continue
    ( t0=$SECONDS; python3 "$GPU/random-gguf.py" "$shape" "$work/$shape.gguf.part" \
      && mv "$work/$shape.gguf.part" "$work/$shape.gguf" \
      && echo "wrote $shape in $((SECONDS - t0)) s" >>"$out/gpu.txt" ) &
    eval "model_pid_${shape//[.-]/_}=$!"
  done
}

wait_model() {
  local var="model_pid_${1//[.-]/_}"
  [ -n "${!var:-}" ] && wait "${!var}" || true
  unset "$var"
  [ -s "$work/$1.gguf" ] || { echo "model $1 was not written" | tee -a "$out/gpu.txt"; exit 1; }
}

ttft_8b() {
  wait_model llama3-8b
  in_budget || return 0
  local ctx=$1
  step "bench ttft $ctx tokens (chunks of 512), llama3-8b shape"
  "$bin" bench ttft --model "$work/llama3-8b.gguf" --chunks $((ctx / 512)) --chunk-tokens 512 \
    --repeats "${REPEATS_8B:-${REPEATS:-3}}" --json >"$res/bench-ttft-$ctx.json" 2>>"$out/gpu.txt" \
    && summarize "$res/bench-ttft-$ctx.json" | tee -a "$out/gpu.txt" || tail -n 20 "$out/gpu.txt"
}

# One line per doctor check: passed or not, and its figure; then where
# states are kept and whether `preload auto` turns on there.
doctor_summary() {
  python3 - "$1" <<'PY' || echo "doctor: no report (it stopped)"
import json, sys
d = json.load(open(sys.argv[1]))
print(f"doctor {d['info']['name']}: {'ok' if d.get('ok') else 'FAILED'}")
for k, v in d.items():
    if isinstance(v, dict) and 'passed' in v:
        r = v.get('result') or {}
        figs = {f: r[f] for f in r if isinstance(r[f], (int, float)) and f not in ('steps', 'chunks', 'layers', 'decode_steps')}
        print(f"  {k}: {'passed' if v['passed'] else 'FAILED'} {figs} {r.get('path', '')}")
m = d.get('memory') or {}
tiers = ', '.join(f"{t['tier']} {t['budget_bytes'] / 1e9:.1f} GB" for t in m.get('tiers', []))
print(f"  memory tiers: {tiers or 'none'}; preload {m.get('preload')}: {'on' if m.get('preloads') else 'off'}")
PY
}

summarize() {
  python3 - "$1" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
base = next(m for m in r['modes'] if m['mode'] == r['baseline'])['ttft_ms']
print(f"{r['chunks']} x {r['chunk_tokens']} tokens (baseline: {r['baseline']}, {base:.0f} ms):")
for m in r['modes']:
    tiers = "".join(f", {t['tier']} {t['ttft_ms']:.0f} ms ({base / t['ttft_ms']:.1f}x)" for t in m.get('memory', []))
    reread = f"; re-read {m['rereading_ms']:.0f} ms" if m.get('rereading_ms') else ""
    print(f"  {m['mode']}: TTFT cold disk {m['ttft_ms']:.0f} ms ({m['speedup']:.1f}x), page cache {m['ttft_warm_ms']:.0f} ms{tiers}; decode {m['decode_tokens_per_s']:.1f} tok/s{reread}")
    for name, key in (("cold", "read_split"), ("page cache", "read_split_warm")):
        if key in m:
            s = m[key]
            print(f"    {name} read: files {s['file_ms']:.0f} ms, checksums {s['verify_ms']:.0f} ms, decode {s['decode_ms']:.0f} ms; load {m['load_ms' if name == 'cold' else 'load_warm_ms']:.0f} ms")
if r.get('ape_decode_vs_parallel'):
    print(f"  APE/parallel decode {r['ape_decode_vs_parallel']:.3f}")
PY
}

case "${1:-}" in
  prepare) prepare ;;
  device) shift; device "$@" ;;
  *) sed -n '2,22p' "$0"; exit 2 ;;
esac
