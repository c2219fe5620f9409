from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from brain.core.backups import BackupError, back_up, backup_folder


class Command(BaseCommand):
    help = (
        "Write one backup archive (the database, Brain's files and a manifest with checksums) while Brain "
        "keeps serving. Secrets are named in the manifest, never copied: keep SECRET_KEY and "
        "BRAIN_CONNECTOR_KEYS safe yourself."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--output",
            type=Path,
            help="A folder to write the archive into, or a file name ending in .tar "
            "(default: BRAIN_BACKUP_DIR, else backups/ in the data folder).",
        )

    def handle(self, *args: Any, **opts: Any) -> None:
        try:
            made = back_up(into=opts["output"] or backup_folder())
        except BackupError as error:
            raise CommandError(str(error)) from None
        migrations = len(made.manifest["brain"]["migrations"])
        self.stdout.write(f"backup written: {made.path} ({made.size:,} bytes, {migrations} migrations applied)")
