"""Bulk-load files and folders into an organisation's memory."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from django.contrib.auth.models import User
from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from brain.actors import Actor
from brain.errors import DomainError
from brain.models import Membership, Organisation
from memory.documents.ingestion import ingest_documents
from memory.documents.parsers import iter_documents
from memory.documents.parsing import ParseError
from memory.documents.saving import add_document
from memory.models import Document

MAX_CONTENT = 5_000_000


class Command(BaseCommand):
    help = (
        "Ingest files and folders (.md .txt .html .pdf, Slack export folders and .json day files, .eml .mbox). "
        "Unreadable files are reported and skipped; re-ingesting unchanged files changes nothing."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("paths", nargs="+", type=Path)
        parser.add_argument("--org", required=True, help="Organisation slug")
        parser.add_argument("--as", dest="email", help="Member the documents are saved as (default: an admin)")
        parser.add_argument("--category", default=None, help="Category slug (default: general)")
        parser.add_argument("--source-kind", default=None, help="Override the source kind (upload, chat, email, ...)")
        parser.add_argument("--scope", default="shared", choices=["shared", "personal"])
        parser.add_argument("--wait", action="store_true", help="Ingest now and wait until every document is done")
        parser.add_argument("--no-progress", action="store_true")

    def handle(self, *args: Any, **opts: Any) -> None:
        started = time.perf_counter()
        actor = self._actor(opts["org"], opts["email"])
        missing = [str(p) for p in opts["paths"] if not p.exists()]
        if missing:
            raise CommandError(f"No such file or folder: {', '.join(missing)}")
        counts = {"documents": 0, "unchanged": 0, "skipped": 0, "failed": 0}
        created: list[int] = []
        outcomes = iter_documents(opts["paths"])
        bar = tqdm(outcomes, unit="file", disable=opts["no_progress"], file=self.stderr)
        for path, result in bar:
            if isinstance(result, ParseError):
                counts["failed"] += 1
                bar.write(f"skipped {path}: {result}", file=self.stderr)
                continue
            if not result:
                counts["skipped"] += 1
            for parsed in result:
                if len(parsed.content) > MAX_CONTENT:
                    counts["failed"] += 1
                    bar.write(f"skipped {path}: over {MAX_CONTENT:,} characters", file=self.stderr)
                    continue
                try:
                    saved = add_document(
                        actor=actor,
                        title=parsed.title,
                        content=parsed.content,
                        content_type=parsed.content_type,
                        source_kind=opts["source_kind"] or parsed.source_kind,
                        source_url=parsed.source_url,
                        external_id=parsed.external_id,
                        metadata=parsed.metadata,
                        speaker=parsed.speaker,
                        conversation=parsed.conversation,
                        session=parsed.session,
                        category=opts["category"],
                        scope=opts["scope"],
                        occurred_at=parsed.occurred_at,
                    )
                except DomainError as exc:
                    raise CommandError(exc.message) from None
                if saved.created:
                    counts["documents"] += 1
                    created.append(saved.document.pk)
                else:
                    counts["unchanged"] += 1
        chunks = self._wait(created) if opts["wait"] else None
        if opts["wait"]:
            counts["failed"] += Document.objects.filter(pk__in=created, status=Document.Status.FAILED).count()
        seconds = time.perf_counter() - started
        summary = ", ".join(f"{n} {name}" for name, n in counts.items())
        if chunks is not None:
            summary += f", {chunks} chunks"
        else:
            summary += " (queued for the worker)"
        self.stdout.write(f"{summary} in {seconds:.1f} s")

    def _actor(self, slug: str, email: str | None) -> Actor:
        org = Organisation.objects.filter(slug=slug).first()
        if org is None:
            raise CommandError(f"No organisation with slug {slug!r}.")
        members = Membership.objects.filter(org=org).select_related("user")
        membership = (
            members.filter(user__email__iexact=email).first() if email else members.filter(role="admin").first()
        )
        if membership is None:
            raise CommandError(f"No member {'with email ' + email if email else 'who is an admin'} in {slug}.")
        user: User = membership.user
        return Actor(org=org, user=user, scopes=frozenset({"read", "write"}), via="command", role=membership.role)

    def _wait(self, ids: list[int], timeout: float = 3600) -> int:
        """Ingest here in batches (a running worker may take some first), then wait for the rest."""
        for start in range(0, len(ids), 128):
            ingest_documents(document_ids=ids[start : start + 128])
        deadline = time.monotonic() + timeout
        pending = Document.objects.filter(pk__in=ids, status__in=["queued", "processing", "waiting"])
        while pending.exists() and time.monotonic() < deadline:
            if pending.filter(status="waiting").exists():
                waiting = pending.filter(status="waiting").count()
                self.stderr.write(
                    f"{waiting} document(s) are waiting: ingestion is paused for this organisation or its usage "
                    "has run out (see 'manage.py ingestion status' and 'manage.py credits --org SLUG show')"
                )
                break
            time.sleep(1)
        return sum(Document.objects.filter(pk__in=ids).values_list("chunk_count", flat=True))
