#!/usr/bin/env python3
"""Records of a calibration dataset that no part of a shipped calibration
used (by source article), interleaved by article so `eval --limit N` covers
them all. Used to check shipped settings on data the calibration never saw.

usage: scripts/heldout-records.py CALIB.jsonl OUT.jsonl [MODEL_FILE]
(MODEL_FILE: the `model` name in assets/calibrated.json; default: the first)
"""
import collections
import itertools
import json
import pathlib
import sys

calib, out = sys.argv[1], sys.argv[2]
shipped = json.loads((pathlib.Path(__file__).parent.parent / "assets/calibrated.json").read_text())
entry = next(e for e in shipped.values() if len(sys.argv) < 4 or e["model"] == sys.argv[3])
used = {s for part in entry["provenance"]["sources"] for s in part}
groups = collections.defaultdict(list)
for line in open(calib):
    r = json.loads(line)
    if r["group"] not in used:
        groups[r["group"]].append(r)
rows = [r for t in itertools.zip_longest(*groups.values()) for r in t if r]
with open(out, "w") as f:
    f.writelines(json.dumps(r) + "\n" for r in rows)
print(f"{len(rows)} records from {len(groups)} articles (left out: {', '.join(sorted(used))})")
