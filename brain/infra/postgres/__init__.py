"""Brain's database backend (``base``), and the cursor the fixed statements of every call use."""

from __future__ import annotations

from django.db import connections
from django.db.backends.utils import CursorWrapper


def prepared_cursor(alias: str) -> CursorWrapper:
    """A cursor on ``alias`` whose statements Postgres plans once per connection (``base``)."""
    return connections[alias].prepared_cursor()  # type: ignore[attr-defined]
