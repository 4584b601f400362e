#!/usr/bin/env python3
"""Pair two `ape-chat eval-docs --json` reports question by question.

eval-docs pairs settings against the first one *within* one model's run;
comparing two readers (the 0.5B and the 1.5B) needs their rows side by
side. This joins report A's and report B's rows on (question, setting
label), or on the labels given with --pair, and prints, per pair, how many
each answered right, B − A in points with a 95 % interval from 2,000
resamples of the pages (the questions of one page move together, as in
eval-docs), the questions lost and gained, and both median TTFTs.

usage: scripts/docs-compare.py A.json B.json [--pair LA=LB ...] [--json]
"""
import argparse
import json
import random
import statistics
import sys


def rows_by_label(path):
    with open(path, encoding="utf-8") as f:
        report = json.load(f)
    out = {}
    for r in report["rows"]:
        out.setdefault(r["label"], {})[r["id"]] = r
    return out


def paired(a, b, resamples=2000, seed=7):
    """B − A share right over the questions both answered, pages resampled."""
    ids = sorted(set(a) & set(b))
    pages = {}
    for i in ids:
        pages.setdefault(a[i]["page"], []).append(int(b[i]["right"]) - int(a[i]["right"]))
    clusters = list(pages.values())
    n = len(ids)
    value = sum(map(sum, clusters)) / n
    rng = random.Random(seed)
    draws = []
    for _ in range(resamples):
        pick = [clusters[rng.randrange(len(clusters))] for _ in clusters]
        m = sum(len(c) for c in pick)
        draws.append(sum(map(sum, pick)) / m)
    draws.sort()
    lo, hi = draws[int(0.025 * resamples)], draws[int(0.975 * resamples) - 1]
    return ids, value, lo, hi


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--pair", action="append", default=[], metavar="LA=LB",
                    help="compare A's setting LA with B's LB (default: every label both have)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    a, b = rows_by_label(args.a), rows_by_label(args.b)
    pairs = [tuple(p.split("=", 1)) for p in args.pair] or [(l, l) for l in a if l in b]
    if not pairs:
        sys.exit("docs-compare: the reports share no setting; give --pair LA=LB")
    out = []
    for la, lb in pairs:
        if la not in a or lb not in b:
            sys.exit(f"docs-compare: no rows for {la} in A or {lb} in B")
        ids, value, lo, hi = paired(a[la], b[lb])
        if not ids:
            sys.exit(f"docs-compare: {la} and {lb} share no question")
        ra = sum(a[la][i]["right"] for i in ids)
        rb = sum(b[lb][i]["right"] for i in ids)
        lost = sum(a[la][i]["right"] and not b[lb][i]["right"] for i in ids)
        gained = sum(b[lb][i]["right"] and not a[la][i]["right"] for i in ids)
        out.append({
            "a": la, "b": lb, "questions": len(ids),
            "pages": len({a[la][i]["page"] for i in ids}),
            "right_a": ra, "right_b": rb,
            "b_minus_a": {"value": value, "lo": lo, "hi": hi},
            "lost": lost, "gained": gained,
            "median_ttft_ms_a": statistics.median(a[la][i]["ttft_ms"] for i in ids),
            "median_ttft_ms_b": statistics.median(b[lb][i]["ttft_ms"] for i in ids),
        })
    if args.json:
        print(json.dumps(out))
        return
    print(f"{'A setting':<10} {'B setting':<10} {'q':>4} {'A right':>8} {'B right':>8} "
          f"{'B − A [95% CI] points':>26} {'lost/gained':>11} {'A TTFT':>8} {'B TTFT':>8}")
    for o in out:
        d = o["b_minus_a"]
        print(f"{o['a']:<10} {o['b']:<10} {o['questions']:>4} {o['right_a']:>8} {o['right_b']:>8} "
              f"{100 * d['value']:>+8.1f} [{100 * d['lo']:+.1f}, {100 * d['hi']:+.1f}]      "
              f"{o['lost']:>5}/{o['gained']:<5} {o['median_ttft_ms_a'] / 1e3:>6.2f} s "
              f"{o['median_ttft_ms_b'] / 1e3:>6.2f} s")
    print("intervals: 2,000 resamples of the pages; TTFT with each question's states cached")


if __name__ == "__main__":
    main()
