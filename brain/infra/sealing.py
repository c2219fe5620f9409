"""Secrets kept at rest: connection credentials and single sign-on client secrets.

Keys come from ``BRAIN_CONNECTOR_KEYS`` (comma-separated Fernet keys, newest first): the first
encrypts, every one decrypts, so a key is rotated by putting a new one first, running
``manage.py rotate_connector_keys`` and then dropping the old one. Without the setting, one key is
derived from ``SECRET_KEY``, so a single machine works out of the box; changing ``SECRET_KEY``
then makes stored credentials unreadable (each connection says so and asks for them again).

A connection's webhook secret (what a source signs its deliveries with) and an organisation's
single sign-on client secret are sealed the same way, as text rather than a mapping, and rotated
by the same command.
"""

from __future__ import annotations

import base64
import hashlib
import json
from typing import Any

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from django.conf import settings


class CredentialsUnreadable(Exception):
    """Stored credentials that no configured key opens."""


def _keys() -> MultiFernet:
    configured = [key.strip() for key in settings.BRAIN_CONNECTOR_KEYS if key.strip()]
    if not configured:
        digest = hashlib.sha256(b"brain connector credentials:" + settings.SECRET_KEY.encode()).digest()
        configured = [base64.urlsafe_b64encode(digest).decode()]
    return MultiFernet([Fernet(key) for key in configured])


def seal(credentials: dict[str, Any]) -> str:
    return _keys().encrypt(json.dumps(credentials).encode()).decode()


def unseal(sealed: str) -> dict[str, Any]:
    if not sealed:
        return {}
    try:
        return dict(json.loads(_keys().decrypt(sealed.encode())))
    except InvalidToken as exc:
        raise CredentialsUnreadable("no configured key opens these credentials") from exc


def reseal(sealed: str) -> str:
    """The same credentials under the newest key."""
    if not sealed:
        return sealed
    try:
        return _keys().rotate(sealed.encode()).decode()
    except InvalidToken as exc:
        raise CredentialsUnreadable("no configured key opens these credentials") from exc


def seal_secret(secret: str) -> str:
    return _keys().encrypt(secret.encode()).decode()


def unseal_secret(sealed: str) -> str:
    """The secret in a sealed text; "" for none."""
    if not sealed:
        return ""
    try:
        return _keys().decrypt(sealed.encode()).decode()
    except InvalidToken as exc:
        raise CredentialsUnreadable("no configured key opens this secret") from exc
