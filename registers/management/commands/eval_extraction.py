"""Score what Brain derives from content (facts, time expressions, entities, values, promises) and the
passages its search returns, against labels.

    ./brainctl manage eval_extraction --docs eval/extraction/docs.jsonl \
        --labels eval/extraction/labels.jsonl [--questions FILE] [--split dev|heldout|all] [--json]
    ./brainctl manage eval_extraction --set eval/real [--split ...] [--errors] [--verbose]

docs.jsonl holds one document a line: id, kind, title, split (dev or heldout), saved_at (the
pretended upload time), and its text, or a file (a PDF, a raw .eml message) read as an upload reads
it; optionally occurred_at, speaker, conversation, session and external_id. labels.jsonl holds one
line per document: facts, times, entities, not_entities, values, promises; questions.jsonl a
question, the document that answers it and the answer as written (eval/extraction/README.md and
eval/real/*/README.md describe them). ``--set`` reads those files from a folder (its parts, as
``registers.evaluation.sets.parts_of`` lays them out); a document whose text was not rebuilt on this
machine is left out and named.

The documents go into a throwaway organisation (deleted afterwards unless --keep) through
add_document, saved as their source saves them (``registers.evaluation.deriving``), ingested in this
process with the clock at each document's saved_at, in a fixed order (saved_at, then id); then the
commitment register's scan runs as it does at night, and each question is searched through the
selector search_company_memory uses. With a language model configured (BRAIN_LLM_URL) the facts and
entities come from the model, as in production.
"""

from __future__ import annotations

import hashlib
import json
import secrets
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.core.management.base import BaseCommand, CommandError, CommandParser

from brain.core.actors import Actor
from brain.core.services import add_member, create_organisation
from brain.models import Organisation
from registers.evaluation.deriving import Timing, derive
from registers.evaluation.matching import Derived, Doc
from registers.evaluation.scoring import SPLITS, details_of, errors_of, score
from registers.evaluation.sets import KINDS, Loaded, Part, load, parts_of

ROWS = (
    ("time accuracy", "time_accuracy"),
    ("fact precision", "fact_precision"),
    ("fact recall", "fact_recall"),
    ("fact recall, text only", "fact_recall_text_only"),
    ("fact kind accuracy", "fact_kind_accuracy"),
    ("entities found", "entity_found"),
    ("entity kind accuracy", "entity_kind_accuracy"),
    ("junk entity share", "junk_entity_share"),
    ("values found", "values_found"),
    ("promise precision", "promise_precision"),
    ("promise recall", "promise_recall"),
    ("due date accuracy", "due_accuracy"),
    ("answer in top-1 passage", "answer_top1"),
    ("answer in top-3 passages", "answer_top3"),
    ("answer in returned snippets", "answer_in_snippets"),
    ("duplicate promises /100 docs", "duplicate_promises_per_100"),
    ("duplicate documents /100 docs", "duplicate_documents_per_100"),
    ("duplicate facts /100 docs", "duplicate_facts_per_100"),
    ("facts that are a header line", "header_facts"),
    ("facts with a speaker's label", "turn_label_facts"),
    ("facts speaking as I/we", "first_person_facts"),
    ("junk entities", "junk_entities"),
    ("facts with table/list syntax", "markup_facts"),
    ("entities with table/list syntax", "markup_entities"),
    ("snippets with table/list syntax", "markup_snippets"),
    ("facts with an invented year", "invented_year_facts"),
)


def _cell(value: Any) -> str:
    return "-" if value is None else f"{value:.2f}" if isinstance(value, float) and value <= 1 else str(value)


def table_lines(figures: dict[str, dict[str, Any]]) -> Iterable[str]:
    """One table: a row per figure, a column per source kind present, then all."""
    columns = [k for k in (*KINDS, "all") if k in figures]
    yield f"{'':32}" + "".join(f"{c:>11}" for c in columns)
    yield f"{'documents':32}" + "".join(f"{figures[c]['documents']:>11}" for c in columns)
    for title, key in ROWS:
        yield f"{title:32}" + "".join(f"{_cell(figures[c][key]):>11}" for c in columns)


def digest(parts: list[Part], loaded: Loaded) -> str:
    """What the figures depend on in the input: the files read, and the documents' texts and files."""
    sha = hashlib.sha256()
    for part in parts:
        for path in (part.docs, part.labels, part.questions):
            sha.update(path.read_bytes() if path else b"-")
    for row in loaded.rows:
        sha.update(Path(row["file"]).read_bytes() if row.get("file") else (row.get("text") or "").encode())
    return sha.hexdigest()[:16]


def _parts(opts: dict[str, Any]) -> list[Part]:
    if opts["set"]:
        if opts["docs"] or opts["labels"] or opts["questions"]:
            raise CommandError("give either --set FOLDER or --docs and --labels (and --questions), not both")
        return parts_of(opts["set"])
    if not (opts["docs"] and opts["labels"]):
        raise CommandError("give --set FOLDER, or --docs FILE and --labels FILE")
    return [Part(opts["docs"], opts["labels"], opts["questions"])]


class Command(BaseCommand):
    help = "Facts, times, entities, values, promises and passages derived from labelled documents, per source kind."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--set", type=Path, help="A set's folder: docs, labels and questions of each part")
        parser.add_argument("--docs", type=Path, help="Documents, one JSON object a line")
        parser.add_argument("--labels", type=Path, help="Labels, one JSON object a line")
        parser.add_argument("--questions", type=Path, help="Questions with their answers, one JSON object a line")
        parser.add_argument("--split", choices=SPLITS, default="all", help="Which documents to load and score")
        parser.add_argument("--json", action="store_true", help="Print the figures as one JSON object")
        parser.add_argument("--errors", action="store_true", help="List each document's misses and extra output")
        parser.add_argument(
            "--verbose", action="store_true", help="List what the checks counted: junk entities, markup, years"
        )
        parser.add_argument("--keep", action="store_true", help="Keep the throwaway organisation")

    def handle(self, *args: Any, **opts: Any) -> None:
        parts = _parts(opts)
        loaded = load(parts, opts["split"])
        if loaded.unbuilt:
            self.stderr.write(
                f"left out, their text is not on this machine (see the set's README to rebuild them): "
                f"{', '.join(loaded.unbuilt)}"
            )
        if not loaded.rows:
            raise CommandError(f"no documents in the split {opts['split']!r}")
        derived, timing = self._derive(loaded.rows, keep=opts["keep"])
        scored = score(loaded.docs, derived)
        figures = {split: {kind: t.figures() for kind, t in kinds.items()} for split, kinds in scored.items()}
        extractor = f"model {settings.BRAIN_LLM_MODEL}" if settings.BRAIN_LLM_URL else "deterministic"
        basis = {
            "extractor": extractor,
            "embedder": settings.BRAIN_EMBEDDER,
            "order": "saved by saved_at, then id; questions in file order",
            "input": digest(parts, loaded),
            "left_out": loaded.unbuilt,
        }
        if opts["json"]:
            self._json(loaded.docs, derived, figures, basis, _speed(len(loaded.rows), timing))
            return
        self._text(loaded, derived, figures, basis, timing, opts)

    def _derive(self, rows: list[dict[str, Any]], *, keep: bool) -> tuple[dict[str, Derived], Timing]:
        suffix = secrets.token_hex(3)
        org = create_organisation(slug=f"evalx-{suffix}", name="extraction evaluation", plan="unlimited")
        user = User.objects.create_user(f"evalx-{suffix}")
        try:
            add_member(org=org, user=user, role="admin")
            writer = Actor(org=org, user=user, scopes=frozenset({"read", "write"}), via="command", role="admin")
            return derive(writer, rows)
        finally:
            if not keep:
                Organisation.objects.filter(pk=org.pk).delete()
                User.objects.filter(pk=user.pk).delete()

    def _json(
        self,
        docs: list[Doc],
        derived: dict[str, Derived],
        figures: dict[str, Any],
        basis: dict[str, Any],
        speed: dict[str, Any],
    ) -> None:
        found = [d for d in docs if d.id in derived]
        report = {
            **basis,
            "speed": speed,
            "figures": figures,
            "errors": {d.id: errors_of(d.labels, derived[d.id]) for d in found},
            "details": {d.id: details_of(d.labels, derived[d.id]) for d in found},
        }
        self.stdout.write(json.dumps(report, indent=1, default=str))

    def _text(
        self,
        loaded: Loaded,
        derived: dict[str, Derived],
        figures: dict[str, Any],
        basis: dict[str, Any],
        timing: Timing,
        opts: dict[str, Any],
    ) -> None:
        n = len(loaded.rows)
        speed = _speed(n, timing)
        self.stdout.write(
            f"extractor: {basis['extractor']}; {n} documents saved and ingested in {timing.ingest:.1f} s "
            f"({speed['documents_per_second_ingested']} documents/s), of which extraction {timing.extract:.1f} s "
            f"({speed['documents_per_second_extracted']} documents/s); commitment scan {timing.promises:.1f} s; "
            f"searches {timing.search:.1f} s"
        )
        self.stdout.write(
            f"depends on: the extractor, the embedder ({basis['embedder']}), the order ({basis['order']}) "
            f"and the input (sha256 {basis['input']})"
        )
        for split in SPLITS:
            if split in figures and (split == "all" or opts["split"] == "all" or split == opts["split"]):
                self.stdout.write(f"\n[{split}]")
                for line in table_lines(figures[split]):
                    self.stdout.write(line)
        for d in loaded.docs:
            if d.id in derived and opts["errors"]:
                self._listed(d, errors_of(d.labels, derived[d.id]))
            if d.id in derived and opts["verbose"]:
                self._listed(d, details_of(d.labels, derived[d.id]))
        kinds = Counter(doc.kind for doc in loaded.docs)
        self.stdout.write("\n" + ", ".join(f"{k}: {n}" for k, n in sorted(kinds.items())))

    def _listed(self, doc: Doc, lists: dict[str, list[str]]) -> None:
        if any(lists.values()):
            self.stdout.write(f"\n{doc.id} ({doc.kind}, {doc.split})")
            for heading, lines in lists.items():
                for line in lines:
                    self.stdout.write(f"  {heading}: {line}")


def _speed(n: int, timing: Timing) -> dict[str, Any]:
    return {
        "documents": n,
        "ingest_seconds": round(timing.ingest, 2),
        "extract_seconds": round(timing.extract, 2),
        "promise_scan_seconds": round(timing.promises, 2),
        "search_seconds": round(timing.search, 2),
        "documents_per_second_ingested": round(n / timing.ingest, 2) if timing.ingest else None,
        "documents_per_second_extracted": round(n / timing.extract, 2) if timing.extract else None,
    }
