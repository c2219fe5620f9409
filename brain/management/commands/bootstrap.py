from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser

from brain.core.services import bootstrap


class Command(BaseCommand):
    help = "Make sure a first organisation, its admin and a read-write token exist (safe to run again)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--org", default="acme", help="Organisation slug (default: acme)")
        parser.add_argument("--org-name", default="Acme", help="Organisation name for a new organisation")
        parser.add_argument("--admin", default="admin", help="Admin username (default: admin)")
        parser.add_argument("--email", default="admin@example.com", help="Admin email for a new admin")
        parser.add_argument("--base-url", default=settings.BRAIN_BASE_URL, help="Where Brain is reached")

    def handle(self, *args: Any, **opts: Any) -> None:
        result = bootstrap(
            org_slug=opts["org"], org_name=opts["org_name"], admin_username=opts["admin"], admin_email=opts["email"]
        )
        base = opts["base_url"].rstrip("/")
        out = self.stdout
        out.write(f"Brain:        {base}/  (open it in a browser and log in)")
        out.write(f"Organisation: {result.org.name} ({result.org.slug})")
        if result.admin_password:
            out.write(f"Admin login:  {base}/admin/  user {result.admin.username}  password {result.admin_password}")
        else:
            out.write(f"Admin login:  {base}/admin/  user {result.admin.username} (password set at first start)")
            out.write(
                "              Lost it? ./brainctl credentials --reset makes a new one "
                f"(or: ./brainctl manage changepassword {result.admin.username})"
            )
        if result.token:
            out.write(f"MCP URL:      {base}/mcp")
            out.write(f"Token:        {result.token.plaintext}")
            out.write("              (shown once; stored hashed. More tokens: Connect page or manage.py create_token)")
        else:
            out.write(f"MCP URL:      {base}/mcp  (tokens: {base}/connect/ or manage.py create_token)")
