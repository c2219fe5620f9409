import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from brain.models import Organisation
from registers.common import REGISTERS, switched_on
from registers.nightly import run_nightly


class Command(BaseCommand):
    help = "Run the registers' nightly work now for one organisation: registers scan --org SLUG [--only NAME]."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("action", choices=["scan"])
        parser.add_argument("--org", required=True, help="The organisation's slug")
        parser.add_argument("--only", choices=REGISTERS, help="Just this register")
        parser.add_argument("--no-progress", action="store_true")

    def handle(self, *args: Any, **opts: Any) -> None:
        org = Organisation.objects.filter(slug=opts["org"]).first()
        if org is None:
            raise CommandError(f"No organisation with slug {opts['org']!r}.")
        on = switched_on(org)
        wanted = {opts["only"]} if opts["only"] else on
        if not wanted & on:
            raise CommandError(
                f"{', '.join(sorted(wanted)) or 'No register'} is switched off for {org.slug}; "
                "switch it on in the admin (Organisation, Features) first."
            )
        started = time.perf_counter()
        with tqdm(unit="row", disable=opts["no_progress"], file=self.stderr) as bar:
            done = run_nightly(org, only=opts["only"], progress=bar.update)
        if done.get("busy"):
            raise CommandError(f"Another run for {org.slug} is under way; try again when it ends.")
        counts = ", ".join(f"{n} {what}" for what, n in done.items())
        self.stdout.write(f"{org.slug}: {counts} in {time.perf_counter() - started:.1f} s")
