"""Checks the real-documents set: ids, splits, recipes, labels, dates, kinds and answers.

    python eval/real/check.py [--built eval/real/built] [--strict]

The texts come from the built set (build.py): OUT/docs.jsonl, and OUT/files/ for PDFs (read with
pdftotext from poppler-utils, whitespace runs folded to one space on both sides) and raw messages
(their headers and plain-text body). A check that needs a text that is not built is skipped and
counted; --strict makes it an error.
"""

from __future__ import annotations

import argparse
import email
import email.policy
import json
import re
import shutil
import subprocess
import sys
from datetime import date, datetime
from pathlib import Path
from typing import Any

Record = dict[str, Any]

HERE = Path(__file__).parent
KINDS = {"handbook", "policy", "pdf", "issue", "mail", "minutes", "chat"}
FORMATS = {"markdown", "text", "eml", "pdf", "chat"}
FACT_KINDS = {"fact", "decision", "preference", "event", "procedure"}
ENTITY_KINDS = {"person", "team", "customer", "deal", "project", "system", "product", "place", "term"}
ENTITY_KINDS |= {"organisation", "other"}
SOURCE_KEYS = {"repo", "path", "commit", "licence", "rebuild", "sha256"}
RECIPES = {"file", "eml", "pasted", "irc"}
MIN_WORDS, MAX_WORDS = 120, 1200


class Report:
    def __init__(self) -> None:
        self.errors: list[str] = []
        self.skipped: list[str] = []

    def error(self, where: str, message: str) -> None:
        self.errors.append(f"{where}: {message}")


def read_jsonl(path: Path) -> list[Record]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def is_date(value: object) -> bool:
    try:
        date.fromisoformat(str(value))
    except ValueError:
        return False
    return True


def is_moment(value: object) -> bool:
    try:
        return datetime.fromisoformat(str(value)).tzinfo is not None
    except ValueError:
        return False


def fold(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def file_text(path: Path) -> str | None:
    """What a reader takes from a file: a PDF's text (folded), or a message's headers and plain body."""
    if path.suffix == ".pdf":
        if not shutil.which("pdftotext"):
            return None
        command = ["pdftotext", "-layout", str(path), "-"]
        return fold(subprocess.run(command, capture_output=True, text=True, check=True).stdout)  # noqa: S603, S607
    message = email.message_from_bytes(path.read_bytes(), policy=email.policy.default)
    body = message.get_body(preferencelist=("plain",))
    head = "".join(f"{name}: {value}\n" for name, value in message.items())
    return head + "\n" + (body.get_content() if body is not None else "")


def built_texts(docs: list[Record], built: Path) -> dict[str, str]:
    """Each built document's text, by id; a PDF's is folded."""
    texts: dict[str, str] = {}
    if (built / "docs.jsonl").exists():
        texts = {doc["id"]: doc["text"] for doc in read_jsonl(built / "docs.jsonl") if doc.get("text")}
    for doc in docs:
        if doc.get("file") and (built / doc["file"]).exists():
            text = file_text(built / doc["file"])
            if text is not None:
                texts[doc["id"]] = text
    return texts


def check_source(report: Report, doc: Record) -> None:
    source = doc.get("source") or {}
    if missing := SOURCE_KEYS - {key for key, value in source.items() if value}:
        report.error(doc["id"], f"source lacks {sorted(missing)}")
    if source.get("rebuild") not in RECIPES:
        report.error(doc["id"], f"rebuild {source.get('rebuild')!r} is not one of {sorted(RECIPES)}")
    if doc.get("text") is not None:
        report.error(doc["id"], "a source's text is never kept here: text must be null (build.py writes it)")
    wants_file = doc.get("format") in {"pdf", "eml"}
    if wants_file != bool(doc.get("file")) or (wants_file and doc["file"] != f"files/{doc['id']}.{doc['format']}"):
        report.error(doc["id"], "a pdf or eml document, and only one, names its file as files/<id>.<format>")


def check_doc(report: Report, doc: Record, seen: dict[str, int]) -> None:
    where = str(doc.get("id"))
    kind = doc.get("kind")
    seen[str(kind)] = number = seen.get(str(kind), 0) + 1
    if kind not in KINDS or where != f"{kind}-{number:02d}":
        report.error(where, f"kind {kind!r} unknown, or ids of the kind not numbered 01, 02, ... in order")
    want = "heldout" if number % 5 == 0 else "dev"
    if doc.get("split") != want:
        report.error(where, f"split should be {want}: the 5th, 10th, ... of a kind is held out")
    if doc.get("format") not in FORMATS:
        report.error(where, f"format {doc.get('format')!r} is not one of {sorted(FORMATS)}")
    if not is_moment(doc.get("saved_at")) or ("occurred_at" in doc and not is_moment(doc["occurred_at"])):
        report.error(where, "saved_at and occurred_at are ISO 8601 moments with their offset")
    chat_fields = all(doc.get(key) for key in ("occurred_at", "speaker", "conversation", "session"))
    if kind == "chat" and not chat_fields:
        report.error(where, "a chat message needs occurred_at, speaker, conversation and session")
    check_source(report, doc)


def check_size(report: Report, doc: Record, texts: dict[str, str]) -> None:
    if doc["kind"] == "chat" or doc["format"] == "pdf":
        return
    if doc["id"] not in texts:
        report.skipped.append(f"{doc['id']}: size not checked (not built)")
        return
    words = len(texts[doc["id"]].split())
    if not MIN_WORDS <= words <= MAX_WORDS:
        report.error(doc["id"], f"{words} words, outside {MIN_WORDS}-{MAX_WORDS}")


def check_fact_and_time(report: Report, where: str, label: Record, text: str | None, folded: bool) -> None:
    for fact in label.get("facts", []):
        if not fact.get("statement") or fact.get("kind") not in FACT_KINDS:
            report.error(where, f"fact needs a statement and a kind in {sorted(FACT_KINDS)}: {fact}")
        for key in ("valid_from", "valid_to"):
            if fact.get(key) is not None and not is_date(fact[key]):
                report.error(where, f"{key} {fact[key]!r} is not an ISO date")
    for time in label.get("times", []):
        if time.get("value") is not None and not is_date(time["value"]):
            report.error(where, f"time {time.get('text')!r} has value {time['value']!r}, not an ISO date")
        if "partial" in time and not re.fullmatch(r"\d\d-\d\d", str(time["partial"])):
            report.error(where, f"time {time.get('text')!r}: partial should be MM-DD")
        written = fold(time.get("text", "")) if folded else time.get("text", "")
        if text is not None and written not in text:
            report.error(where, f"time {time.get('text')!r} is not written in the document")


def check_others(report: Report, where: str, label: Record, doc_ids: set[str]) -> None:
    for entity in label.get("entities", []):
        kinds = entity.get("kind") if isinstance(entity.get("kind"), list) else [entity.get("kind")]
        if not entity.get("name") or not kinds or not set(kinds) <= ENTITY_KINDS:
            report.error(where, f"entity {entity.get('name')!r}: kind {entity.get('kind')!r} is not Brain's")
    for promise in label.get("promises", []):
        if not promise.get("owner") or not promise.get("what"):
            report.error(where, f"promise needs an owner and what: {promise}")
        if promise.get("due_on") is not None and not is_date(promise["due_on"]):
            report.error(where, f"promise due_on {promise['due_on']!r} is not an ISO date")
    for value in label.get("values", []):
        if not all(value.get(key) for key in ("entity", "attribute", "value")):
            report.error(where, f"value needs entity, attribute and value: {value}")
        if value.get("as_of") is not None and not is_date(value["as_of"]):
            report.error(where, f"value of {value.get('entity')!r} has as_of {value['as_of']!r}, not an ISO date")
    if label.get("duplicate_of") and label["duplicate_of"] not in doc_ids:
        report.error(where, f"duplicate_of {label['duplicate_of']!r} is no document")


def check_labels(report: Report, labels: list[Record], docs: list[Record], texts: dict[str, str]) -> None:
    by_id = {doc["id"]: doc for doc in docs}
    label_ids = [label.get("id") for label in labels]
    if label_ids != list(by_id):
        report.error("labels", "one labels line per document, in the documents' order")
    for label in labels:
        where = f"labels {label.get('id')}"
        doc = by_id.get(str(label.get("id")), {})
        check_fact_and_time(report, where, label, texts.get(str(label.get("id"))), doc.get("format") == "pdf")
        check_others(report, where, label, set(by_id))


def check_questions(report: Report, questions: list[Record], docs: list[Record], texts: dict[str, str]) -> None:
    formats = {doc["id"]: doc["format"] for doc in docs}
    if [q.get("id") for q in questions] != [f"q-{n:03d}" for n in range(1, len(questions) + 1)]:
        report.error("questions", "ids are q-001, q-002, ... in order")
    for question in questions:
        where, doc_id = f"question {question.get('id')}", question.get("doc")
        if doc_id not in formats or not question.get("question") or not question.get("answer"):
            report.error(where, "needs a question, an answer and a known doc")
            continue
        if (formats[doc_id] in {"eml", "pdf"}) != (question.get("answer_in") == "file"):
            report.error(where, 'answer_in is "file" exactly when the document is an eml or pdf file')
        answer = fold(question["answer"]) if formats[doc_id] == "pdf" else question["answer"]
        if doc_id not in texts:
            report.skipped.append(f"{where}: answer not checked ({doc_id} not built)")
        elif answer not in texts[doc_id]:
            report.error(where, f"answer is not in the text of {doc_id}: {question['answer'][:60]!r}")
    if len(questions) < len(docs):
        report.error("questions", f"{len(questions)} questions for {len(docs)} documents; at least one each on average")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--built", type=Path, default=HERE / "built", help="the folder build.py wrote")
    parser.add_argument("--strict", action="store_true", help="a check skipped for want of a built text is an error")
    args = parser.parse_args()
    report = Report()
    docs = read_jsonl(HERE / "docs.jsonl")
    texts = built_texts(docs, args.built)
    seen: dict[str, int] = {}
    if len({doc.get("id") for doc in docs}) != len(docs):
        report.error("docs", "document ids are not unique")
    for doc in docs:
        check_doc(report, doc, seen)
        check_size(report, doc, texts)
    check_labels(report, read_jsonl(HERE / "labels.jsonl"), docs, texts)
    check_questions(report, read_jsonl(HERE / "questions.jsonl"), docs, texts)
    for line in report.errors:
        print(f"error: {line}")
    for line in report.skipped:
        print(f"skipped: {line}")
    counts = ", ".join(f"{kind} {count}" for kind, count in seen.items())
    print(f"{len(docs)} documents ({counts}), {len(report.errors)} errors, {len(report.skipped)} checks skipped")
    return 1 if report.errors or (args.strict and report.skipped) else 0


if __name__ == "__main__":
    sys.exit(main())
