"""Write the chitchat questions again with the time their answer was said in: "... in May?",
"... on 8 May?".

    .venv/bin/python eval/chitchat/dated.py --docs /tmp/chitchat-docs.jsonl --out /tmp/chitchat-dated.jsonl

People narrow a question by when something was said ("what did Owen say about the exam in
May?"), and they leave the year out. The chats are from 2018, so a search that reads "in May"
as this year's May finds nothing said in it. Each question whose answer turns were all said in
one month is asked again with that month, and, where they were all said on one day, with that
day, both without a year (qids end ``:month`` and ``:day``). Questions of the ``temporal`` kind
ask when, so naming the time would give the answer away: they are left out.
"""

from __future__ import annotations

import argparse
import json
from datetime import datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _ask_with(question: dict, phrase: str, suffix: str) -> dict:
    text = question["query"].rstrip().rstrip("?")
    return {**question, "qid": f"{question['qid']}:{suffix}", "query": f"{text} {phrase}?"}


def dated(question: dict, said: dict[str, datetime]) -> list[dict]:
    if question.get("category") == "temporal":
        return []
    moments = [said[doc_id] for doc_id in question["gold_doc_ids"] if doc_id in said]
    if not moments or len(moments) != len(question["gold_doc_ids"]):
        return []
    asked = []
    if len({(m.year, m.month) for m in moments}) == 1:
        asked.append(_ask_with(question, f"in {moments[0]:%B}", "month"))
    if len({m.date() for m in moments}) == 1:
        asked.append(_ask_with(question, f"on {moments[0].day} {moments[0]:%B}", "day"))
    return asked


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", type=Path, required=True, help="the docs.jsonl build.py wrote")
    parser.add_argument("--queries", type=Path, default=HERE / "queries.jsonl")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    with args.docs.open() as handle:
        said = {
            row["doc_id"]: datetime.fromisoformat(row["timestamp"].replace("Z", "+00:00"))
            for row in map(json.loads, handle)
        }
    with args.queries.open() as handle:
        questions = [json.loads(line) for line in handle if line.strip()]
    kept = [row for question in questions for row in dated(question, said)]
    with args.out.open("w") as handle:
        handle.writelines(json.dumps(row) + "\n" for row in kept)
    months = sum(row["qid"].endswith(":month") for row in kept)
    print(f"{months} questions with their month, {len(kept) - months} with their day: {args.out}")


if __name__ == "__main__":
    main()
