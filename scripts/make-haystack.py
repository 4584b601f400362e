#!/usr/bin/env python3
"""A folder of plain-prose notes with one fact (the needle) in one of them:
the same notes `tests/it/longer.rs` writes (the same word picks, by the
same linear congruential generator), for measuring reads past the window.

usage: scripts/make-haystack.py DIR [FILES=28] [NEEDLE_FILE=17]
Each note is about 1,240 SmolLM2 tokens; 28 notes make 308 chunks (34,645 tokens).
"""
import pathlib
import sys

WHO = ["The ferry crew", "A night clerk", "The orchard owner", "Two surveyors",
       "The harbour master", "An old weaver", "The station cook", "A pair of cartographers"]
DID = ["repaired the eastern pier", "counted the winter stores", "mapped the salt marsh",
       "rewound the town clock", "painted the signal house", "sorted the parish letters",
       "measured the river's depth", "planted rows of quince"]
WHEN = ["before the spring fair", "during the long frost", "after the harvest moon",
        "on a grey Tuesday", "while the tide was out", "in the first week of June",
        "as the bells rang noon", "under a sky of low cloud"]
NEEDLE = "The passphrase of the Orvald observatory is marigold."
MASK = (1 << 64) - 1


def prose(seed: int, sentences: int) -> str:
    x = (seed * 2_654_435_761 + 1) & MASK

    def pick(n: int) -> int:
        nonlocal x
        x = (x * 6_364_136_223_846_793_005 + 1_442_695_040_888_963_407) & MASK
        return (x >> 33) % n

    out = []
    for _ in range(sentences):
        who, did, when = WHO[pick(8)], DID[pick(8)], WHEN[pick(8)]
        out.append(f"{who} {did} {when}.")
    return " ".join(out)


def main() -> None:
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    out = pathlib.Path(sys.argv[1])
    files = int(sys.argv[2]) if len(sys.argv) > 2 else 28
    needle_in = int(sys.argv[3]) if len(sys.argv) > 3 else 17
    out.mkdir(parents=True, exist_ok=True)
    for i in range(files):
        text = f"# Log {i}\n\n{prose(i, 40)}\n\n"
        if i == needle_in:
            text += NEEDLE + "\n\n"
        text += prose(i + 1000, 40)
        (out / f"log-{i:03}.md").write_text(text)


if __name__ == "__main__":
    main()
