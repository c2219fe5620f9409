"""What the ingest commands share: ingesting what they saved under a progress bar, the counts of
the outcome, and how to follow up."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from django.core.management.base import OutputWrapper
from django.db.models import Sum
from tqdm import tqdm

from memory.documents.ingestion import EMBED_BATCH, ingest_documents
from memory.management.command_log import CommandLog
from memory.models import Document

Status = Document.Status
DONE = (Status.READY, Status.FAILED)
UNFINISHED = (Status.QUEUED, Status.PROCESSING)
SHOWN_FAILURES = 20


class Stream:
    """A command's stream for tqdm: Django's OutputWrapper ends every write with a newline, which
    would put each redraw of a progress bar on a line of its own."""

    def __init__(self, out: OutputWrapper) -> None:
        self.out = out

    def write(self, text: str) -> None:
        self.out.write(text, style_func=_plain, ending="")  # a bar in the error colour would read as one

    def flush(self) -> None:
        self.out.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.out, name)


def _plain(text: str) -> str:
    return text


def progress(stream: Stream, *, enabled: bool, **options: Any) -> tqdm[Any]:
    return tqdm(file=stream, disable=not enabled, dynamic_ncols=True, **options)


@dataclass
class Ingested:
    """How the documents a command saved ended up."""

    ready: int = 0
    failed: int = 0
    waiting: int = 0
    unfinished: int = 0  # still queued or being processed when the wait ended
    chunks: int = 0
    failures: list[Document] = field(default_factory=list)


def ingest_and_wait(ids: list[int], *, out: OutputWrapper, show: bool, timeout: float = 3600) -> Ingested:
    """Ingest the documents here in batches (a running worker may take some first), then wait for
    the rest, with a bar of documents done (ready or failed) out of all, its percentage and ETA.
    Stops waiting when only documents that wait for a resume or for credits are left."""
    documents = Document.objects.filter(pk__in=ids)
    with progress(Stream(out), enabled=show, total=len(ids), unit="doc", desc="ingesting") as bar:

        def advance() -> None:
            bar.update(documents.filter(status__in=DONE).count() - bar.n)

        # About fifty steps of the bar; a batch shares its embedding calls, so not fewer than four.
        batch = min(EMBED_BATCH, max(4, len(ids) // 50))
        for start in range(0, len(ids), batch):
            ingest_documents(document_ids=ids[start : start + batch])
            advance()
        deadline = time.monotonic() + timeout
        while documents.filter(status__in=UNFINISHED).exists() and time.monotonic() < deadline:
            time.sleep(1)
            advance()
    return tally(ids)


def tally(ids: list[int]) -> Ingested:
    documents = Document.objects.filter(pk__in=ids)
    counts = dict.fromkeys(Status.values, 0)
    for status in documents.values_list("status", flat=True):
        counts[status] += 1
    return Ingested(
        ready=counts[Status.READY],
        failed=counts[Status.FAILED],
        waiting=counts[Status.WAITING],
        unfinished=counts[Status.QUEUED] + counts[Status.PROCESSING],
        chunks=documents.aggregate(n=Sum("chunk_count"))["n"] or 0,
        failures=list(documents.filter(status=Status.FAILED).order_by("pk")[:SHOWN_FAILURES]),
    )


def report_failures(ingested: Ingested, out: OutputWrapper) -> None:
    for document in ingested.failures:
        out.write(f"failed {document.public_id} {document.title!r}: {document.error or 'no reason recorded'}")
    if ingested.failed > len(ingested.failures):
        out.write(f"... and {ingested.failed - len(ingested.failures)} more failed")


def outcome_text(ingested: Ingested | None) -> str:
    """The end of a summary line: what ingestion did, or that the worker will do it."""
    if ingested is None:
        return " (queued for the worker)"
    text = f", {ingested.waiting} waiting, {ingested.chunks} chunks"
    return text + (f", {ingested.unfinished} still being ingested" if ingested.unfinished else "")


def follow_up(org: str, *, unreadable: int, ingested: Ingested | None, log: CommandLog | None) -> list[str]:
    """What to run next, given how the command ended."""
    lines = []
    if ingested is None or ingested.unfinished or ingested.waiting:
        lines.append(f"Follow the ingestion: manage.py ingestion status --org {org}")
    if ingested is not None and ingested.failed:
        lines.append(f"Queue the failed documents again: manage.py ingestion retry-failed --org {org}")
    if ingested is not None and ingested.waiting:
        lines.append(
            f"{ingested.waiting} document(s) wait: ingestion is paused for {org} or its usage has run out. "
            f"Resume: manage.py ingestion resume --org {org}; add credits: manage.py credits --org {org} add N"
        )
    if unreadable:
        lines.append(f"{unreadable} could not be read or were too long (the 'failed' lines say why); fix, run again.")
    if log is not None and log.count:
        lines.append(f"{log.count} warning(s) or error(s) of the readers and the ingestion are in {log.path}")
    return lines
