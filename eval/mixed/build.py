"""Put the mixed set together: the written documents and their questions of this folder beside the
two work channels of ``eval/chat-dev`` and that set's questions about them.

    .venv/bin/python eval/mixed/build.py --docs /tmp/mixed-docs.jsonl --queries /tmp/mixed-queries.jsonl

Each chat message keeps its id, speaker, time and session, and becomes a line of kind ``chat``
in the channel named after its corpus; the chat questions keep their ids and categories, take
``source_kind`` "chat", and one in five (the fifth, tenth, ... of each corpus) is in the test
split, as the written questions are. Every gold quote is checked against its document's text.
"""

from __future__ import annotations

import argparse
import json
from datetime import datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
CHATS = HERE.parent / "chat-dev"
CORPORA = {"pilot-sales": "#sales-pilots", "oncall-eng": "#oncall"}


def read(path: Path) -> list[dict]:
    with path.open() as handle:
        return [json.loads(line) for line in handle if line.strip()]


def build() -> tuple[list[dict], list[dict]]:
    written = read(HERE / "written.jsonl")
    chats = [row for row in read(CHATS / "docs.jsonl") if row["corpus"] in CORPORA]
    for row in chats:
        row.update(kind="chat", title=CORPORA[row["corpus"]], conversation=CORPORA[row["corpus"]])
    docs = written + chats
    texts = {row["doc_id"]: row["text"] for row in docs}
    if len(texts) != len(docs):
        raise SystemExit("two documents share an id")
    for row in docs:
        datetime.fromisoformat(row["timestamp"])
    queries = read(HERE / "questions.jsonl")
    asked = [q for q in read(CHATS / "queries.jsonl") if q["corpus"] in CORPORA]
    for corpus in CORPORA:
        for n, query in enumerate((q for q in asked if q["corpus"] == corpus), start=1):
            query.update(source_kind="chat", split="test" if n % 5 == 0 else "dev")
    queries += asked
    for query in queries:
        for doc_id in query["gold_doc_ids"]:
            if doc_id not in texts:
                raise SystemExit(f"{query['qid']}: no document {doc_id}")
        for doc_id, quote in zip(query["gold_doc_ids"], query.get("gold_quotes", []), strict=False):
            if quote not in texts[doc_id]:
                raise SystemExit(f"{query['qid']}: {quote!r} is not in {doc_id}")
    return docs, queries


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", type=Path, required=True)
    parser.add_argument("--queries", type=Path, required=True)
    args = parser.parse_args()
    docs, queries = build()
    for path, rows in ((args.docs, docs), (args.queries, queries)):
        with path.open("w") as handle:
            handle.writelines(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    kinds: dict[str, int] = {}
    for row in docs:
        kinds[row["kind"]] = kinds.get(row["kind"], 0) + 1
    test = sum(q["split"] == "test" for q in queries)
    print(f"{len(docs)} documents {kinds}; {len(queries)} questions, {test} in the test split")


if __name__ == "__main__":
    main()
