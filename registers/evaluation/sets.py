"""Reading a labelled set: its documents, labels and questions, from named files or from a folder.

A set is three JSON Lines files: docs.jsonl (one document a line), labels.jsonl (one line per
document) and, optionally, questions.jsonl (a question, the document that answers it and the
answer as written). ``parts_of`` is the one place that knows how a set's folder is laid out.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from django.core.management.base import CommandError

from registers.evaluation.matching import Doc

KINDS = ("mail", "meeting", "minutes", "chat", "transcript", "wiki", "handbook", "policy", "issue", "pdf")
REQUIRED = frozenset({"id", "kind", "title", "split", "saved_at"})


@dataclass(frozen=True)
class Part:
    docs: Path
    labels: Path
    questions: Path | None = None


class Loaded(NamedTuple):
    rows: list[dict[str, Any]]  # in the order of the files (saving orders them by saved_at, then id)
    docs: list[Doc]
    unbuilt: list[str]  # ids of documents whose text is not on this machine (not rebuilt from source)


def parts_of(folder: Path) -> list[Part]:
    """The parts of a set folder: the folder itself when it holds labels.jsonl, else each subfolder
    that does, by name. A part's documents are its built/docs.jsonl when it was built there (the
    texts that may not be kept in the repository), else its docs.jsonl."""
    if not folder.is_dir():
        raise CommandError(f"--set {folder}: not a folder")
    found = (
        [folder]
        if (folder / "labels.jsonl").is_file()
        else sorted(sub for sub in folder.iterdir() if (sub / "labels.jsonl").is_file())
    )
    if not found:
        raise CommandError(f"--set {folder}: neither it nor a folder inside it holds labels.jsonl")
    parts = []
    for part in found:
        built = part / "built" / "docs.jsonl"
        questions = part / "questions.jsonl"
        docs = built if built.is_file() else part / "docs.jsonl"
        parts.append(Part(docs, part / "labels.jsonl", questions if questions.is_file() else None))
    return parts


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    try:
        with path.open() as handle:
            return [json.loads(line) for line in handle if line.strip()]
    except (OSError, json.JSONDecodeError) as exc:
        raise CommandError(f"cannot read {path}: {exc}") from None


def locate(part: Part, name: str) -> Path | None:
    """A document's file (a PDF, a raw message), named relative to its part's folder or its files/."""
    folders = dict.fromkeys([part.docs.parent, part.labels.parent])
    for candidate in (base / sub / name for base in folders for sub in ("", "files")):
        if candidate.is_file():
            return candidate
    return None


def _checked(part: Part, n: int, row: dict[str, Any], labels: dict[str, Any]) -> dict[str, Any]:
    where = f"{part.docs} line {n}"
    missing = REQUIRED - row.keys()
    if missing:
        raise CommandError(f"{where} lacks {', '.join(sorted(missing))}")
    if row["kind"] not in KINDS:
        raise CommandError(f"{where}: kind {row['kind']!r} is not one of {', '.join(KINDS)}")
    if row["id"] not in labels:
        raise CommandError(f"{where}: document {row['id']!r} has no line in {part.labels}")
    if row.get("file"):
        return {**row, "file": locate(part, row["file"])}
    if "text" not in row:
        raise CommandError(f"{where} has neither text nor file")
    return row


def load(parts: list[Part], split: str) -> Loaded:
    """The documents of a split (dev, heldout or all) with their labels and questions; a document
    whose text or file is not there is left out and named in ``unbuilt``."""
    rows, labels, seen = [], {}, set()
    for part in parts:
        own = {row["id"]: row for row in read_jsonl(part.labels)}
        asked = read_jsonl(part.questions) if part.questions else []
        for n, row in enumerate(read_jsonl(part.docs), 1):
            row = _checked(part, n, row, own)
            if row["id"] in seen:
                raise CommandError(f"{part.docs} line {n}: document {row['id']!r} is in the set twice")
            seen.add(row["id"])
            rows.append({**row, "questions": [q for q in asked if q.get("doc") == row["id"]]})
        labels.update(own)
    chosen = [row for row in rows if split == "all" or row["split"] == split]
    unbuilt = sorted(row["id"] for row in chosen if not row.get("file") and row.get("text") is None)
    chosen = [row for row in chosen if row["id"] not in unbuilt]
    docs = [Doc(row["id"], row["kind"], row["split"], labels[row["id"]]) for row in chosen]
    return Loaded(chosen, docs, unbuilt)
