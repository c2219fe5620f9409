"""Seal every connection's credentials again under the newest of BRAIN_CONNECTOR_KEYS."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand
from django.db import transaction

from connectors.models import Connection
from connectors.sealing import CredentialsUnreadable, reseal


class Command(BaseCommand):
    help = "Re-encrypt connection credentials with the first key of BRAIN_CONNECTOR_KEYS."

    def handle(self, *args: Any, **options: Any) -> None:
        done, unreadable = 0, []
        with transaction.atomic():
            for connection in Connection.objects.select_for_update().exclude(sealed_credentials=""):
                try:
                    connection.sealed_credentials = reseal(connection.sealed_credentials)
                except CredentialsUnreadable:
                    unreadable.append(connection.name)
                    continue
                connection.save(update_fields=["sealed_credentials"])
                done += 1
        self.stdout.write(f"{done} connection(s) sealed with the newest key.")
        if unreadable:
            self.stdout.write(f"No configured key opens these; paste their credentials again: {', '.join(unreadable)}")
