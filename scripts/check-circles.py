#!/usr/bin/env python3
"""Fails when two modules of a crate import each other, directly or round a
longer loop (ARCHITECTURE.md: the folders read as the data flow). Reads
every `crate::…` and `super::…` path outside `#[cfg(test)]` and comments,
and compares modules as siblings under their nearest common parent, so
`ingest::walk` → `ingest::documents` → `ingest::walk` is a circle and
`ingest::walk` → `ingest` (its parent) is not.

usage: scripts/check-circles.py [SRC_DIR ...]   (default: src)"""
import os
import re
import sys


def modules(root):
    """Module path ('ingest::walk', '' for the crate root) → file."""
    out = {}
    for d, _, files in os.walk(root):
        for f in files:
            if f.endswith(".rs"):
                p = os.path.join(d, f)
                parts = os.path.relpath(p, root)[:-3].split(os.sep)
                if parts[-1] in ("mod", "lib", "main"):
                    parts = parts[:-1]
                out["::".join(parts)] = p
    return out


def code(path):
    text = open(path, encoding="utf-8").read()
    cut = text.find("#[cfg(test)]")
    text = text if cut < 0 else text[:cut]
    return re.sub(r"//[^\n]*", "", text)


def edges(mods):
    """Sibling-level edges: (a, b) where a module under a imports one under b."""
    out = {}
    for m, path in mods.items():
        parts = m.split("::") if m else []
        for kind, rest in re.findall(r"\b(crate|super)((?:::\w+)+)", code(path)):
            base = [] if kind == "crate" else parts[:-1]
            full = base + rest.strip(":").split("::")
            target = next(
                ("::".join(full[:k]) for k in range(len(full), 0, -1) if "::".join(full[:k]) in mods),
                None,
            )
            if target is None or target == m:
                continue
            a, b = parts, target.split("::")
            i = 0
            while i < min(len(a), len(b)) and a[i] == b[i]:
                i += 1
            if i == len(a) or i == len(b):
                continue  # a parent and its own child
            x, y = "::".join(a[: i + 1]), "::".join(b[: i + 1])
            out.setdefault(x, set()).add(y)
    return out


def circles(graph):
    """Strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on, found = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in list(graph):
        if v not in index:
            visit(v)
    return found


def main():
    bad = 0
    for root in sys.argv[1:] or ["src"]:
        graph = edges(modules(root))
        for c in circles(graph):
            bad += 1
            print(f"{root}: modules import each other: {' ↔ '.join(c)}", file=sys.stderr)
    if bad:
        sys.exit(1)
    print("no import circles")


if __name__ == "__main__":
    main()
