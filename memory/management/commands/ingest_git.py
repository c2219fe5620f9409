"""Load a local git repository's commit history into an organisation's memory."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from django.core.management.base import CommandError, CommandParser

from brain.core.errors import DomainError
from memory.code_history.git import GitHistoryError, read_commits, store_commits
from memory.management.command_log import logged_to_file
from memory.management.commands.ingest import Command as IngestCommand
from memory.management.ingesting import Stream, follow_up, ingest_and_wait, outcome_text, progress, report_failures


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
        parser.add_argument("--no-progress", action="store_true")

    def handle(self, *args: Any, **opts: Any) -> None:
        started = time.perf_counter()
        actor = self._actor(opts["org"], opts["email"])
        show = not opts["no_progress"]
        try:
            commits = read_commits(opts["path"], since=opts["since"], max_count=opts["max_count"])
            with progress(Stream(self.stderr), enabled=show, iterable=commits, unit="commit", desc="saving") as bar:
                counts, created = store_commits(actor=actor, commits=bar)
        except GitHistoryError as exc:
            raise CommandError(str(exc)) from None
        except DomainError as exc:
            raise CommandError(exc.message) from None
        repo = commits[0].repo_name if commits else opts["path"].name
        with logged_to_file() as log:
            ingested = ingest_and_wait(created, out=self.stderr, show=show) if opts["wait"] else None
        summary = f"{counts['commits']} commits, {counts['new']} new, {counts['unchanged']} unchanged from {repo}"
        if ingested is not None:
            report_failures(ingested, self.stderr)
            summary += f", {ingested.failed} failed"
        self.stdout.write(f"{summary}{outcome_text(ingested)} in {time.perf_counter() - started:.1f} s")
        for line in follow_up(actor.org.slug, unreadable=0, ingested=ingested, log=log):
            self.stdout.write(line)
