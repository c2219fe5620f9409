"""Load a local git repository's commit history into an organisation's memory."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from django.core.management.base import CommandError, CommandParser

from brain.errors import DomainError
from memory.code_history.git import GitHistoryError, read_commits, store_commits
from memory.management.commands.ingest import Command as IngestCommand
from memory.models import Document


class Command(IngestCommand):
    help = (
        "Save each commit of a local git repository (message, author, date, files touched, pull request "
        "and ticket references) as a document, for why_code. Known commits are left unchanged."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", type=Path, help="The repository folder")
        parser.add_argument("--org", required=True, help="Organisation slug")
        parser.add_argument("--as", dest="email", help="Member the commits are saved as (default: an admin)")
        parser.add_argument("--since", help="Only commits after this date (YYYY-MM-DD, or anything git log accepts)")
        parser.add_argument("--max-count", type=int, help="At most this many commits, newest first")
        parser.add_argument("--wait", action="store_true", help="Ingest now and wait until every commit is done")

    def handle(self, *args: Any, **opts: Any) -> None:
        started = time.perf_counter()
        actor = self._actor(opts["org"], opts["email"])
        try:
            commits = read_commits(opts["path"], since=opts["since"], max_count=opts["max_count"])
            counts, created = store_commits(actor=actor, commits=commits)
        except GitHistoryError as exc:
            raise CommandError(str(exc)) from None
        except DomainError as exc:
            raise CommandError(exc.message) from None
        repo = commits[0].repo_name if commits else opts["path"].name
        summary = f"{counts['commits']} commits, {counts['new']} new, {counts['unchanged']} unchanged from {repo}"
        if opts["wait"]:
            chunks = self._wait(created)
            failed = Document.objects.filter(pk__in=created, status=Document.Status.FAILED).count()
            summary += f", {failed} failed, {chunks} chunks"
        else:
            summary += " (queued for the worker)"
        self.stdout.write(f"{summary} in {time.perf_counter() - started:.1f} s")
