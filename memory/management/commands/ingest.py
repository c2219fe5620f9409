"""Bulk-load files and folders into an organisation's memory."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from django.contrib.auth.models import User
from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from brain.core.actors import Actor
from brain.core.errors import DomainError
from brain.models import Membership, Organisation
from memory.documents.saving import add_document
from memory.extraction import ParsedDocument, ParseError, iter_documents
from memory.limits import MAX_DOCUMENT_CHARS, too_long
from memory.management.command_log import logged_to_file
from memory.management.ingesting import (
    Stream,
    follow_up,
    ingest_and_wait,
    outcome_text,
    progress,
    report_failures,
)


class Command(BaseCommand):
    help = (
        "Ingest files and folders (.md .txt .html .pdf, Slack export folders and .json day files, WhatsApp "
        ".txt exports, .eml .mbox, .vtt .srt transcripts). "
        "Unreadable files are reported and counted as failed, files without text as skipped; re-ingesting "
        "unchanged files changes nothing. The readers' warnings go to BRAIN_DATA_DIR/logs/ingest.log."
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
        self.counts = {"documents": 0, "unchanged": 0, "skipped": 0, "failed": 0}
        with logged_to_file() as log:
            created = self._read_and_save(actor, opts)
            unreadable = self.counts["failed"]
            ingested = ingest_and_wait(created, out=self.stderr, show=not opts["no_progress"]) if opts["wait"] else None
        if ingested is not None:
            report_failures(ingested, self.stderr)
            self.counts["failed"] += ingested.failed  # one count of failures: files and documents alike
        summary = ", ".join(f"{n} {name}" for name, n in self.counts.items()) + outcome_text(ingested)
        self.stdout.write(f"{summary} in {time.perf_counter() - started:.1f} s")
        for line in follow_up(actor.org.slug, unreadable=unreadable, ingested=ingested, log=log):
            self.stdout.write(line)

    def _read_and_save(self, actor: Actor, opts: dict[str, Any]) -> list[int]:
        """Every file read and its documents saved, with a line for each file that failed or was skipped."""
        created: list[int] = []
        self.err = Stream(self.stderr)
        outcomes = iter_documents(opts["paths"])
        with progress(self.err, enabled=not opts["no_progress"], iterable=outcomes, unit="file", desc="reading") as bar:
            for path, result in bar:
                if isinstance(result, ParseError):
                    self._count("failed", f"failed {path}: {result}")
                    continue
                if not result:
                    self._count("skipped", f"skipped {path}: no text in it")
                for parsed in result:
                    if len(parsed.content) > MAX_DOCUMENT_CHARS:
                        self._count("failed", f"failed {path}: {too_long('its text', len(parsed.content))}")
                    elif (pk := self._save(actor, parsed, opts)) is not None:
                        created.append(pk)
        return created

    def _count(self, what: str, line: str) -> None:
        self.counts[what] += 1
        tqdm.write(line, file=self.err)  # above the bar, which is drawn again below it

    def _save(self, actor: Actor, parsed: ParsedDocument, opts: dict[str, Any]) -> int | None:
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
        self.counts["documents" if saved.created else "unchanged"] += 1
        return saved.document.pk if saved.created else None

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
