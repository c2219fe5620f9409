import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from brain.models import Organisation
from memory.embedding import get_embedder
from memory.services import reembed_chunks


class Command(BaseCommand):
    help = "Recompute every chunk's embedding with the configured embedder (after changing BRAIN_EMBEDDER)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--org", help="Only this organisation")

    def handle(self, *args: Any, **opts: Any) -> None:
        org = None
        if opts["org"]:
            org = Organisation.objects.filter(slug=opts["org"]).first()
            if org is None:
                raise CommandError(f"No organisation with slug {opts['org']!r}.")
        started = time.perf_counter()
        done = reembed_chunks(org=org)
        seconds = time.perf_counter() - started
        self.stdout.write(f"re-embedded {done} chunks with {get_embedder().name} in {seconds:.1f} s")
