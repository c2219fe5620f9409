"""Write the chitchat retrieval set's messages (docs.jsonl) from the chitchat-dataset package.

The messages are real chats between pairs of students (the BYU PCC lab's Chit-Chat Challenge,
MIT licence, shipped on PyPI as ``chitchat-dataset``). The same two people talked many times
over days or weeks, so each pair is a multi-session conversation. This script picks a few
pairs and some of their sessions, gives each person a made-up first name, and writes one line
per turn (a person's consecutive messages joined) with speaker, timestamp and session, in the
layout eval_retrieval reads. The questions (queries.jsonl beside this file) were written for
this project against exactly this output.

    python eval/chitchat/build.py --out /tmp/chitchat-docs.jsonl
"""

from __future__ import annotations

import argparse
import json
import math
from collections import defaultdict
from importlib import resources
from pathlib import Path
from typing import Any

# Rank of the pair among those with the most sessions together, and the names they are given.
PAIRS = {
    0: ("Nadia", "Owen"),
    1: ("Felix", "Grace"),
    3: ("Hannah", "Marcus"),
    6: ("Leo", "Sofia"),
    7: ("Ivy", "Caleb"),
    11: ("Tara", "Elliot"),
}
SHORTEST, LONGEST = 12, 120  # turns in a session that is kept
MOST_TURNS = 520  # per conversation, about the size of one long multi-session chat


def load() -> dict[str, Any]:
    path = resources.files("chitchat_dataset").joinpath("dataset.json")
    return json.loads(path.read_text())


def pairs(data: dict[str, Any]) -> list[tuple[tuple[str, str], list[str]]]:
    """Pairs of people with every conversation they had together, most conversations first."""
    found: dict[tuple[str, str], list[str]] = defaultdict(list)
    for key, chat in data.items():
        people = tuple(sorted({m["sender"] for turn in chat["messages"] for m in turn}))
        if len(people) == 2:
            found[people].append(key)
    ranked = sorted(found.items(), key=lambda item: (-len(item[1]), item[0]))
    return [(people, sorted(keys, key=lambda k: (data[k]["start"], k))) for people, keys in ranked]


def sessions(data: dict[str, Any], keys: list[str]) -> list[str]:
    """Sessions of a usable length, spread evenly over the pair's time together."""
    usable = [k for k in keys if SHORTEST <= len(data[k]["messages"]) <= LONGEST]
    total = sum(len(data[k]["messages"]) for k in usable)
    step = max(1, math.ceil(total / MOST_TURNS))
    chosen, turns = [], 0
    for key in usable[::step]:
        if turns + len(data[key]["messages"]) > MOST_TURNS * 1.1:
            break
        chosen.append(key)
        turns += len(data[key]["messages"])
    return chosen


def rows() -> list[dict[str, Any]]:
    data = load()
    ranked = pairs(data)
    out = []
    for rank, names in PAIRS.items():
        people, keys = ranked[rank]
        name = dict(zip(people, names, strict=True))
        corpus = f"chitchat-{names[0].lower()}-{names[1].lower()}"
        n = 0
        for number, key in enumerate(sessions(data, keys), start=1):
            for turn in data[key]["messages"]:
                text = " ".join(m["text"].strip() for m in turn if m["text"].strip())
                if not text:
                    continue
                out.append(
                    {
                        "doc_id": f"{corpus}:{n}",
                        "corpus": corpus,
                        "text": text,
                        "speaker": name[turn[0]["sender"]],
                        "timestamp": turn[0]["timestamp"],
                        "session": f"{corpus}:s{number}",
                    }
                )
                n += 1
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    with args.out.open("w") as handle:
        for row in rows():
            handle.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
