from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from memory.index.org_indexes import KINDS, TABLES, present, sync_org_indexes


class Command(BaseCommand):
    help = (
        "Build the vector index of every organisation with at least BRAIN_ORG_INDEX_ROWS passages "
        "or facts, and drop those of deleted organisations (beat does this every ten minutes). "
        "Writes go on during the build."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--list", action="store_true", help="Only list the indexes there are")

    def handle(self, *args: Any, **opts: Any) -> None:
        if not opts["list"]:
            report = sync_org_indexes()
            if report.skipped:
                self.stdout.write("Another sync is running; nothing done.")
                return
            for name in report.created:
                self.stdout.write(f"built {name}")
            for name in report.dropped:
                self.stdout.write(f"dropped {name}")
        for table in TABLES:
            counts = []
            for kind in KINDS:
                have = present(table, kind)
                invalid = len(have) - sum(have.values())
                counts.append(f"{sum(have.values())} {kind}" + (f" ({invalid} invalid)" if invalid else ""))
            self.stdout.write(f"{table}: organisation indexes: {', '.join(counts)}")
