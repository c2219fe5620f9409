"""Derive again, with the current rules, the facts, entities and register entries of an
organisation's stored documents, keeping what people decided by hand (``registers.repair``).

    ./brainctl manage reextract --org SLUG [--dry-run] [--document ID] [--after ID] [--quiet]

Documents are read one at a time, in id order; each line of the report names one document
and what changed in it, and the last line gives the totals. An interrupted run resumes with
``--after`` the last id reported; running it whole again is safe too (what is already derived
with the current rules is left as it is, and the report says nothing changed).
"""

from __future__ import annotations

import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from brain.models import Organisation
from memory.models import Document
from registers.repair import Changes, documents_to_rederive, rederive_document


class Command(BaseCommand):
    help = "Derive facts, entities and register entries again from an organisation's stored documents."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--org", required=True, help="The organisation's slug")
        parser.add_argument("--document", type=int, help="Just this document (its id, as the report gives it)")
        parser.add_argument("--after", type=int, default=0, help="Resume after this document id")
        parser.add_argument("--dry-run", action="store_true", help="Report what would change; change nothing")
        parser.add_argument("--quiet", action="store_true", help="Only the totals, not a line per document")

    def handle(self, *args: Any, **opts: Any) -> None:
        org = Organisation.objects.filter(slug=opts["org"]).first()
        if org is None:
            raise CommandError(f"No organisation with slug {opts['org']!r}.")
        if opts["document"] is not None:
            if not Document.objects.filter(org=org, pk=opts["document"], status=Document.Status.READY).exists():
                raise CommandError(f"No ready document {opts['document']} in {org.slug}.")
            ids: list[int] = [opts["document"]]
        else:
            ids = list(documents_to_rederive(org, after=opts["after"]))
        started, total = time.perf_counter(), Changes()
        for n, document_id in enumerate(ids, 1):
            changes = rederive_document(org, document_id, dry_run=opts["dry_run"])
            total.add(changes)
            if not opts["quiet"]:
                what = changes.line() if changes.changed else "unchanged"
                self.stdout.write(f"[{n}/{len(ids)}] document {document_id}: {what}")
        seconds = time.perf_counter() - started
        verb = "would change" if opts["dry_run"] else "changed"
        summary = total.line() if total.changed else "nothing (everything is derived with the current rules)"
        self.stdout.write(f"{org.slug}: {total.documents} document(s) in {seconds:.1f} s; {verb}: {summary}")
