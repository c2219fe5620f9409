from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from brain.models import Organisation
from brain.portability.leaving import delete_organisation


class Command(BaseCommand):
    help = "Delete an organisation and everything of it, for good. Export it first (export_org) to keep a copy."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--org", required=True, help="The organisation's slug.")
        parser.add_argument("--yes", action="store_true", help="Really delete it (nothing is deleted without it).")

    def handle(self, *args: Any, **opts: Any) -> None:
        org = Organisation.objects.filter(slug=opts["org"]).first()
        if org is None:
            raise CommandError(f"No organisation with the slug {opts['org']!r}.")
        if not opts["yes"]:
            raise CommandError(f"This deletes {org.name} ({org.slug}) and all its knowledge for good; add --yes.")
        rows = delete_organisation(org=org)
        self.stdout.write(f"deleted {org.slug}: {rows} rows")
