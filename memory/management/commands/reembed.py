import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from brain.models import Organisation
from contacts.services import reembed_contact_topics
from memory.retrieval.embedding import get_embedder
from memory.retrieval.reembedding import reembed


class Command(BaseCommand):
    help = (
        "Recompute every vector (passages, facts, contact topics) with the configured embedder, "
        "after changing BRAIN_EMBEDDER; stop at any time and finish with --resume."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--org", help="Only this organisation")
        parser.add_argument(
            "--resume", action="store_true", help="Skip vectors the configured model already made (finish a switch)"
        )

    def handle(self, *args: Any, **opts: Any) -> None:
        org = None
        if opts["org"]:
            org = Organisation.objects.filter(slug=opts["org"]).first()
            if org is None:
                raise CommandError(f"No organisation with slug {opts['org']!r}.")
        started = time.perf_counter()
        done = reembed(org=org, resume=opts["resume"])
        done["contact topics"] = reembed_contact_topics(org=org, resume=opts["resume"])
        seconds = time.perf_counter() - started
        counts = ", ".join(f"{n} {kind}" for kind, n in done.items())
        self.stdout.write(f"re-embedded {counts} with {get_embedder().name} in {seconds:.1f} s")
