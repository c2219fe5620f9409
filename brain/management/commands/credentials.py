from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connection

from brain.core.accounts import reset_password
from brain.models import ApiToken, Membership, Organisation

# A password is never shown again: Brain keeps only its hash. This is how an operator sets a new one.
HOW_TO_RESET = "./brainctl credentials --reset  (or: ./brainctl manage changepassword {user})"
HOW_TO_ISSUE = "./brainctl manage create_token --org {org} --email {email} --scopes read,write"


class Command(BaseCommand):
    help = (
        "Show the first organisation, its admins and their tokens again, and how to set a new password "
        "or make a new token. Prints no secret: passwords and tokens are stored hashed, except the new "
        "password --reset makes, shown once."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--base-url", default=settings.BRAIN_BASE_URL, help="Where Brain is reached")
        parser.add_argument(
            "--reset",
            action="store_true",
            help="Make a new password for the first admin (or --user), print it once and keep only its hash",
        )
        parser.add_argument("--user", default="", help="With --reset: the admin whose password to replace")

    def handle(self, *args: Any, **opts: Any) -> None:
        base = opts["base_url"].rstrip("/")
        out = self.stdout
        out.write(f"Brain:        {base}/  (open it in a browser and log in)")
        if Organisation._meta.db_table not in connection.introspection.table_names():
            out.write("Organisation: none yet: the database is not set up. ./brainctl run sets it up and makes them.")
            return
        org = Organisation.objects.order_by("created_at", "pk").first()
        if org is None:
            out.write("Organisation: none yet; ./brainctl run makes the first one (or: ./brainctl manage bootstrap)")
            return
        others = Organisation.objects.exclude(pk=org.pk).count()
        more = f"  and {others} more (listed in the admin)" if others else ""
        out.write(f"Organisation: {org.name} ({org.slug}){more}")
        admins = [m.user for m in Membership.objects.filter(org=org, role=Membership.ADMIN).select_related("user")]
        admins.sort(key=lambda user: (not user.is_superuser, user.pk))
        names = ", ".join(f"{u.username}{' (operator)' if u.is_superuser else ''}" for u in admins) or "none"
        out.write(f"Admin login:  {base}/admin/  users: {names}")
        first = admins[0].username if admins else "<user>"
        if opts["reset"]:
            self._reset(admins, opts["user"] or first)
        else:
            out.write(
                "Password:     not shown: only its hash is kept, so the first password cannot be shown again.\n"
                f"              To make a new one: {HOW_TO_RESET.format(user=first)}"
            )
        out.write(f"MCP URL:      {base}/mcp")
        tokens = [t for t in ApiToken.objects.filter(org=org, user__in=admins).select_related("user") if t.is_active]
        for n, token in enumerate(tokens):
            label = "Tokens:" if n == 0 else ""
            out.write(f"{label:<14}{token} of {token.user.username}, {','.join(token.scopes)}")
        if not tokens:
            out.write("Tokens:       none active")
        email = admins[0].email if admins and admins[0].email else "<email>"
        out.write(
            "              A token is shown once, when it is made, and stored hashed. A new one:\n"
            f"              {base}/connect/ (Connect an assistant), or\n"
            f"              {HOW_TO_ISSUE.format(org=org.slug, email=email)}"
        )

    def _reset(self, admins: list[User], username: str) -> None:
        """A new password for the named admin of the first organisation, shown this once."""
        user = next((admin for admin in admins if admin.username == username), None)
        if user is None:
            names = ", ".join(admin.username for admin in admins) or "none"
            raise CommandError(f"{username} is not an admin of the first organisation (its admins: {names}).")
        password = reset_password(user=user)
        self.stdout.write(f"Password:     {password}  (new, for {user.username}; the old one no longer works)")
        self.stdout.write("              Shown once: only its hash is kept. Change it on your Account page.")
