from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from brain.core.errors import DomainError
from brain.models import Organisation
from usage.selectors import get_usage
from usage.services import add_credits, change_plan


class Command(BaseCommand):
    help = "Show an organisation's plan and credits, add credits (negative to take away), or change its plan."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--org", required=True, help="Organisation slug")
        actions = parser.add_subparsers(dest="action", required=True)
        actions.add_parser("show", help="the plan, this month's reads and the credits left")
        add = actions.add_parser("add", help="add N credits; waiting knowledge starts ingesting")
        add.add_argument("amount", type=int)
        plan = actions.add_parser("plan", help="move the organisation to another plan")
        plan.add_argument("slug")

    def handle(self, *args: Any, **opts: Any) -> None:
        org = Organisation.objects.filter(slug=opts["org"]).first()
        if org is None:
            raise CommandError(f"No organisation {opts['org']!r}.")
        try:
            if opts["action"] == "add":
                balance = add_credits(actor=None, org=org, amount=opts["amount"])
                self.stdout.write(f"{org.slug}: {opts['amount']:+,} credits; balance {balance:,}")
            elif opts["action"] == "plan":
                change_plan(actor=None, org=org, plan=opts["slug"])
        except DomainError as exc:
            raise CommandError(exc.message) from None
        self._show(org)

    def _show(self, org: Organisation) -> None:
        usage = get_usage(org=org)
        free = (
            "unlimited" if usage.unlimited else f"{usage.free_left:,} of {usage.monthly_free_reads:,} free reads left"
        )
        self.stdout.write(
            f"{org.slug}: plan {usage.plan_name} ({usage.plan}); {usage.month:%Y-%m}: {usage.reads:,} reads, {free}, "
            f"{usage.credits:,} credits ({usage.credits_spent:,} spent this month); renews {usage.renews_at:%Y-%m-%d}"
        )
