from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from brain.core.backups import BackupError, restore


class Command(BaseCommand):
    help = (
        "Restore a backup archive onto an empty database, then migrate it to this code. Refuses an archive "
        "from a newer Brain, one cut short or changed, and a database that already holds data."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("archive", type=Path, help="The .tar file `backup` wrote.")
        parser.add_argument(
            "--into-existing",
            action="store_true",
            help="Delete everything in the database first and put the archive in its place.",
        )

    def handle(self, *args: Any, **opts: Any) -> None:
        try:
            restored = restore(opts["archive"], replace=opts["into_existing"])
        except BackupError as error:
            raise CommandError(str(error)) from None
        made = restored.manifest
        self.stdout.write(
            f"restored {opts['archive']} (made {made['created_at']}): {restored.organisations} "
            f"organisation{'' if restored.organisations == 1 else 's'}"
        )
        if restored.migrated:
            self.stdout.write(f"migrated to this code: {', '.join(restored.migrated)}")
        for warning in restored.warnings:
            self.stderr.write(f"warning: {warning}")
