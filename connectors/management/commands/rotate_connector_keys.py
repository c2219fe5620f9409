"""Seal every connection's credentials and webhook secret again under the newest of
BRAIN_CONNECTOR_KEYS."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand
from django.db import transaction

from connectors.models import Connection
from connectors.sealing import CredentialsUnreadable, reseal

SEALED = ("sealed_credentials", "sealed_webhook_secret")


class Command(BaseCommand):
    help = "Re-encrypt connection credentials and webhook secrets with the first key of BRAIN_CONNECTOR_KEYS."

    def handle(self, *args: Any, **options: Any) -> None:
        done, unreadable = 0, []
        with transaction.atomic():
            for connection in Connection.objects.select_for_update():
                try:
                    for column in SEALED:
                        setattr(connection, column, reseal(getattr(connection, column)))
                except CredentialsUnreadable:
                    unreadable.append(connection.name)
                    continue
                connection.save(update_fields=list(SEALED))
                done += 1
        self.stdout.write(f"{done} connection(s) sealed with the newest key.")
        if unreadable:
            self.stdout.write(
                "No configured key opens the credentials or webhook secret of these; paste their credentials "
                f"again: {', '.join(unreadable)}"
            )
