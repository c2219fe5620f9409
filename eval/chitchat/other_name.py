"""Write the chitchat questions that name one of the pair with the other one's name instead.

    .venv/bin/python eval/chitchat/other_name.py --out /tmp/chitchat-other.jsonl

A question may name the wrong person, or the one a turn was said to rather than the one who
said it; the answer is still the same turn. Each corpus is one pair (``chitchat-<a>-<b>``), so
a question naming exactly one of them is asked again about the other. Questions of the
``speaker`` kind (who said it) and those naming both or neither are left out.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

HERE = Path(__file__).resolve().parent


def swapped(question: dict) -> dict | None:
    first, second = (name.capitalize() for name in question["corpus"].split("-")[1:3])
    named = [name for name in (first, second) if re.search(rf"\b{name}\b", question["query"])]
    if len(named) != 1 or question.get("category") == "speaker":
        return None
    other = second if named[0] == first else first
    return {
        **question,
        "qid": question["qid"] + ":other",
        "query": re.sub(rf"\b{named[0]}\b", other, question["query"]),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--queries", type=Path, default=HERE / "queries.jsonl")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    with args.queries.open() as handle:
        questions = [json.loads(line) for line in handle if line.strip()]
    kept = [row for row in map(swapped, questions) if row is not None]
    with args.out.open("w") as handle:
        handle.writelines(json.dumps(row) + "\n" for row in kept)
    print(f"{len(kept)} of {len(questions)} questions asked about the other person: {args.out}")


if __name__ == "__main__":
    main()
