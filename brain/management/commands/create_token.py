from typing import Any

from django.contrib.auth.models import User
from django.core.management.base import BaseCommand, CommandError, CommandParser

from brain.core.errors import DomainError
from brain.core.services import create_token
from brain.models import Organisation


class Command(BaseCommand):
    help = "Issue an API token for a member of an organisation; prints only the token."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--org", required=True, help="Organisation slug")
        parser.add_argument("--email", required=True, help="Email of the member the token acts as")
        parser.add_argument("--scopes", default="read", help="read or read,write (default: read)")
        parser.add_argument("--expires", type=int, default=None, help="Days until it expires (default: never)")
        parser.add_argument("--name", default="", help="A label for the token")

    def handle(self, *args: Any, **opts: Any) -> None:
        org = Organisation.objects.filter(slug=opts["org"]).first()
        if org is None:
            raise CommandError(f"No organisation with slug {opts['org']!r}.")
        user = User.objects.filter(email__iexact=opts["email"]).order_by("pk").first()
        if user is None:
            raise CommandError(f"No user with email {opts['email']!r}.")
        scopes = [s.strip() for s in opts["scopes"].split(",") if s.strip()]
        try:
            issued = create_token(org=org, user=user, scopes=scopes, name=opts["name"], expires_in_days=opts["expires"])
        except DomainError as exc:
            raise CommandError(exc.message) from None
        self.stdout.write(issued.plaintext)
