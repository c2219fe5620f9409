from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from brain.models import Organisation
from brain.portability.exporting import export_organisation


class Command(BaseCommand):
    help = (
        "Write an organisation's knowledge to a portable archive (.tar.gz of JSON Lines; docs/operations.md, "
        "'Export and import'). No tokens, passwords or credentials are written."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--org", required=True, help="The organisation's slug.")
        parser.add_argument("--out", help="Where to write the archive (default: <slug>-<date>.tar.gz here).")

    def handle(self, *args: Any, **opts: Any) -> None:
        org = Organisation.objects.filter(slug=opts["org"]).first()
        if org is None:
            raise CommandError(f"No organisation with the slug {opts['org']!r}.")
        target = Path(opts["out"] or f"{org.slug}-{timezone.now():%Y%m%d-%H%M%S}.tar.gz")
        if target.exists():
            raise CommandError(f"{target} exists already; choose another --out.")
        if not target.name.endswith(".tar.gz"):
            raise CommandError("The archive's name must end in .tar.gz.")
        manifest = export_organisation(org=org, target=target)
        for name, count in sorted(manifest["counts"].items()):
            self.stdout.write(f"{count:>9}  {name}")
        self.stdout.write(f"wrote {target}")
