import json
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from brain.infra.health import run_checks


class Command(BaseCommand):
    help = "Check the database, Redis, the queue's workers and the model; exit 1 when any is down."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--json", action="store_true", help="Print JSON")
        parser.add_argument("--only", default="", help="Comma-separated check names")

    def handle(self, *args: Any, **opts: Any) -> None:
        results = run_checks([n for n in opts["only"].split(",") if n] or None)
        if opts["json"]:
            self.stdout.write(json.dumps([r.__dict__ for r in results]))
        else:
            for r in results:
                self.stdout.write(f"{'ok  ' if r.ok else 'DOWN'} {r.name:<10} {r.ms:>7.1f} ms  {r.detail}")
        if not all(r.ok for r in results):
            raise SystemExit(1)
