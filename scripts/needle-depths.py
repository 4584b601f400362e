#!/usr/bin/env python3
"""The needle at every depth (issue 26): one fact placed at DEPTHS depths of
one long document, asked with `--file` so that every chunk is read in
document order, under each --quality.

usage: scripts/needle-depths.py OUT.jsonl [--tokens 65536] [--depths 10]
           [--quality fast,balanced] [--dir /tmp/needle-<tokens/1024>k] [--model GGUF]
           [--bin ape-chat] [--table]

The document is one Markdown file of plain-prose paragraphs (the same
sentences as scripts/make-haystack.py) of about 226 tokens each, between
half and all of the default 256-token chunk budget, so every paragraph is
one chunk and moving the needle re-encodes two chunks, not the whole file. For depth
d of D the needle sentence goes into the middle of paragraph
round(d / (D - 1) * (P - 1)): 0 % is the first paragraph, 100 % the last.
Per depth: `ape-chat index DIR` (text, vectors and the new chunks' states),
then per quality `ape-chat --ask Q DIR --file haystack.md --top-k 1
--json`; a row per answer is appended to OUT.jsonl (resumable: rows
already there are skipped), with whether the answer contains the needle's
word, the run's stats (context_tokens, max_position, window, TTFT), and the
machine and date that timed it.
Under `exact` (sequential prefill) the model can only read its window: the
middle of the document is cut, and the row's notes say so.
--table prints the Markdown table of OUT.jsonl and exits.
"""
import argparse
import datetime
import importlib.util
import json
import pathlib
import sys
import time

from ape_cli import machine, run_json

QUESTION = "What is the passphrase of the Orvald observatory?"
ANSWER = "marigold"
SENTENCES = 16  # per paragraph: one chunk of about 226 Qwen2.5 tokens of 256


def haystack_module():
    path = pathlib.Path(__file__).with_name("make-haystack.py")
    spec = importlib.util.spec_from_file_location("make_haystack", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def paragraphs_for(tokens: int) -> int:
    # A paragraph's chunk is about 226 Qwen2.5 tokens with its header line
    # (measured); the rows record the index's own count (document_tokens).
    return max(2, -(-tokens // 226))


def write_document(folder: pathlib.Path, paragraphs: int, needle_at: int) -> None:
    hay = haystack_module()
    out = ["# Station logs", ""]
    for i in range(paragraphs):
        text = hay.prose(i, SENTENCES)
        if i == needle_at:
            cut = text.split(". ")
            half = len(cut) // 2
            text = ". ".join(cut[:half]) + ". " + hay.NEEDLE + " " + ". ".join(cut[half:])
        out += [text, ""]
    folder.mkdir(parents=True, exist_ok=True)
    doc = folder / "haystack.md"
    tmp = doc.with_suffix(".tmp")
    tmp.write_text("\n".join(out))
    tmp.replace(doc)


QUALITY_ORDER = ["fast", "balanced", "exact"]


def table(rows: list[dict]) -> str:
    """Per model: a summary line per document size (depths found per
    quality, the positions used), then the depths as rows and the sizes as
    columns, one mark per quality, then what each quality answered when it
    missed (the most common answers)."""
    out = []
    for model in sorted({r["model"] for r in rows}):
        mine = [r for r in rows if r["model"] == model]
        qualities = sorted({r["quality"] for r in mine}, key=QUALITY_ORDER.index)
        sizes = sorted({r["tokens_target"] for r in mine})
        window = mine[0]["window"]
        out.append(f"Model `{model}` (window {window:,}): depths at which the answer names the needle\n")
        head = ["document", "× window", "chunks"] + [f"`{q}`" for q in qualities] + \
            [f"max position, `{q}`" for q in qualities]
        out += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for size in sizes:
            here = [r for r in mine if r["tokens_target"] == size]
            doc = max(r["document_tokens"] for r in here)
            cells = [f"{doc:,} tokens", f"{doc / window:.1f}×", f"{max(r['chunks_read'] for r in here):,}"]
            got = {q: [r for r in here if r["quality"] == q] for q in qualities}
            cells += [f"{sum(r['right'] for r in got[q])} of {len(got[q])}" if got[q] else "—"
                      for q in qualities]
            cells += [f"{max(r['max_position'] for r in got[q]):,}" if got[q] else "—"
                      for q in qualities]
            out.append("| " + " | ".join(cells) + " |")
        marks = " / ".join(f"`{q}`" for q in qualities)
        out.append(f"\nPer depth (✓ found, ✗ missed, – not run), each cell {marks}:\n")
        out.append("| depth | " + " | ".join(f"{s // 1024}K" for s in sizes) + " |")
        out.append("|---|" + "---|" * len(sizes))
        for d in sorted({r["depth_index"] for r in mine}):
            depth = next(r["depth"] for r in mine if r["depth_index"] == d)
            cells = []
            for size in sizes:
                got = {r["quality"]: r for r in mine if r["tokens_target"] == size and r["depth_index"] == d}
                cells.append(" ".join("–" if q not in got else "✓" if got[q]["right"] else "✗"
                                      for q in qualities))
            out.append(f"| {depth:.0%} | " + " | ".join(cells) + " |")
        for q in qualities:
            missed = [r["answer"].strip() for r in mine if r["quality"] == q and not r["right"]]
            if missed:
                common = sorted({a: missed.count(a) for a in missed}.items(), key=lambda x: -x[1])[:3]
                said = "; ".join(f"{a[:70]!r} ×{n}" for a, n in common)
                out.append(f"\n`{q}` missed {len(missed)} times, most often answering: {said}")
        out.append("")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--tokens", type=int, default=65536)
    ap.add_argument("--depths", type=int, default=10)
    ap.add_argument("--quality", default="fast,balanced")
    ap.add_argument("--dir", default=None)
    ap.add_argument("--model", default=None)
    ap.add_argument("--bin", default="ape-chat")
    ap.add_argument("--max-tokens", type=int, default=16)
    ap.add_argument("--table", action="store_true")
    a = ap.parse_args()
    out = pathlib.Path(a.out)
    rows = [json.loads(l) for l in out.read_text().splitlines() if l.strip()] if out.exists() else []
    if a.table:
        print(table(rows))
        return
    if a.depths < 2:
        sys.exit("--depths must be 2 or more")
    folder = pathlib.Path(a.dir or f"/tmp/needle-{a.tokens // 1024}k")
    paragraphs = paragraphs_for(a.tokens)
    model = ["--model", a.model] if a.model else []
    qualities = a.quality.split(",")
    done = {(r["tokens_target"], r["depth_index"], r["quality"], r["model"]) for r in rows}
    model_name = pathlib.Path(a.model).name if a.model else "default"
    here = machine()
    for i in range(a.depths):
        todo = [q for q in qualities if (a.tokens, i, q, model_name) not in done]
        if not todo:
            continue
        needle_at = round(i / (a.depths - 1) * (paragraphs - 1))
        write_document(folder, paragraphs, needle_at)
        t0 = time.monotonic()
        index = run_json([a.bin, "index", str(folder), "--json", *model])[0]
        index_s = time.monotonic() - t0
        for q in todo:
            events = run_json([a.bin, "--ask", QUESTION, str(folder), "--file", "haystack.md",
                               "--top-k", "1", "--quality", q, "--max-tokens", str(a.max_tokens),
                               "--json", *model])
            answer = next(e for e in events if e.get("type") == "answer")["text"]
            stats = next(e for e in events if e.get("type") == "stats")
            sources = next(e for e in events if e.get("type") == "sources")["sources"]
            row = {
                "model": model_name, "tokens_target": a.tokens, "paragraphs": paragraphs,
                "depth_index": i, "depth": i / (a.depths - 1), "needle_paragraph": needle_at,
                "quality": q, "answer": answer, "right": ANSWER in answer.lower(),
                "chunks_read": len(sources), "document_tokens": index["tokens"],
                "index_s": round(index_s, 1), "index_chunks_encoded": index["chunks_encoded"],
                **{k: stats[k] for k in ("mode", "ttft_ms", "context_tokens", "max_position",
                                         "window", "decode_tokens_per_s", "notes",
                                         "states_from_disk", "chunks_encoded", "scale_ape")},
                "machine": here, "date": datetime.date.today().isoformat(),
            }
            with out.open("a") as f:
                f.write(json.dumps(row) + "\n")
            print(f"depth {row['depth']:.0%} {q}: {'found' if row['right'] else 'missed'} "
                  f"({answer.strip()[:40]!r}), TTFT {row['ttft_ms'] / 1e3:.1f} s, "
                  f"{row['context_tokens']} tokens, max position {row['max_position']}", flush=True)


if __name__ == "__main__":
    main()
