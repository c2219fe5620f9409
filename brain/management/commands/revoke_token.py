from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from brain.core.actors import Actor
from brain.core.services import hash_token, revoke_token
from brain.models import ApiToken


class Command(BaseCommand):
    help = "Revoke a token, given the token itself or its prefix (the 8 characters after brn_)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("token", help="The token, or its prefix")

    def handle(self, *args: Any, **opts: Any) -> None:
        value = opts["token"].strip()
        if value.startswith("brn_") and len(value) > 20:
            matches = ApiToken.objects.filter(hashed=hash_token(value))
        else:
            matches = ApiToken.objects.filter(prefix=value.removeprefix("brn_"))
        if matches.count() != 1:
            raise CommandError("No single token matches; give the whole token or a unique prefix.")
        token = matches.get()
        operator = Actor(org=token.org, user=token.user, role="admin", via="command")
        revoke_token(actor=operator, token_id=token.pk)
        self.stdout.write(f"revoked {token} of {token.user} in {token.org.slug}")
