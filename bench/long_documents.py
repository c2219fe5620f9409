"""How extraction's time grows with a document's length: it must grow in proportion, never faster.

    .venv/bin/python -m bench.long_documents [--sizes 500,1000,2000,4000] [--rounds 2]

Reads texts of ``--sizes`` sentences (the company sentences of ``bench.extract``, with names,
dates and amounts) through the deterministic extraction alone
(``memory.extraction.extract``: spaCy, the name, date and value readers), and prints for each
size the best of ``--rounds`` times and the milliseconds per 100 sentences. A cost per sentence
that rises with the size is work repeated for every token or name over the whole text (as
``Doc.text`` or ``Token.sent`` asked once a token did: a 220,000-character page took minutes).
No database.
"""

from __future__ import annotations

import argparse
import os
import random
import time

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "brain.settings")
os.environ.setdefault("SECRET_KEY", "bench")
os.environ.setdefault("BRAIN_TESTING", "1")
os.environ.setdefault("DATABASE_URL", "postgres://bench@localhost/unused")
os.environ.setdefault("HF_HUB_OFFLINE", "1")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="500,1000,2000,4000", help="sentences a text, comma-separated")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    import django

    django.setup()
    from bench.extract import document
    from memory.extraction import extract

    extract("Warm-up: Ana Lopez joins Northwind on 3 March.")
    print(f"{'sentences':>10} {'characters':>11} {'seconds':>8} {'ms / 100 sentences':>19}")
    for size in (int(s) for s in args.sizes.split(",")):
        text = document(random.Random(size), size * 11)  # about 11 words a sentence
        best = min(_timed(extract, text) for _ in range(args.rounds))
        print(f"{size:>10} {len(text):>11} {best:>8.2f} {best * 1000 / size * 100:>19.1f}")


def _timed(extract: object, text: str) -> float:
    started = time.perf_counter()
    extract(text)  # type: ignore[operator]
    return time.perf_counter() - started


if __name__ == "__main__":
    main()
