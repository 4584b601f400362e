#!/usr/bin/env python3
"""Accuracy against the number of chunks read (issue 26): one folder of long
documents, questions whose answers sit at known places, asked through the
real pipeline (`ape-chat --ask DIR --top-k K`) at several K, under each
--quality; `exact` (sequential) cannot read past the model's window and
cuts the middle of what it would read (its notes say so).

usage: scripts/accuracy-vs-k.py OUT.jsonl [--k 5,10,20,50,100,all]
           [--quality fast,balanced,exact] [--exact-k LIST] [--articles N]
           [--per-article 4] [--seed 7] [--dir /tmp/accuracy-vs-k]
           [--squad FILE] [--model GGUF] [--bin ape-chat] [--max-tokens 24]
           [--style "Answer in a few words."] [--limit N] [--missed-by K0]
           [--table] [--resamples 2000]

The documents: SQuAD v2 dev's evaluation articles (those `ape-chat convert
--articles evaluation` uses; every fourth article is kept for calibration
and never appears here), each written as one Markdown file, one paragraph
per line, so a question's paragraph is a known line of a known file
(27 articles, 120K words: 177,449 tokens and 1,024 chunks with
SmolLM2-135M's tokenizer, 22x its window). The questions: --per-article answerable
questions of each article, spread over its paragraphs (seeded), so every
article counts and the bootstrap can resample articles.

Each question is asked with --style after it (as `eval --style` does, so
that a small model answers in a few words rather than an essay). Per
question, K and quality, a row is appended to OUT.jsonl (resumable:
rows already there are skipped): the answer, whether it contains a gold
answer (SQuAD normalisation, as `eval` scores "contains"), whether a chunk
read covers the answer's paragraph (retrieval's recall at K), and the
run's stats (context_tokens, max_position, window, TTFT, notes), and the
machine and date that timed it.
Questions run in a round-robin over the articles, so a run stopped early
still spans many of them. --exact-k limits the K at which `exact` runs
(its prefill grows with what it reads: 16K tokens take minutes on a
laptop CPU).

--missed-by K0 asks, instead, the questions top-K0 retrieval misses: the
set where reading more could rescue an answer (the paper's LongBench gain
from retrieving more), which the spread questions rarely test (top-5
finds their paragraph for 94-97 % of them). Every answerable question of
the articles (seeded order, round-robin over the articles) is screened
by one `--ask --top-k K0 --quality fast --max-tokens 1`, the same
retrieval as the grid's K = K0, until --per-article missed ones per
article are found; what was screened is kept in OUT.screen.jsonl next to
OUT (resumable, and the source of the miss rate). Write each set to its
own OUT: the script refuses to mix them.

--table prints, per model, accuracy ("contains") per K and quality with
95 % intervals resampled by article, recall at K, and each cached
quality's paired difference from `exact` where both ran; then the counts
the results page's text quotes (paired wins and losses between reads, right at
any K, the narrowest K's retrieval misses) and TTFT medians per machine;
for a --missed-by set, also the screening's miss rate and the missed
paragraphs' retrieval ranks at the widest K.
"""
import argparse
import datetime
import itertools
import json
import pathlib
import random
import re
import statistics
import sys

from ape_cli import machine, run_json

QUALITIES = ["fast", "balanced", "exact"]


def normalize(s: str) -> str:
    """SQuAD's answer normalisation, as src/eval/score.rs: lower case,
    punctuation to spaces, no articles, single spaces."""
    s = "".join(c if c.isalnum() or c.isspace() else " " for c in s.lower())
    return " ".join(w for w in s.split() if w not in ("a", "an", "the"))


def contains(prediction: str, golds: list[str]) -> bool:
    p = f" {normalize(prediction)} "
    return any(g and f" {g} " in p for g in map(normalize, golds))


def evaluation_articles(squad: dict) -> list[dict]:
    # The same split as `convert --articles evaluation`
    # (src/eval/datasets/squad.rs): article % 4 == 3 is calibration's.
    return [a for i, a in enumerate(squad["data"]) if i % 4 != 3]


def file_name(i: int, title: str) -> str:
    slug = re.sub(r"[^A-Za-z0-9]+", "-", title).strip("-").lower()
    return f"{i:02d}-{slug}.md"


def write_folder(folder: pathlib.Path, articles: list[dict]) -> None:
    """One Markdown file per article: the title on line 1, a blank line,
    then paragraph p on line 3 + 2p (blank lines between)."""
    folder.mkdir(parents=True, exist_ok=True)
    for i, a in enumerate(articles):
        lines = [f"# {a['title'].replace('_', ' ')}", ""]
        for p in a["paragraphs"]:
            lines += [" ".join(p["context"].split()), ""]
        path = folder / file_name(i, a["title"])
        text = "\n".join(lines)
        if not path.exists() or path.read_text() != text:
            tmp = path.with_suffix(".tmp")
            tmp.write_text(text)
            tmp.replace(path)


def entry(q: dict, i: int, a: dict, p_i: int) -> dict:
    """A question as the run asks and scores it: its gold answers and the
    file and line of its paragraph."""
    return {
        "id": q["id"], "question": q["question"].strip(),
        "answers": sorted({x["text"] for x in q["answers"]}),
        "article": i, "title": a["title"], "file": file_name(i, a["title"]),
        "paragraph": p_i, "line": 3 + 2 * p_i,
    }


def answerable(p: dict) -> list[dict]:
    return [q for q in p["qas"] if not q.get("is_impossible") and q["answers"]]


def round_robin(per_article: list[list[dict]]) -> list[dict]:
    """One question of each article in turn, so a run stopped early still
    spans many articles; the longer lists' tails at the end."""
    return [q for round_ in zip(*per_article) for q in round_] + [
        q for qs in per_article for q in qs[min(map(len, per_article)):]
    ]


def questions(articles: list[dict], per_article: int, seed: int) -> list[dict]:
    """per_article answerable questions of each article, from distinct
    paragraphs where it has enough, in a round-robin over the articles."""
    rng = random.Random(seed)
    chosen = []
    for i, a in enumerate(articles):
        by_paragraph = [(p_i, qs) for p_i, p in enumerate(a["paragraphs"]) if (qs := answerable(p))]
        rng.shuffle(by_paragraph)
        chosen.append([entry(rng.choice(qs), i, a, p_i) for p_i, qs in by_paragraph[:per_article]])
    return round_robin(chosen)


def candidates(articles: list[dict], seed: int) -> list[dict]:
    """Every answerable question of the articles, each article's in a
    seeded order, in a round-robin over the articles: the pool --missed-by
    screens."""
    rng = random.Random(seed)
    per_article = []
    for i, a in enumerate(articles):
        qs = [entry(q, i, a, p_i) for p_i, p in enumerate(a["paragraphs"]) for q in answerable(p)]
        rng.shuffle(qs)
        per_article.append(qs)
    return round_robin(per_article)


def screen_path(out: pathlib.Path) -> pathlib.Path:
    """Where --missed-by keeps what it screened, next to the rows."""
    return out.with_name(out.name.removesuffix(".jsonl") + ".screen.jsonl")


def screen_key(r: dict) -> tuple:
    """What a screening outcome depends on besides the question: the
    model's chunks, K0 and the words asked."""
    return r["model"], r["k"], r["style"]


def missed_questions(pool: list[dict], k0: str, per_article: int, screen: pathlib.Path,
                     model_name: str, style: str, ask):
    """The questions of the pool whose paragraph the top-k0 retrieval
    misses, at most per_article per article, in the pool's order. Each
    question is screened once by ask(q, k0) (its sources), and the outcome
    kept in `screen` (resumable; docs/results.md quotes the miss rate from it)."""
    seen = {}
    if screen.exists():
        for line in screen.read_text().splitlines():
            r = json.loads(line)
            if screen_key(r) == (model_name, k0, style):
                seen[r["id"]] = r["gold_read"]
    taken: dict[int, int] = {}
    for q in pool:
        if taken.get(q["article"], 0) >= per_article:
            continue
        if q["id"] not in seen:
            seen[q["id"]] = gold_rank(ask(q, k0), q) is not None
            with screen.open("a") as f:
                f.write(json.dumps({"model": model_name, "id": q["id"], "article": q["article"],
                                    "k": k0, "style": style, "gold_read": seen[q["id"]]}) + "\n")
        if not seen[q["id"]]:
            taken[q["article"]] = taken.get(q["article"], 0) + 1
            yield q


def covers(source: dict, q: dict) -> bool:
    lines = source.get("lines") or [0, -1]
    return source.get("path") == q["file"] and lines[0] <= q["line"] <= lines[1]


def gold_rank(sources: list[dict], q: dict):
    """The retrieval rank of the first chunk read that covers the answer's
    paragraph, or None."""
    return next((s["rank"] for s in sources if covers(s, q)), None)


def k_order(k: str) -> float:
    return float("inf") if k == "all" else int(k)


def bootstrap(rows: list[dict], value, resamples: int, seed: int = 11):
    """Mean of value(row) and its 95 % interval, resampling articles."""
    by_article: dict[int, list[float]] = {}
    for r in rows:
        v = value(r)
        if v is not None:
            by_article.setdefault(r["article"], []).append(v)
    groups = list(by_article.values())
    n = sum(map(len, groups))
    if n == 0:
        return None
    mean = sum(map(sum, groups)) / n
    rng = random.Random(seed)
    means = []
    for _ in range(resamples):
        pick = [groups[rng.randrange(len(groups))] for _ in groups]
        m = sum(map(len, pick))
        means.append(sum(map(sum, pick)) / m)
    means.sort()
    return mean, means[int(0.025 * resamples)], means[int(0.975 * resamples) - 1], n


def fmt(e, signed=False) -> str:
    if e is None:
        return "—"
    mean, lo, hi, _ = e
    f = "{:+.2f}" if signed else "{:.2f}"
    return f"{f.format(mean)} [{f.format(lo)}, {f.format(hi)}]"


def median_tokens(rows: list[dict]) -> str:
    tokens = sorted(r["context_tokens"] for r in rows)
    return f"{tokens[len(tokens) // 2]:,}" if tokens else ""


def cut_to_window(row: dict) -> bool:
    """Whether sequential prefill left the middle out (its note says so)."""
    return any("left out to fit" in n for n in row["notes"])


def secs(t: float, digits_under: float = 10) -> str:
    return f"{t:.1f}" if t < digits_under else f"{t:.0f}"


def counts(rows: list[dict], qs: list[str], ks: list[str]) -> str:
    """The counts the results page quotes, from the same rows as the
    table: paired wins and losses (the widest read against the narrowest
    and against `exact`'s widest, and against `exact` at each K),
    right at any K, what the narrowest K's retrieval missed, and TTFT per
    machine the rows name (machines differ in speed: rows that name none
    are pooled as "not recorded")."""
    right = {(r["id"], r["k"], r["quality"]): r["right"] for r in rows}
    gold = {(r["id"], r["k"]): r["gold_read"] for r in rows}
    ids = list(dict.fromkeys(r["id"] for r in rows))
    ran = {q: [k for k in ks if any((i, k, q) in right for i in ids)] for q in qs}

    def paired(a: tuple[str, str], b: tuple[str, str]) -> str:
        both = [i for i in ids if (i, *a) in right and (i, *b) in right]
        only_a = sum(right[(i, *a)] and not right[(i, *b)] for i in both)
        only_b = sum(right[(i, *b)] and not right[(i, *a)] for i in both)
        return (f"`{a[1]}` at K = {a[0]} vs `{b[1]}` at K = {b[0]}: right only at the first on "
                f"{only_a}, only at the second on {only_b} (of {len(both)})")

    out = []
    for q in qs:
        if not ran[q]:
            continue
        wide, narrow = ran[q][-1], ran[q][0]
        if wide != narrow:
            out.append("- " + paired((wide, q), (narrow, q)))
        if q != "exact" and ran.get("exact"):
            if wide not in ran["exact"]:
                out.append("- " + paired((wide, q), (ran["exact"][-1], "exact")))
            for k in (k for k in ran[q] if k in ran["exact"]):
                out.append("- " + paired((k, q), (k, "exact")))
    for q in qs:
        n = sum(any(right.get((i, k, q)) for k in ran[q]) for i in ids)
        out.append(f"- `{q}` right at any of its K ({', '.join(ran[q])}): {n} of {len(ids)}")
    narrow = ks[0]
    missed = [i for i in ids if (i, narrow) in gold and not gold[(i, narrow)]]
    out.append(f"- the answer's paragraph not among the first {narrow}: {len(missed)} of {len(ids)}")
    for i in missed:
        first = next((k for k in ks if gold.get((i, k))), "never")
        rescued = "; ".join(f"`{q}` right at K = {', '.join(k for k in ran[q] if right.get((i, k, q))) or 'none'}"
                            for q in qs)
        out.append(f"  - {i}: first read at K = {first}; {rescued}")
    out.append(f"- cached qualities' largest position: "
               f"{max((r['max_position'] for r in rows if r['quality'] != 'exact'), default=0):,}; "
               f"`exact`'s largest read: "
               f"{max((r['context_tokens'] for r in rows if r['quality'] == 'exact'), default=0):,} tokens")
    out.append("\nTTFT per answer, median (range), per machine\n")
    out.append("| machine | questions | K | " + " | ".join(f"`{q}`" for q in qs) + " |")
    out.append("|" + "---|" * (3 + len(qs)))
    for m in sorted({r.get("machine", "not recorded") for r in rows}):
        here = [r for r in rows if r.get("machine", "not recorded") == m]
        for k in ks:
            cells = []
            for q in qs:
                t = sorted(r["ttft_ms"] / 1e3 for r in here if r["k"] == k and r["quality"] == q)
                cells.append(f"{secs(statistics.median(t), 100)} s ({secs(t[0])}–{secs(t[-1])})" if t else "—")
            out.append(f"| {m} | {len({r['id'] for r in here})} | {k} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def screening(rows: list[dict], screened: list[dict]) -> str:
    """What --missed-by screened for these rows: how many questions, how
    many the top K0 missed, and where the widest read found the missed
    ones' paragraphs."""
    k0 = rows[0]["missed_by"]
    mine = [s for s in screened if screen_key(s) == (rows[0]["model"], k0, rows[0]["style"])]
    missed = sum(not s["gold_read"] for s in mine)
    out = [f"- screened: {len(mine)} questions of {len({s['article'] for s in mine})} articles; "
           f"the top {k0} missed the answer's paragraph on {missed}"
           + (f" ({missed / len(mine):.1%})" if mine else "")]
    leaked = {r["id"] for r in rows if r["k"] == k0 and r["gold_read"]}
    if leaked:
        out.append(f"- WARNING: {len(leaked)} questions' paragraph was read at K = {k0} after all "
                   f"(retrieval changed since screening?): {', '.join(sorted(leaked))}")
    widest = max({r["k"] for r in rows}, key=k_order)
    ranks = {r["id"]: r.get("gold_rank") for r in rows if r["k"] == widest}
    found = sorted(v for v in ranks.values() if v is not None)
    if found:
        # Ranks within K0 happen: a larger K fuses deeper rankings.
        out.append(f"- the paragraphs' retrieval ranks at K = {widest}: {', '.join(map(str, found))} "
                   f"(median {found[len(found) // 2]}); not read: {len(ranks) - len(found)} "
                   f"of {len(ranks)}")
    return "\n".join(out)


def table(rows: list[dict], resamples: int, screened: list[dict] = ()) -> str:
    out = []
    for model in sorted({r["model"] for r in rows}):
        mine = [r for r in rows if r["model"] == model]
        qs = sorted({r["quality"] for r in mine}, key=QUALITIES.index)
        ks = sorted({r["k"] for r in mine}, key=k_order)
        window = mine[0]["window"]
        articles = len({r["article"] for r in mine})
        questions_ = len({r["id"] for r in mine})
        which = (f"questions whose paragraph the top {mine[0]['missed_by']} missed"
                 if mine[0].get("missed_by") else "questions")
        out.append(f"{model}: window {window:,}; {questions_} {which} over {articles} articles; "
                   f"\"contains\" with 95 % intervals resampled by article\n")
        head = ["K", "tokens read (median; `exact`)", "answer's paragraph read"] + [f"`{q}`" for q in qs]
        cached = [q for q in qs if q != "exact"]
        if "exact" in qs:
            head += [f"`{q}` − `exact` (paired)" for q in cached]
        out.append("| " + " | ".join(head) + " |")
        out.append("|" + "---|" * len(head))
        for k in ks:
            at = [r for r in mine if r["k"] == k]
            cells = [k, " ; ".join(filter(None, [median_tokens([r for r in at if r["quality"] != "exact"]),
                                                 median_tokens([r for r in at if r["quality"] == "exact"])])),
                     fmt(bootstrap([r for r in at if r["quality"] == qs[0]],
                                   lambda r: float(r["gold_read"]), resamples))]
            for q in qs:
                cells.append(fmt(bootstrap([r for r in at if r["quality"] == q],
                                           lambda r: float(r["right"]), resamples)))
            if "exact" in qs:
                exact = {r["id"]: r for r in at if r["quality"] == "exact"}
                for q in cached:
                    pairs = [dict(r, diff=float(r["right"]) - float(exact[r["id"]]["right"]))
                             for r in at if r["quality"] == q and r["id"] in exact]
                    cells.append(fmt(bootstrap(pairs, lambda r: r["diff"], resamples), True)
                                 if pairs else "—")
            out.append("| " + " | ".join(map(str, cells)) + " |")
        out.append(counts(mine, qs, ks))
        if mine[0].get("missed_by"):
            out.append(screening(mine, screened))
        cut = [r for r in mine if r["quality"] == "exact" and cut_to_window(r)]
        if cut:
            out.append(f"\n`exact` cut the middle to fit the window on {len(cut)} answers "
                       f"(from K = {min((r['k'] for r in cut), key=k_order)}).")
        out.append("")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--k", default="5,10,20,50,100,all")
    ap.add_argument("--exact-k", default=None)
    ap.add_argument("--quality", default="fast,balanced,exact")
    ap.add_argument("--articles", type=int, default=None)
    ap.add_argument("--per-article", type=int, default=4)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--dir", default="/tmp/accuracy-vs-k")
    ap.add_argument("--squad", default=None)
    ap.add_argument("--model", default=None)
    ap.add_argument("--bin", default="ape-chat")
    ap.add_argument("--max-tokens", type=int, default=24)
    ap.add_argument("--style", default="Answer in a few words.")
    ap.add_argument("--limit", type=int, default=None, help="first N questions only")
    ap.add_argument("--missed-by", default=None, metavar="K0",
                    help="only questions whose paragraph the top-K0 retrieval misses")
    ap.add_argument("--table", action="store_true")
    ap.add_argument("--resamples", type=int, default=2000)
    a = ap.parse_args()
    out = pathlib.Path(a.out)
    rows = [json.loads(l) for l in out.read_text().splitlines() if l.strip()] if out.exists() else []
    if any(r.get("missed_by") != a.missed_by for r in rows) and not a.table:
        asked = f"--missed-by {a.missed_by}" if a.missed_by else "the spread questions"
        sys.exit(f"{out}: holds rows of another question set than {asked}; "
                 "write each set to its own file")
    if a.missed_by and not (a.missed_by.isdigit() and int(a.missed_by) > 0):
        sys.exit(f"--missed-by: {a.missed_by!r} is not a positive number of chunks")
    if a.table:
        screen = screen_path(out)
        screened = [json.loads(l) for l in screen.read_text().splitlines()] if screen.exists() else []
        print(table(rows, a.resamples, screened))
        return
    ks = [k.strip() for k in a.k.split(",")]
    for k in ks:
        if k != "all" and not (k.isdigit() and int(k) > 0):
            sys.exit(f"--k: {k!r} is neither a positive number nor 'all'")
    exact_ks = set(a.exact_k.split(",")) if a.exact_k else set(ks)
    qualities = a.quality.split(",")
    for q in qualities:
        if q not in QUALITIES:
            sys.exit(f"--quality: {q!r} is not one of {', '.join(QUALITIES)}")
    squad_path = pathlib.Path(a.squad or pathlib.Path.home() / ".cache/ape-chat/data/squad-v2-dev.json")
    if not squad_path.exists():
        sys.exit(f"{squad_path}: not found (scripts/setup.sh --eval-data fetches it)")
    articles = evaluation_articles(json.loads(squad_path.read_text()))[: a.articles]
    folder = pathlib.Path(a.dir)
    write_folder(folder, articles)
    model = ["--model", a.model] if a.model else []
    model_name = pathlib.Path(a.model).name if a.model else "default"
    here = machine()
    done = {(r["model"], r["id"], r["k"], r["quality"], r.get("style", "")) for r in rows}
    index = run_json([a.bin, "index", str(folder), "--json", *model])[0]

    def ask(q: dict, k: str, quality: str, max_tokens: int) -> list[dict]:
        asked = f"{q['question']} {a.style}".strip()
        return run_json([a.bin, "--ask", asked, str(folder), "--top-k", k, "--quality", quality,
                         "--max-tokens", str(max_tokens), "--json", *model])

    def sources(events: list[dict]) -> list[dict]:
        return next(e for e in events if e.get("type") == "sources")["sources"]

    if a.missed_by:
        pool = candidates(articles, a.seed)
        # Screening needs retrieval only: the cheapest answer shows it.
        todo = itertools.islice(missed_questions(
            pool, a.missed_by, a.per_article, screen_path(out), model_name, a.style,
            lambda q, k: sources(ask(q, k, "fast", 1))), a.limit)
        what = (f"questions whose paragraph the top {a.missed_by} miss, screened as they come "
                f"from {len(pool):,} answerable ones")
    else:
        todo = questions(articles, a.per_article, a.seed)[: a.limit]
        what = f"{len(todo)} questions"
    print(f"{len(articles)} articles, {index['tokens']:,} tokens, {index['chunks']} chunks; {what}",
          flush=True)
    for q in todo:
        for k in ks:
            for quality in qualities:
                if quality == "exact" and k not in exact_ks:
                    continue
                if (model_name, q["id"], k, quality, a.style) in done:
                    continue
                events = ask(q, k, quality, a.max_tokens)
                answer = next(e for e in events if e.get("type") == "answer")["text"]
                stats = next(e for e in events if e.get("type") == "stats")
                read = sources(events)
                rank = gold_rank(read, q)
                row = {
                    "model": model_name, "id": q["id"], "article": q["article"],
                    "title": q["title"], "question": q["question"], "answers": q["answers"],
                    "style": a.style, "k": k, "quality": quality, "answer": answer,
                    "right": contains(answer, q["answers"]),
                    "gold_read": rank is not None, "gold_rank": rank,
                    "chunks_read": len(read), "folder_tokens": index["tokens"],
                    **{key: stats[key] for key in ("mode", "ttft_ms", "context_tokens",
                                                   "max_position", "window", "notes")},
                    "machine": here, "date": datetime.date.today().isoformat(),
                    **({"missed_by": a.missed_by} if a.missed_by else {}),
                }
                with out.open("a") as f:
                    f.write(json.dumps(row) + "\n")
                print(f"{q['id'][:8]} K={k} {quality}: {'right' if row['right'] else 'wrong'} "
                      f"({answer.strip()[:40]!r}; gold read: {row['gold_read']}), "
                      f"{row['context_tokens']} tokens, TTFT {row['ttft_ms'] / 1e3:.1f} s",
                      flush=True)


if __name__ == "__main__":
    main()
