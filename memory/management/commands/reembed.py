import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from brain.models import Organisation
from memory.index.embedding import EMBEDDERS, EmbeddingError
from memory.maintenance.reembedding import ELSEWHERE, cancel_switch, describe, reembed, switch


class Command(BaseCommand):
    help = (
        "Recompute vectors. With --to, move organisations to another embedder while their old "
        "vectors keep serving searches until the new ones are all made; without it, recompute "
        "every vector with each organisation's own embedder. Stop at any time; run again to finish."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--org", help="Only this organisation (by default every one)")
        parser.add_argument("--to", choices=EMBEDDERS, help="Switch to this embedder without downtime")
        parser.add_argument("--cancel", action="store_true", help="Stop a switch under way and drop its vectors")
        parser.add_argument(
            "--resume", action="store_true", help="Without --to: skip vectors the organisation's model already made"
        )
        parser.add_argument("--status", action="store_true", help="Only say which embedder serves each organisation")

    def handle(self, *args: Any, **opts: Any) -> None:
        orgs = list(Organisation.objects.order_by("pk"))
        if opts["org"]:
            orgs = [o for o in orgs if o.slug == opts["org"]]
            if not orgs:
                raise CommandError(f"No organisation with slug {opts['org']!r}.")
        if opts["status"]:
            for org in orgs:
                self.stdout.write(describe(org))
            return
        for org in orgs:
            started = time.perf_counter()
            try:
                if opts["cancel"]:
                    stopped = cancel_switch(org=org)
                    self.stdout.write(f"{org.slug}: " + ("switch cancelled" if stopped else "no switch under way"))
                    continue
                if opts["to"]:
                    done = switch(org=org, to=opts["to"])
                else:
                    done = reembed(org=org, resume=opts["resume"])
                    for kept in ELSEWHERE:
                        done[kept.name] = kept.reembed(org, opts["resume"])
            except EmbeddingError as exc:
                raise CommandError(f"{org.slug}: {exc}; nothing was switched, the old vectors still serve.") from exc
            seconds = time.perf_counter() - started
            counts = ", ".join(f"{n} {kind}" for kind, n in done.items())
            self.stdout.write(f"{describe(org)}; re-embedded {counts} in {seconds:.1f} s")
