"""Running the ape-chat binary from the evaluation scripts
(needle-depths.py, accuracy-vs-k.py): its JSON output, or the command's
error and exit; the machine that timed a row."""
import json
import os
import pathlib
import subprocess
import sys


def run_json(cmd: list[str]) -> list[dict]:
    """The command's JSON: one object (`index --json`) or one per line
    (`--ask --json`); a failed command ends the script with its stderr."""
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({p.returncode}):\n{p.stderr[-3000:]}")
    try:
        return [json.loads(p.stdout)]
    except json.JSONDecodeError:
        return [json.loads(line) for line in p.stdout.splitlines() if line.startswith("{")]


def machine() -> str:
    """The CPU model and core count, as `bench` names the machine, so that
    rows pooled from several machines say which timed what."""
    try:
        cpuinfo = pathlib.Path("/proc/cpuinfo").read_text()
    except OSError:
        cpuinfo = ""
    name = next((l.split(":", 1)[1].strip() for l in cpuinfo.splitlines()
                 if l.startswith("model name")), os.uname().machine)
    return f"{name}, {os.cpu_count()} cores"
