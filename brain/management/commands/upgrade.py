from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from brain.core.backups import BackupError, upgrade


class Command(BaseCommand):
    help = "Back up, then apply this code's migrations. With nothing to migrate it does nothing."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--output",
            type=Path,
            help="Where the backup goes (default: BRAIN_BACKUP_DIR, else backups/ in the data folder).",
        )

    def handle(self, *args: Any, **opts: Any) -> None:
        try:
            done = upgrade(into=opts["output"])
        except BackupError as error:
            raise CommandError(str(error)) from None
        if not done.migrated:
            self.stdout.write("nothing to migrate: the database is up to date with this code")
            return
        if done.backup:
            self.stdout.write(f"backup written first: {done.backup.path} ({done.backup.size:,} bytes)")
        self.stdout.write(f"migrated: {', '.join(done.migrated)}")
