#!/usr/bin/env bash
# Prepares vendor/llama-cpp-sys-2: the llama-cpp-sys-2 crate pinned in
# Cargo.lock (llama.cpp's sources inside) with ape-chat's llama.cpp patch
# applied (patches/README.md says what it changes and why). Cargo.toml's
# [patch.crates-io] builds from there. Run by scripts/setup.sh; idempotent:
# when the crate and the patch are unchanged it does nothing, and a changed
# patch rewrites only the files whose content changed, so cmake recompiles
# those alone.
set -euo pipefail
cd "$(dirname "$0")/.."

NAME=llama-cpp-sys-2
VERSION=0.1.161
# The crate's sha256 (Cargo.lock's checksum before the [patch]).
SHA256=e9bea77fde41bbc15a278891cd5edd2ba07c5260d162614b41080ba1f100b39b
DEST=vendor/$NAME
PATCHES=(patches/llama-cpp-ape.patch)
CACHE="${APE_CHAT_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ape-chat}"

say() { printf '\033[1mvendor:\033[0m %s\n' "$*" >&2; }

stamp="$( (echo "$SHA256"; cat "${PATCHES[@]}") | sha256sum | cut -d' ' -f1)"
if [ -f "$DEST/.ape-chat-stamp" ] && [ "$(cat "$DEST/.ape-chat-stamp")" = "$stamp" ]; then
  exit 0
fi

# The .crate archive: cargo's download cache if it has it, else crates.io.
crate=""
for c in "${CARGO_HOME:-$HOME/.cargo}"/registry/cache/*/"$NAME-$VERSION.crate"; do
  [ -f "$c" ] && [ "$(sha256sum "$c" | cut -d' ' -f1)" = "$SHA256" ] && crate="$c" && break
done
if [ -z "$crate" ]; then
  mkdir -p "$CACHE/downloads"
  crate="$CACHE/downloads/$NAME-$VERSION.crate"
  if [ ! -f "$crate" ] || [ "$(sha256sum "$crate" | cut -d' ' -f1)" != "$SHA256" ]; then
    say "downloading $NAME $VERSION from crates.io"
    url="https://static.crates.io/crates/$NAME/$NAME-$VERSION.crate"
    if command -v curl >/dev/null; then
      curl -sSfL -o "$crate.tmp" "$url"
    else
      ${PYTHON:-python3} -c 'import sys, urllib.request; urllib.request.urlretrieve(sys.argv[1], sys.argv[2])' "$url" "$crate.tmp"
    fi
    mv -f "$crate.tmp" "$crate"
  fi
  got="$(sha256sum "$crate" | cut -d' ' -f1)"
  if [ "$got" != "$SHA256" ]; then
    rm -f "$crate"
    echo "vendor: sha256 mismatch for $NAME-$VERSION.crate (got $got)" >&2
    exit 1
  fi
fi

# Unpack and patch outside any git work tree (git apply then acts on plain
# files), then sync into place.
work="$(mktemp -d "${TMPDIR:-/tmp}/ape-vendor.XXXXXX")"
trap 'rm -rf "$work"' EXIT
tar -C "$work" -xzf "$crate"
src="$work/$NAME-$VERSION"
for p in "${PATCHES[@]}"; do
  say "applying $p"
  (cd "$src" && GIT_CEILING_DIRECTORIES="$work" git apply --whitespace=nowarn "$OLDPWD/$p") \
    || { echo "vendor: $p does not apply to $NAME $VERSION" >&2; exit 1; }
done

# Copy only what differs, and remove what the new tree lacks: unchanged
# files keep their modification times.
mkdir -p "$DEST"
${PYTHON:-python3} - "$src" "$DEST" <<'EOF'
import filecmp, os, shutil, sys
src, dst = sys.argv[1], sys.argv[2]
changed = 0
for root, dirs, files in os.walk(src):
    rel = os.path.relpath(root, src)
    os.makedirs(os.path.join(dst, rel), exist_ok=True)
    for f in files:
        a, b = os.path.join(root, f), os.path.join(dst, rel, f)
        if not os.path.isfile(b) or not filecmp.cmp(a, b, shallow=False):
            shutil.copy2(a, b)
            os.utime(b)  # newer than any earlier build output
            changed += 1
for root, dirs, files in os.walk(dst, topdown=False):
    rel = os.path.relpath(root, dst)
    for f in files:
        if not os.path.exists(os.path.join(src, rel, f)):
            os.remove(os.path.join(root, f))
    if not os.path.exists(os.path.join(src, rel)):
        os.rmdir(root)
print(f"vendor: {changed} files updated in {dst}", file=sys.stderr)
EOF
echo "$stamp" > "$DEST/.ape-chat-stamp"
say "ready: $DEST (llama.cpp patched)"
