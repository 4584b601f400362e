#!/usr/bin/env python3
"""Checks the real-documents questions against the pages they were written from.

    scripts/docs-questions.py [QUESTIONS] [--root DIR] [--python-root DIR]

For every question of QUESTIONS (default assets/eval/docs/questions.jsonl):
its page exists under ROOT/folder/file; its evidence is in the page's text
(the <main> element, or Sphinx's element marked role="main", read by
Python's own HTML parser, whitespace collapsed: not ape-chat's extractor,
so the check does not lean on the code it judges); its answer pattern
matches its evidence and not its own question (an answer that only repeats
the question is never right). ROOT defaults to rustup's documentation,
`$(rustc --print sysroot)/share/doc/rust/html`; a question with
"docs": "python3" is under Debian's python3-doc, /usr/share/doc/python3/html.

The Rust Programming Language (folder `book`) is held out (docs/results.md, Right on
real documents): a question from it is an error.

Exit status 1 if any question fails, with one line per failure.
"""

import argparse
import html.parser
import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

HELD_OUT = "book"


class MainText(html.parser.HTMLParser):
    """The text inside <main> (or the element marked role="main"), scripts
    and styles left out."""

    BLOCKS = {"p", "li", "h1", "h2", "h3", "h4", "pre", "tr", "div", "br", "dt", "dd"}

    def __init__(self):
        super().__init__()
        self.main_tag = None  # the main element's tag, once it opened
        self.main = 0  # open elements of that tag, from the main one on
        self.skip = 0
        self.parts = []

    def handle_starttag(self, tag, attrs):
        if self.main_tag is None and (tag == "main" or ("role", "main") in attrs):
            self.main_tag = tag
        self.main += tag == self.main_tag
        self.skip += tag in ("script", "style")
        if tag in self.BLOCKS:
            self.parts.append("\n")

    def handle_endtag(self, tag):
        self.main -= tag == self.main_tag and self.main > 0
        self.skip -= tag in ("script", "style")

    def handle_data(self, data):
        if self.main > 0 and not self.skip:
            self.parts.append(data)


def page_text(path):
    p = MainText()
    p.feed(path.read_text(encoding="utf-8", errors="replace"))
    return " ".join("".join(p.parts).split())


def default_root():
    sysroot = subprocess.run(
        ["rustc", "--print", "sysroot"], capture_output=True, text=True, check=True
    ).stdout.strip()
    return Path(sysroot) / "share/doc/rust/html"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("questions", nargs="?", default="assets/eval/docs/questions.jsonl")
    ap.add_argument("--root", type=Path)
    ap.add_argument("--python-root", type=Path, default=Path("/usr/share/doc/python3/html"))
    a = ap.parse_args()
    roots = {"rust": a.root or default_root(), "python3": a.python_root}
    failures, per_folder, texts = [], Counter(), {}
    for n, line in enumerate(Path(a.questions).read_text().splitlines(), 1):
        if not line.strip():
            continue
        q = json.loads(line)
        where = f"line {n} ({q.get('id')})"
        docs = q.get("docs", "rust")
        if docs not in roots:
            failures.append(f"{where}: no documentation tree `{docs}`")
            continue
        if docs == "rust" and q["folder"] == HELD_OUT:
            failures.append(f"{where}: the folder `{HELD_OUT}` is held out")
            continue
        page = roots[docs] / q["folder"] / q["file"]
        if not page.is_file():
            failures.append(f"{where}: no page {page}")
            continue
        if page not in texts:
            texts[page] = page_text(page)
        evidence = " ".join(q["evidence"].split())
        if evidence not in texts[page]:
            failures.append(f"{where}: the evidence is not in {page}")
        if not re.search(q["answer"], evidence, re.IGNORECASE):
            failures.append(f"{where}: the answer pattern does not match the evidence")
        if re.search(q["answer"], q["question"], re.IGNORECASE):
            failures.append(f"{where}: the answer pattern matches the question itself")
        per_folder[q["folder"] if docs == "rust" else f"{docs}/{q['folder']}"] += 1
    for f in failures:
        print(f, file=sys.stderr)
    total = sum(per_folder.values())
    pages = len(texts)
    summary = ", ".join(f"{k} {v}" for k, v in sorted(per_folder.items()))
    print(f"{total} questions over {pages} pages ({summary}); {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
