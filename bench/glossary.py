"""Glossary candidates on a JSONL of passages, and how many documents a second the detection reads.

    .venv/bin/python -m bench.glossary --docs /path/docs.jsonl --corpora 5 --top 20

Each line is a JSON object with ``text`` (and optionally ``corpus`` and ``doc_id``). With
``--corpora N`` the first N distinct ``corpus`` values in file order are taken and detection runs
once on each and once on all of them together; without it, on the whole file. ``--group N`` joins
N consecutive lines of a corpus into one document (meeting turns are short; chunks are not). Throughput is the
documents read divided by the wall time of ``find_terms`` (spaCy and the embedder included, both
loaded and warmed before timing), in one process on this machine.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Sequence

from registers.glossary.candidates_checks import Embed


def load(path: str, corpora: int, group: int) -> dict[str, list[str]]:
    groups: dict[str, list[str]] = {}
    with open(path, encoding="utf-8") as lines:
        for line in lines:
            row = json.loads(line)
            corpus = str(row.get("corpus", "all")) if corpora else "all"
            if corpus not in groups and corpora and len(groups) >= corpora:
                continue
            groups.setdefault(corpus, []).append(row["text"])
    if group > 1:  # consecutive lines of one corpus joined into one document, like a chunk of a file
        groups = {c: [" ".join(t[i : i + group]) for i in range(0, len(t), group)] for c, t in groups.items()}
    return groups


def around(sentence: str, term: str, width: int = 110) -> str:
    at = max(0, sentence.lower().find(term.lower()[:6]) - width // 2)
    return sentence[at : at + width]


def run(name: str, texts: Sequence[str], top: int, min_count: int, embed: Embed) -> tuple[int, float]:
    from registers.glossary.candidates import Passage, find_terms

    passages = [Passage(text=t, ref=i) for i, t in enumerate(texts)]
    started = time.perf_counter()
    found = find_terms(passages, limit=top, min_count=min_count, embed=embed)
    elapsed = time.perf_counter() - started
    words = sum(len(t.split()) for t in texts)
    print(f"\n== {name}: {len(texts)} documents, {words} words, {elapsed:.2f} s, {len(texts) / elapsed:.0f} docs/s")
    for n, c in enumerate(found, 1):
        extra = f"  senses={c.senses}" if c.senses > 1 else ""
        suggestion = f"  suggestion={c.suggestion!r}" if c.suggestion else ""
        print(f"{n:3}. {c.term!r:28} {c.kind:12} count={c.count:<4} score={c.score:<7}{extra}{suggestion}")
        for example in c.examples[:2]:
            print(f"       e.g. {around(example.sentence, c.term)!r}")
    return len(texts), elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", required=True, help="JSONL with a text field per line")
    parser.add_argument("--corpora", type=int, default=0, help="take the first N distinct corpus values")
    parser.add_argument("--group", type=int, default=1, help="join N consecutive lines into one document")
    parser.add_argument("--top", type=int, default=20)
    parser.add_argument("--min-count", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2, help="embedder threads (the machine has 2 cores)")
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "brain.settings")
    # The embedder module reads settings; nothing here opens the database or needs a real key.
    os.environ.setdefault("BRAIN_TESTING", "1")
    os.environ.setdefault("DATABASE_URL", "postgres://unused@127.0.0.1:1/unused")
    import django

    django.setup()
    from memory.index.embedding import MiniLMEmbedder
    from registers.glossary.candidates import Passage, find_terms

    embed = MiniLMEmbedder(threads=args.threads).embed
    find_terms([Passage(text="The warm-up run loads spaCy and the embedder. " * 10)], limit=5, embed=embed)
    groups = load(args.docs, args.corpora, args.group)
    print(f"cores={os.cpu_count()} corpora={', '.join(groups)}")
    docs, seconds = 0, 0.0
    for name, texts in groups.items():
        n, elapsed = run(name, texts, args.top, args.min_count, embed)
        docs, seconds = docs + n, seconds + elapsed
    if len(groups) > 1:
        run("all together", [t for texts in groups.values() for t in texts], args.top, args.min_count, embed)
    print(f"\nthroughput over the separate runs: {docs} documents in {seconds:.2f} s = {docs / seconds:.0f} docs/s")


if __name__ == "__main__":
    main()
