#!/usr/bin/env python3
"""Writes a folder of N short service runbooks (Markdown), each with facts
no other file has (its port, team, region, backup interval): a fresh
folder for measurements that need many files (`bench store`'s second
machine in docs/results.md). Deterministic: the same N gives the same files.

usage: scripts/make-folder.py DIR [N]   (N defaults to 500)
"""

import pathlib
import random
import sys

out = pathlib.Path(sys.argv[1])
n = int(sys.argv[2]) if len(sys.argv) > 2 else 500
rng = random.Random(42)
teams = ["Heron", "Kestrel", "Otter", "Lynx", "Marten", "Wren", "Badger", "Stoat"]
regions = ["eu-west-1", "eu-central-1", "us-east-2", "ap-south-1"]
out.mkdir(parents=True, exist_ok=True)
for i in range(n):
    name = f"svc-{i:03d}"
    team, region = rng.choice(teams), rng.choice(regions)
    port, hours = 8000 + i, rng.choice([2, 4, 6, 12, 24])
    (out / f"{name}.md").write_text(
        f"# {name} runbook\n\n"
        f"{name} listens on port {port} in {region}. It is owned by team {team}, "
        f"which answers its pages during office hours; outside them the platform "
        f"on-call engineer takes them.\n\n"
        f"## Backups\n\n"
        f"Its database is snapshotted every {hours} hours and the snapshots are "
        f"kept for {rng.choice([7, 14, 30, 35])} days. A restore is tested on the "
        f"first Monday of each quarter.\n\n"
        f"## Deploys\n\n"
        f"Deploys go out through the {rng.choice(['blue', 'green', 'canary'])} "
        f"pipeline and need one approval from team {team}.\n"
    )
print(f"wrote {n} files to {out}")
