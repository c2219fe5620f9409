"""Score the commitment extraction on hand-labelled meeting transcripts; no database is touched.

    ./brainctl manage eval_commitments --docs /work/shared/eval/qmsum-test/docs.jsonl \
        --labels eval/commitments/labels.jsonl
"""

from __future__ import annotations

import datetime
import json
import re
import time
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from registers.commitments.extraction import CommitmentDraft, Utterance, extract_commitments

# QMSum's meetings carry no date; every turn is read as said on this day.
FIXED_DATE = datetime.date(2025, 6, 4)
_MARKUP_RE = re.compile(r"\{(?:disfmarker|vocalsound|nonvocalsound|gap|pause|comment)\}")
_SPLIT_CONTRACTION_RE = re.compile(r"\s+(n't|'ll|'s|'re|'ve|'m|'d)\b", re.I)
_SPACE_BEFORE_PUNCT_RE = re.compile(r"\s+([.,?!;:])")
_STOP = frozenset(
    ["the", "a", "an", "to", "of", "and", "will", "be", "it", "that", "this", "on", "in", "for", "with", "so"]
)


@dataclass(frozen=True)
class Label:
    doc_id: str
    owner: str
    what: str


def plain_text(text: str) -> str:
    """A QMSum turn as a transcript would read: no markup tokens, contractions and stops joined up."""
    text = _MARKUP_RE.sub(" -- ", text)
    text = _SPLIT_CONTRACTION_RE.sub(r"\1", text)
    text = _SPACE_BEFORE_PUNCT_RE.sub(r"\1", text)
    return " ".join(text.split())


def load_labels(path: Path) -> tuple[dict[str, str], list[Label]]:
    """Each labelled meeting's split ("tuning" unless marked "held-out"), and the commitments labelled
    (a meeting with none has one line with doc_id null)."""
    meetings: dict[str, str] = {}
    labels = []
    for line in path.read_text().splitlines():
        if line.strip():
            row = json.loads(line)
            meetings[row["meeting"]] = row.get("split", "tuning")
            if row.get("doc_id"):
                labels.append(Label(row["doc_id"], row["owner"], row["what"]))
    return meetings, labels


def load_turns(path: Path, meetings: Collection[str]) -> tuple[list[Utterance], dict[int, str]]:
    utterances: list[Utterance] = []
    doc_ids: dict[int, str] = {}
    with path.open() as lines:
        for line in lines:
            row = json.loads(line)
            if row["corpus"] in meetings:
                doc_ids[len(utterances)] = row["doc_id"]
                utterances.append(Utterance(row["speaker"] or "", plain_text(row["text"]), FIXED_DATE, len(utterances)))
    return utterances, doc_ids


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in _STOP}


def _overlap(label: Label, draft: CommitmentDraft) -> float:
    wanted = _words(label.what) - _words(label.owner)
    return len(wanted & _words(draft.what)) / len(wanted) if wanted else 1.0


def score(
    drafts: list[tuple[str, CommitmentDraft]], labels: list[Label]
) -> tuple[list[tuple[str, CommitmentDraft]], list[tuple[str, CommitmentDraft]], list[Label]]:
    """(true positives, false positives, misses): same turn, same owner, half the label's words."""
    open_labels, hits, false = list(labels), [], []
    for doc_id, draft in drafts:
        same = [lb for lb in open_labels if lb.doc_id == doc_id and lb.owner.casefold() == draft.owner.casefold()]
        best = max(same, key=lambda lb: _overlap(lb, draft), default=None)
        if best is not None and _overlap(best, draft) >= 0.5:
            open_labels.remove(best)
            hits.append((doc_id, draft))
        else:
            false.append((doc_id, draft))
    return hits, false, open_labels


class Command(BaseCommand):
    help = "Precision, recall, errors and throughput of the commitment extraction on labelled transcripts."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--docs", type=Path, required=True, help="Transcript turns, one JSON object a line")
        parser.add_argument("--labels", type=Path, required=True, help="Hand labels, one JSON object a line")

    def handle(self, *args: Any, **opts: Any) -> None:
        meetings, labels = load_labels(opts["labels"])
        utterances, doc_ids = load_turns(opts["docs"], meetings)
        extract_commitments([Utterance("A", "I'll send it.", FIXED_DATE)])  # load the model outside the timing
        started = time.perf_counter()
        found = extract_commitments(utterances)
        seconds = time.perf_counter() - started
        drafts = [(doc_ids[d.ref], d) for d in found if d.ref is not None]
        hits, false, missed = score(drafts, labels)
        out = self.stdout.write
        out(f"turns: {len(utterances)}  throughput: {len(utterances) / seconds:.0f} turns/s ({seconds:.2f} s)")
        for split in sorted(set(meetings.values()), reverse=True):
            names = sorted(m for m, s in meetings.items() if s == split)
            self._summary(split, names, drafts, hits, missed, labels)
        for title, rows in (("true positives", hits), ("false positives", false)):
            out(f"\n{title}:")
            for doc_id, d in rows:
                out(f"  {doc_id}  [{d.owner}] {d.what}  (due {d.due_on})  <- {d.quote[:120]!r}")
        out("\nmisses:")
        for label in missed:
            out(f"  {label.doc_id}  [{label.owner}] {label.what}")

    def _summary(
        self,
        split: str,
        names: list[str],
        drafts: list[tuple[str, CommitmentDraft]],
        hits: list[tuple[str, CommitmentDraft]],
        missed: list[Label],
        labels: list[Label],
    ) -> None:
        def inside(doc_id: str) -> bool:
            return doc_id.split(":")[0] in names

        n_drafts, n_hits = sum(inside(d) for d, _ in drafts), sum(inside(d) for d, _ in hits)
        n_labels, n_missed = sum(inside(lb.doc_id) for lb in labels), sum(inside(lb.doc_id) for lb in missed)
        precision = n_hits / n_drafts if n_drafts else 0.0
        recall = (n_labels - n_missed) / n_labels if n_labels else 0.0
        self.stdout.write(f"\n[{split}] meetings: {', '.join(names)}")
        self.stdout.write(f"  labels: {n_labels}  extracted: {n_drafts}  true positives: {n_hits}  misses: {n_missed}")
        self.stdout.write(f"  precision: {precision:.3f}  recall: {recall:.3f}")
