#!/usr/bin/env python3
"""What a doubt threshold would do, from eval-docs rows already made.

usage: scripts/doubt-threshold.py ROWS [--questions Q] [--base fast]
       [--baseline exact] [--tokens 4] [--thresholds -0.3,-0.4,...]

For each threshold: a question is doubted when the mean log-probability of
the first TOKENS answer tokens of the BASE setting's row is below it; its
answer is then the BASELINE's row (sequential prefill, as `balanced`
answers a doubted question). Prints how many are right, how many were
doubted, and the time to first token that implies: the base's own, plus the
baseline's where doubted (an estimate: it leaves out decoding the checked
tokens, which a real run of `ape:doubt=X` measures). Scored by each
question's current pattern. Not run by CI: for choosing a threshold on the
tune half, never the report half.
"""
import argparse
import json
import re
import statistics


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("rows")
    ap.add_argument("--questions", default="assets/eval/docs/questions.jsonl")
    ap.add_argument("--base", default="fast")
    ap.add_argument("--baseline", default="exact")
    ap.add_argument("--tokens", type=int, default=4)
    ap.add_argument("--thresholds", default="-0.3,-0.4,-0.5,-0.6,-0.7,-0.8,-1.0")
    a = ap.parse_args()
    patterns = {}
    with open(a.questions) as f:
        for line in f:
            if line.strip():
                q = json.loads(line)
                patterns[q["id"]] = re.compile(q["answer"], re.I)
    by = {}
    with open(a.rows) as f:
        for line in f:
            try:
                r = json.loads(line)["row"]
            except (ValueError, KeyError):
                continue  # a torn last line
            by.setdefault(r["id"], {})[r["label"]] = r
    ids = [i for i, d in by.items() if a.base in d and a.baseline in d]
    if not ids:
        raise SystemExit(f"no question has both {a.base} and {a.baseline} rows")
    missing = [i for i in ids if not by[i][a.base].get("logprobs")]
    if missing:
        raise SystemExit(f"{len(missing)} {a.base} rows carry no log-probabilities (made before they were recorded)")

    def right(i, label):
        return bool(patterns[i].search(by[i][label]["answer"]))

    def ttft(label):
        return statistics.median(by[i][label]["ttft_ms"] for i in ids) / 1e3

    base_right = sum(right(i, a.base) for i in ids)
    line_right = sum(right(i, a.baseline) for i in ids)
    print(f"{len(ids)} questions · {a.baseline}: {line_right} right, median TTFT {ttft(a.baseline):.2f} s"
          f" · {a.base}: {base_right} right, {ttft(a.base):.2f} s · first {a.tokens} tokens")
    print(f"{'threshold':>9} {'right':>7} {'doubted':>8} {'median TTFT':>12} {'mean TTFT':>10} {'speedup':>8}")
    for th in (float(x) for x in a.thresholds.split(",")):
        n = doubted = 0
        times = []
        for i in ids:
            lp = by[i][a.base]["logprobs"][: a.tokens]
            d = not lp or sum(lp) / len(lp) < th
            doubted += d
            n += right(i, a.baseline) if d else right(i, a.base)
            t = by[i][a.base]["ttft_ms"] + (by[i][a.baseline]["ttft_ms"] if d else 0.0)
            times.append(t / 1e3)
        med = statistics.median(times)
        print(f"{th:>9} {n:>4}/{len(ids):<3} {doubted:>8} {med:>10.2f} s {statistics.mean(times):>8.2f} s"
              f" {ttft(a.baseline) / med:>7.1f}×")


if __name__ == "__main__":
    main()
