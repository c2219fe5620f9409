"""Score what Brain derives from content (facts, time expressions, entities, promises) against labels.

    ./brainctl manage eval_extraction --docs eval/extraction/docs.jsonl \
        --labels eval/extraction/labels.jsonl [--split dev|heldout|all] [--json]

docs.jsonl holds one document a line: id, kind (mail, meeting, chat, transcript, wiki), title, text,
split (dev or heldout), saved_at (the pretended upload time), and optionally occurred_at, speaker,
conversation, session and external_id. A transcript whose text is a WebVTT file is read by the
caption reader first, as an uploaded .vtt would be. labels.jsonl holds one line per document: id,
facts, times, entities, promises (eval/extraction/README.md describes them).

The documents go into a throwaway organisation (deleted afterwards unless --keep) through
add_document, one at a time, and are ingested in this process with the clock set to the document's
saved_at, so "recorded at" is the upload time and nothing else changes; then the commitment
register's scan runs as it does at night. With a language model configured (BRAIN_LLM_URL) the
facts and entities come from the model, as in production. The scoring functions below are pure.
"""

from __future__ import annotations

import json
import re
import secrets
import time
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any
from unittest import mock

from django.conf import settings
from django.contrib.auth.models import User
from django.core.management.base import BaseCommand, CommandError, CommandParser
from rapidfuzz import fuzz

from brain.actors import Actor
from brain.models import Features, Organisation
from brain.services import add_member, create_organisation
from memory.documents.ingestion import ingest_documents
from memory.documents.parsing import _Source
from memory.documents.saving import add_document
from memory.documents.transcripts import parse_vtt
from memory.models import Document, Fact, Mention
from registers.models import Commitment, CommitmentSource
from registers.nightly import run_nightly

KINDS = ("mail", "meeting", "chat", "transcript", "wiki")
SOURCE_KINDS = {"mail": "email", "meeting": "upload", "chat": "chat", "transcript": "transcript", "wiki": "wiki"}
SPLITS = ("dev", "heldout", "all")
FACT_MATCH = 70  # rapidfuzz token_sort_ratio, 0-100, between a draft's statement and a label's
NAME_MATCH = 88  # rapidfuzz ratio between two names (subjects, entities, owners)
HEADER_LINE = re.compile(r"^\s*(?:from|to|cc|bcc|date|sent|subject|reply-to)\s*:", re.IGNORECASE | re.MULTILINE)
FIRST_PERSON = re.compile(r"\bI\b|\bI'(?:m|ll|ve|d)\b|\b(?:we|we're|we'll|we've|we'd|our|ours|us|my|me)\b", re.I)
_ISO = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
_YEAR = re.compile(r"\b(?:19|20)\d{2}\b")
# A transcript or chat turn's label left in a statement: "Jonas Weber (at 00:00:27): I'll review it".
TURN_LABEL = re.compile(r"^\W*[A-Z][\w .'’-]{0,60}?\W*\s*\([^)]{0,40}\):")
_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset(
    ["the", "a", "an", "to", "of", "and", "will", "be", "it", "that", "this", "on", "in", "for", "with", "so", "by"]
)


# --- what was derived, and what should have been -----------------------------------------------------


@dataclass
class DerivedFact:
    statement: str
    subject: str | None = None
    kind: str = "fact"
    valid_from: date | None = None
    valid_to: date | None = None
    dates: tuple[date, ...] = ()  # its typed date values


@dataclass
class DerivedPromise:
    owner: str
    what: str
    due_on: date | None = None
    entry: int | None = None  # the register entry: a promise said in two documents is one entry with both


@dataclass
class Derived:
    """Everything derived from one document."""

    facts: list[DerivedFact] = field(default_factory=list)
    entities: dict[str, str] = field(default_factory=dict)  # name as written -> kind
    promises: list[DerivedPromise] = field(default_factory=list)
    stored: bool = True  # False when saving it again changed nothing (no new document)


@dataclass
class Doc:
    id: str
    kind: str
    split: str
    labels: dict[str, Any]


def _day(value: Any) -> date | None:
    return date.fromisoformat(str(value)[:10]) if value else None


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP}


def _norm(text: str) -> str:
    return " ".join(_WORD.findall(text.lower()))


def same_name(a: str | None, b: str | None) -> bool:
    """Two names for one thing: equal but for case and punctuation, close in spelling, or one the
    other's first words ("Northwind" and "Northwind Traders")."""
    if not a or not b:
        return False
    x, y = _norm(a), _norm(b)
    if not x or not y:
        return False
    shorter, longer = sorted((x.split(), y.split()), key=len)
    return x == y or fuzz.ratio(x, y) >= NAME_MATCH or longer[: len(shorter)] == shorter


def fact_similarity(draft: str, label: str) -> float:
    return float(fuzz.token_sort_ratio(_norm(draft), _norm(label)))


def match_facts(drafts: list[DerivedFact], labels: list[dict[str, Any]], *, subject: bool) -> dict[int, int]:
    """Label position -> draft position: greedily, most similar pairs first, each used once; a pair
    needs FACT_MATCH similarity and, with ``subject``, the label's subject (a label without one
    takes any)."""
    pairs = []
    for li, label in enumerate(labels):
        for di, draft in enumerate(drafts):
            score = fact_similarity(draft.statement, label["statement"])
            if score >= FACT_MATCH and (
                not subject or not label.get("subject") or same_name(draft.subject, label["subject"])
            ):
                pairs.append((score, li, di))
    matched: dict[int, int] = {}
    for _, li, di in sorted(pairs, reverse=True):
        if li not in matched and di not in matched.values():
            matched[li] = di
    return matched


def time_correct(label: dict[str, Any], fact: DerivedFact | None) -> bool:
    """A time expression is read right when the fact it sits in was derived and carries its date
    (validity, a typed date value, or the date written into the statement); an expression with no
    date (a habit, "every Monday at 10:00") is right when the statement keeps its words and the fact
    gains no date anywhere."""
    if fact is None:
        return False
    if label.get("value"):
        wanted = date.fromisoformat(str(label["value"])[:10])
        if wanted in (fact.valid_from, fact.valid_to, *fact.dates) or str(wanted) in fact.statement:
            return True
        # An absolute date kept as written ("on 1 January 2026"), or a month written out with its year
        # ("in January" -> "in January 2026"), leaves the statement self-contained and right.
        kept = _YEAR.search(label["text"]) is not None and _norm(label["text"]) in _norm(fact.statement)
        month = wanted.day == 1 and f"{wanted:%B %Y}".lower() in _norm(fact.statement)
        return kept or month
    written = _norm(label["text"])
    undated = fact.valid_from is None and fact.valid_to is None and not fact.dates
    return written in _norm(fact.statement) and not _ISO.search(fact.statement) and undated


def match_promises(drafts: list[DerivedPromise], labels: list[dict[str, Any]]) -> dict[int, int]:
    """Label position -> draft position: same owner, and the draft's what holds at least half the
    label's content words (the owner's name aside)."""
    matched: dict[int, int] = {}
    for li, label in enumerate(labels):
        wanted = _words(label["what"]) - _words(label["owner"])
        best, best_share = None, 0.5
        for di, draft in enumerate(drafts):
            if di in matched.values() or not same_name(draft.owner, label["owner"]):
                continue
            share = len(wanted & _words(draft.what)) / len(wanted) if wanted else 1.0
            if share >= best_share:
                best, best_share = di, share
        if best is not None:
            matched[li] = best
    return matched


def entity_kind(derived: dict[str, str], name: str) -> str | None:
    """The kind derived for a labelled name, or None when no entity by that name was derived."""
    exact = [kind for written, kind in derived.items() if _norm(written) == _norm(name)]
    close = [kind for written, kind in derived.items() if same_name(written, name)]
    found = exact or close
    return found[0] if found else None


@dataclass
class Tally:
    """Counts for one group of documents; the figures are read off them."""

    documents: int = 0
    labelled_facts: int = 0
    derived_facts: int = 0
    matched_facts: int = 0  # text and subject
    matched_text_only: int = 0
    right_fact_kind: int = 0
    times: int = 0
    right_times: int = 0
    entities: int = 0
    entities_found: int = 0
    right_entity_kind: int = 0
    labelled_promises: int = 0
    derived_promises: int = 0
    matched_promises: int = 0
    right_due: int = 0
    header_facts: int = 0
    turn_label_facts: int = 0
    first_person_facts: int = 0
    duplicate_promises: int = 0
    duplicate_documents: int = 0
    duplicate_facts: int = 0

    def add(self, other: Tally) -> None:
        for name in self.__dataclass_fields__:
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def figures(self) -> dict[str, Any]:
        def share(part: int, whole: int) -> float | None:
            return round(part / whole, 3) if whole else None

        per_100 = 100 / self.documents if self.documents else 0.0
        return {
            "documents": self.documents,
            "time_accuracy": share(self.right_times, self.times),
            "fact_precision": share(self.matched_facts, self.derived_facts),
            "fact_recall": share(self.matched_facts, self.labelled_facts),
            "fact_recall_text_only": share(self.matched_text_only, self.labelled_facts),
            "fact_kind_accuracy": share(self.right_fact_kind, self.matched_facts),
            "entity_found": share(self.entities_found, self.entities),
            "entity_kind_accuracy": share(self.right_entity_kind, self.entities),
            "promise_precision": share(self.matched_promises, self.derived_promises),
            "promise_recall": share(self.matched_promises, self.labelled_promises),
            "due_accuracy": share(self.right_due, self.matched_promises),
            "duplicate_promises_per_100": round(self.duplicate_promises * per_100, 1),
            "duplicate_documents_per_100": round(self.duplicate_documents * per_100, 1),
            "duplicate_facts_per_100": round(self.duplicate_facts * per_100, 1),
            "header_facts": self.header_facts,
            "turn_label_facts": self.turn_label_facts,
            "first_person_facts": self.first_person_facts,
            "labelled": {
                "facts": self.labelled_facts,
                "times": self.times,
                "entities": self.entities,
                "promises": self.labelled_promises,
            },
            "derived": {"facts": self.derived_facts, "promises": self.derived_promises},
        }


def score_document(labels: dict[str, Any], derived: Derived) -> Tally:
    """The counts for one document, duplicates aside (they need the other documents)."""
    facts, wanted = derived.facts, labels.get("facts", [])
    matched = match_facts(facts, wanted, subject=True)
    text_only = match_facts(facts, wanted, subject=False)
    tally = Tally(documents=1, labelled_facts=len(wanted), derived_facts=len(facts), matched_facts=len(matched))
    tally.matched_text_only = len(text_only)
    tally.right_fact_kind = sum(facts[di].kind == wanted[li].get("kind", "fact") for li, di in matched.items())
    for time_label in labels.get("times", []):
        # The fact the expression is written in: the one named by position, else the first holding it.
        holder = time_label.get("fact")
        if holder is None:
            holder = next((i for i, f in enumerate(wanted) if _norm(time_label["text"]) in _norm(f["statement"])), None)
        found = facts[text_only[holder]] if holder is not None and holder in text_only else None
        tally.times += 1
        tally.right_times += time_correct(time_label, found)
    for entity in labels.get("entities", []):
        accepted = entity["kind"] if isinstance(entity["kind"], list) else [entity["kind"]]
        kind = entity_kind(derived.entities, entity["name"])
        tally.entities += 1
        tally.entities_found += kind is not None
        tally.right_entity_kind += kind in accepted
    promises, wanted_promises = derived.promises, labels.get("promises", [])
    hits = match_promises(promises, wanted_promises)
    tally.labelled_promises, tally.derived_promises, tally.matched_promises = (
        len(wanted_promises),
        len(promises),
        len(hits),
    )
    tally.right_due = sum(promises[di].due_on == _day(wanted_promises[li].get("due_on")) for li, di in hits.items())
    tally.header_facts = sum(bool(HEADER_LINE.search(f.statement)) for f in facts)
    tally.turn_label_facts = sum(bool(TURN_LABEL.match(f.statement)) for f in facts)
    tally.first_person_facts = sum(bool(FIRST_PERSON.search(f.statement)) for f in facts)
    return tally


def errors_of(labels: dict[str, Any], derived: Derived) -> dict[str, list[str]]:
    """What a reader fixing the extractor wants to see for one document: labels missed, output not
    labelled, time expressions and kinds read wrong."""
    facts, wanted = derived.facts, labels.get("facts", [])
    matched, text_only = match_facts(facts, wanted, subject=True), match_facts(facts, wanted, subject=False)
    out: dict[str, list[str]] = {
        "missed fact": [],
        "extra fact": [],
        "wrong subject": [],
        "wrong time": [],
        "wrong entity kind": [],
        "missed promise": [],
        "extra promise": [],
    }
    for li, label in enumerate(wanted):
        if li in text_only and li not in matched:
            out["wrong subject"].append(
                f"{facts[text_only[li]].subject!r} for {label['subject']!r}: {label['statement']}"
            )
        elif li not in text_only:
            out["missed fact"].append(f"[{label.get('subject')}] {label['statement']}")
    out["extra fact"] = [f"[{f.subject}] {f.statement}" for i, f in enumerate(facts) if i not in text_only.values()]
    for time_label in labels.get("times", []):
        holder = time_label.get("fact")
        if holder is None:
            holder = next((i for i, f in enumerate(wanted) if _norm(time_label["text"]) in _norm(f["statement"])), None)
        found = facts[text_only[holder]] if holder is not None and holder in text_only else None
        if not time_correct(time_label, found):
            got = f"{found.statement!r} ({found.valid_from}..{found.valid_to})" if found else "no fact"
            out["wrong time"].append(f"{time_label['text']!r} = {time_label['value']}: {got}")
    for entity in labels.get("entities", []):
        accepted = entity["kind"] if isinstance(entity["kind"], list) else [entity["kind"]]
        kind = entity_kind(derived.entities, entity["name"])
        if kind not in accepted:
            out["wrong entity kind"].append(f"{entity['name']}: {kind or 'not found'}, wanted {'/'.join(accepted)}")
    promises, wanted_promises = derived.promises, labels.get("promises", [])
    hits = match_promises(promises, wanted_promises)
    out["missed promise"] = [
        f"[{p['owner']}] {p['what']} (due {p.get('due_on')})" for i, p in enumerate(wanted_promises) if i not in hits
    ]
    out["extra promise"] = [
        f"[{p.owner}] {p.what} (due {p.due_on})" for i, p in enumerate(promises) if i not in hits.values()
    ]
    for li, di in hits.items():
        if promises[di].due_on != _day(wanted_promises[li].get("due_on")):
            out["missed promise"].append(
                f"due {promises[di].due_on}, wanted {wanted_promises[li].get('due_on')}: {promises[di].what}"
            )
    return out


def duplicates(docs: list[Doc], derived: dict[str, Derived]) -> dict[str, Tally]:
    """Per document id, the duplicates charged to it: a promise labelled with the same ``key`` as one
    in an earlier document and derived again as another register entry (one entry with both documents as
    its sources is one promise); a document labelled ``duplicate_of`` an earlier one that
    was stored as a new document, and each of its facts that repeats a fact of that one."""
    charged: dict[str, Tally] = defaultdict(Tally)
    seen_keys: set[object] = set()  # each key, and each (key, register entry) it was derived as
    for doc in docs:
        found = derived.get(doc.id)
        if found is None:
            continue
        wanted = doc.labels.get("promises", [])
        for li, di in match_promises(found.promises, wanted).items():
            key, entry = wanted[li].get("key"), found.promises[di].entry
            if key and key in seen_keys and (entry is None or (key, entry) not in seen_keys):
                charged[doc.id].duplicate_promises += 1
            elif key:
                seen_keys.update((key, (key, entry)))
        original = derived.get(doc.labels.get("duplicate_of") or "")
        if original is not None and found.stored:
            charged[doc.id].duplicate_documents += 1
            earlier = {_norm(f.statement) for f in original.facts}
            charged[doc.id].duplicate_facts += sum(_norm(f.statement) in earlier for f in found.facts)
    return charged


def score(docs: list[Doc], derived: dict[str, Derived]) -> dict[str, dict[str, Tally]]:
    """split -> kind (and "all") -> counts; the splits are dev, heldout and all."""
    extra = duplicates(docs, derived)
    table: dict[str, dict[str, Tally]] = {s: defaultdict(Tally) for s in SPLITS}
    for doc in docs:
        if doc.id not in derived:
            continue
        tally = score_document(doc.labels, derived[doc.id])
        tally.add(extra.get(doc.id, Tally()))
        for split in (doc.split, "all"):
            table[split][doc.kind].add(tally)
            table[split]["all"].add(tally)
    return {split: dict(kinds) for split, kinds in table.items() if kinds}


# --- reading the files ---------------------------------------------------------------------------------


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    try:
        with path.open() as handle:
            return [json.loads(line) for line in handle if line.strip()]
    except (OSError, json.JSONDecodeError) as exc:
        raise CommandError(f"cannot read {path}: {exc}") from None


def load(docs_path: Path, labels_path: Path, split: str) -> tuple[list[dict[str, Any]], list[Doc]]:
    rows, labels = read_jsonl(docs_path), {row["id"]: row for row in read_jsonl(labels_path)}
    for n, row in enumerate(rows, 1):
        missing = {"id", "kind", "title", "text", "split", "saved_at"} - row.keys()
        if missing:
            raise CommandError(f"docs line {n} lacks {', '.join(sorted(missing))}")
        if row["kind"] not in KINDS:
            raise CommandError(f"docs line {n}: kind {row['kind']!r} is not one of {', '.join(KINDS)}")
        if row["id"] not in labels:
            raise CommandError(f"docs line {n}: document {row['id']!r} has no line in the labels")
    chosen = [row for row in rows if split == "all" or row["split"] == split]
    return chosen, [Doc(row["id"], row["kind"], row["split"], labels[row["id"]]) for row in chosen]


# --- the production path ---------------------------------------------------------------------------------


@contextmanager
def clock(moment: datetime) -> Iterator[None]:
    """``timezone.now`` answers ``moment`` inside (the upload time a document pretends to have)."""
    with mock.patch("django.utils.timezone.now", return_value=moment):
        yield


def _content(row: dict[str, Any]) -> tuple[str, str, str]:
    """(content, content type, conversation) as saving the document would store them: a WebVTT
    transcript is read by the caption reader, as its upload is."""
    text = row["text"]
    if row["kind"] == "transcript" and text.lstrip().startswith("WEBVTT"):
        name = f"{row['id']}.vtt"
        parsed = parse_vtt(_Source(Path(name), name, text.encode()))
        if parsed:
            return parsed[0].content, parsed[0].content_type, row.get("conversation") or parsed[0].conversation
    content_type = "text/markdown" if row["kind"] in ("wiki", "meeting") else "text/plain"
    return text, content_type, row.get("conversation") or ""


def _pause(org: Organisation, paused: bool) -> None:
    org.ingestion_paused_at = datetime.now(UTC) if paused else None
    Organisation.objects.filter(pk=org.pk).update(ingestion_paused_at=org.ingestion_paused_at)


@dataclass
class Timing:
    ingest: float = 0.0  # saving, chunking, embedding and extracting
    extract: float = 0.0  # extracting alone (facts, entities, values)
    promises: float = 0.0  # the commitment register's scan


@contextmanager
def timed_extraction(timing: Timing) -> Iterator[None]:
    from memory.graph import extracting as ingestion

    real = ingestion.extract_document

    def timed(**kw: Any) -> int:
        started = time.perf_counter()
        try:
            return real(**kw)
        finally:
            timing.extract += time.perf_counter() - started

    with mock.patch.object(ingestion, "extract_document", timed):
        yield


def derive(writer: Actor, rows: list[dict[str, Any]]) -> tuple[dict[str, Derived], Timing]:
    """Save and ingest each document at its upload time, run the commitment scan, and read back what
    was derived from each; returns it with the time each step took."""
    stored: dict[str, int] = {}
    again: set[str] = set()
    timing = Timing()
    for row in sorted(rows, key=lambda r: r["saved_at"]):
        content, content_type, conversation = _content(row)
        moment = datetime.fromisoformat(row["saved_at"])
        started = time.perf_counter()
        with clock(moment), timed_extraction(timing):
            _pause(writer.org, True)
            saved = add_document(
                actor=writer,
                title=row["title"],
                content=content,
                content_type=content_type,
                source_kind=SOURCE_KINDS[row["kind"]],
                external_id=row.get("external_id") or "",
                occurred_at=datetime.fromisoformat(row["occurred_at"]) if row.get("occurred_at") else None,
                speaker=row.get("speaker") or "",
                conversation=conversation,
                session=row.get("session") or "",
            )
            if saved.created:
                # Saved while ingestion is paused (nothing goes to a worker's queue), then ingested here; the
                # column's default was bound before the clock was set, so the upload time is written here.
                Document.objects.filter(pk=saved.document.pk).update(recorded_at=moment, status=Document.Status.QUEUED)
                _pause(writer.org, False)
                ingest_documents(document_ids=[saved.document.pk])
        timing.ingest += time.perf_counter() - started
        stored[row["id"]] = saved.document.pk
        if not saved.created:
            again.add(row["id"])
    promises: dict[int | None, list[DerivedPromise]] = defaultdict(list)
    # Promises are read by the commitment register's nightly scan; an evaluation reads them too.
    Features.objects.filter(org=writer.org).update(commitments=True)
    started = time.perf_counter()
    with clock(max(datetime.fromisoformat(r["saved_at"]) for r in rows)):
        run_nightly(writer.org, only="commitments")
    timing.promises = time.perf_counter() - started
    for c in Commitment.objects.filter(org=writer.org):
        promises[c.document_id].append(DerivedPromise(c.owner_name, c.what, c.due_on, c.pk))
    for s in CommitmentSource.objects.filter(org=writer.org).select_related("commitment"):
        promises[s.document_id].append(DerivedPromise(s.commitment.owner_name, s.what, s.due_on, s.commitment_id))
    facts: dict[int | None, list[DerivedFact]] = defaultdict(list)
    extracted = Fact.objects.filter(org=writer.org, source=Fact.Source.EXTRACTED)
    for f in extracted.select_related("subject").prefetch_related("values"):
        subject, dates = f.subject.name if f.subject else None, tuple(v.date for v in f.values.all() if v.date)
        facts[f.document_id].append(DerivedFact(f.statement, subject, f.kind, f.valid_from, f.valid_to, dates))
    entities: dict[int, dict[str, str]] = defaultdict(dict)
    for m in Mention.objects.filter(document__org=writer.org).select_related("entity"):
        entities[m.document_id].setdefault(m.surface, m.type or m.entity.type)
        entities[m.document_id].setdefault(m.entity.name, m.type or m.entity.type)
    derived = {
        doc_id: Derived(facts[pk], entities[pk], list(promises[pk]), doc_id not in again)
        for doc_id, pk in stored.items()
    }
    return derived, timing


# --- the command --------------------------------------------------------------------------------------------


ROWS = (
    ("time accuracy", "time_accuracy"),
    ("fact precision", "fact_precision"),
    ("fact recall", "fact_recall"),
    ("fact recall, text only", "fact_recall_text_only"),
    ("fact kind accuracy", "fact_kind_accuracy"),
    ("entities found", "entity_found"),
    ("entity kind accuracy", "entity_kind_accuracy"),
    ("promise precision", "promise_precision"),
    ("promise recall", "promise_recall"),
    ("due date accuracy", "due_accuracy"),
    ("duplicate promises /100 docs", "duplicate_promises_per_100"),
    ("duplicate documents /100 docs", "duplicate_documents_per_100"),
    ("duplicate facts /100 docs", "duplicate_facts_per_100"),
    ("facts that are a header line", "header_facts"),
    ("facts with a speaker's label", "turn_label_facts"),
    ("facts speaking as I/we", "first_person_facts"),
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


class Command(BaseCommand):
    help = "Facts, time expressions, entities and promises derived from labelled documents, scored per source kind."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--docs", type=Path, required=True, help="Documents, one JSON object a line")
        parser.add_argument("--labels", type=Path, required=True, help="Labels, one JSON object a line")
        parser.add_argument("--split", choices=SPLITS, default="all", help="Which documents to load and score")
        parser.add_argument("--json", action="store_true", help="Print the figures as one JSON object")
        parser.add_argument("--errors", action="store_true", help="List each document's misses and extra output")
        parser.add_argument("--keep", action="store_true", help="Keep the throwaway organisation")

    def handle(self, *args: Any, **opts: Any) -> None:
        rows, docs = load(opts["docs"], opts["labels"], opts["split"])
        if not rows:
            raise CommandError(f"no documents in the split {opts['split']!r}")
        suffix = secrets.token_hex(3)
        org = create_organisation(slug=f"evalx-{suffix}", name="extraction evaluation", plan="unlimited")
        user = User.objects.create_user(f"evalx-{suffix}")
        try:
            add_member(org=org, user=user, role="admin")
            writer = Actor(org=org, user=user, scopes=frozenset({"read", "write"}), via="command", role="admin")
            derived, timing = derive(writer, rows)
        finally:
            if not opts["keep"]:
                Organisation.objects.filter(pk=org.pk).delete()
                User.objects.filter(pk=user.pk).delete()
        scored = score(docs, derived)
        figures = {split: {kind: t.figures() for kind, t in kinds.items()} for split, kinds in scored.items()}
        n = len(rows)
        speed = {
            "documents": n,
            "ingest_seconds": round(timing.ingest, 2),
            "extract_seconds": round(timing.extract, 2),
            "promise_scan_seconds": round(timing.promises, 2),
            "documents_per_second_ingested": round(n / timing.ingest, 2) if timing.ingest else None,
            "documents_per_second_extracted": round(n / timing.extract, 2) if timing.extract else None,
        }
        extractor = f"model {settings.BRAIN_LLM_MODEL}" if settings.BRAIN_LLM_URL else "deterministic"
        if opts["json"]:
            errors = {d.id: errors_of(d.labels, derived[d.id]) for d in docs if d.id in derived}
            self.stdout.write(
                json.dumps(
                    {"extractor": extractor, "speed": speed, "figures": figures, "errors": errors},
                    indent=1,
                    default=str,
                )
            )
            return
        self.stdout.write(
            f"extractor: {extractor}; {n} documents saved and ingested in {timing.ingest:.1f} s "
            f"({speed['documents_per_second_ingested']} documents/s), of which extraction {timing.extract:.1f} s "
            f"({speed['documents_per_second_extracted']} documents/s); commitment scan {timing.promises:.1f} s"
        )
        for split in SPLITS:
            if split in figures and (split == "all" or opts["split"] == "all" or split == opts["split"]):
                self.stdout.write(f"\n[{split}]")
                for line in table_lines(figures[split]):
                    self.stdout.write(line)
        if opts["errors"]:
            for d in docs:
                if d.id in derived:
                    self._errors(d, errors_of(d.labels, derived[d.id]))
        kinds = Counter(doc.kind for doc in docs)
        self.stdout.write("\n" + ", ".join(f"{k}: {n}" for k, n in sorted(kinds.items())))

    def _errors(self, doc: Doc, errors: dict[str, list[str]]) -> None:
        if any(errors.values()):
            self.stdout.write(f"\n{doc.id} ({doc.kind}, {doc.split})")
            for heading, lines in errors.items():
                for line in lines:
                    self.stdout.write(f"  {heading}: {line}")
