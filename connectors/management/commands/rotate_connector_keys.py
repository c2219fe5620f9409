"""Seal every connection's credentials and webhook secret again under the newest of
BRAIN_CONNECTOR_KEYS."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand
from django.db import transaction

from brain.sso.provider import reseal_client_secrets
from connectors.models import Connection
from connectors.sealing import CredentialsUnreadable, reseal

# Each sealed column, and what to do when no key opens it.
SEALED = {
    "sealed_credentials": "paste their credentials again",
    "sealed_webhook_secret": "put back the key their webhook secret was sealed with, or add them again",
}


class Command(BaseCommand):
    help = (
        "Re-encrypt connection credentials, webhook secrets and single sign-on client secrets with the "
        "first key of BRAIN_CONNECTOR_KEYS."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        done = 0
        unreadable: dict[str, list[str]] = {column: [] for column in SEALED}
        with transaction.atomic():
            for connection in Connection.objects.select_for_update():
                resealed = []
                for column in SEALED:
                    try:
                        setattr(connection, column, reseal(getattr(connection, column)))
                    except CredentialsUnreadable:
                        unreadable[column].append(connection.name)
                        continue
                    resealed.append(column)
                connection.save(update_fields=resealed)
                done += len(resealed) == len(SEALED)
        self.stdout.write(f"{done} connection(s) sealed with the newest key.")
        for column, names in unreadable.items():
            if names:
                self.stdout.write(
                    f"No configured key opens the {column.removeprefix('sealed_').replace('_', ' ')} "
                    f"of these; {SEALED[column]}: {', '.join(names)}"
                )
        sso_done, sso_unreadable = reseal_client_secrets()
        self.stdout.write(f"{sso_done} single sign-on client secret(s) sealed with the newest key.")
        if sso_unreadable:
            self.stdout.write(
                "No configured key opens the single sign-on client secret of these organisations; paste it "
                f"again in the admin (Single sign-on): {', '.join(sso_unreadable)}"
            )
