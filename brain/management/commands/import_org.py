from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from brain.core.errors import DomainError
from brain.portability.importing import import_organisation


class Command(BaseCommand):
    help = (
        "Load an archive written by export_org as a new organisation with the slug --slug, in one "
        "transaction: all of it or nothing."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("archive", help="The .tar.gz export_org wrote.")
        parser.add_argument("--slug", required=True, help="The new organisation's slug (it must be free).")
        parser.add_argument("--name", default="", help="Its name (default: the archive's).")
        parser.add_argument("--plan", default=None, help="The plan of its account (default: BRAIN_DEFAULT_PLAN).")

    def handle(self, *args: Any, **opts: Any) -> None:
        try:
            done = import_organisation(
                path=Path(opts["archive"]), slug=opts["slug"], name=opts["name"], plan=opts["plan"]
            )
        except DomainError as e:
            raise CommandError(e.message) from None
        for name, count in sorted(done.counts.items()):
            self.stdout.write(f"{count:>9}  {name}")
        self.stdout.write(
            f"imported as {done.org.slug}: {done.people_matched} people matched by e-mail, "
            f"{done.people_created} made as inactive accounts without a password"
        )
