"""An authorisation code after it reaches the token endpoint: it works once, for the client,
redirect address and verifier it was issued for, and never again.

- A successful exchange is recorded with the token family it began (``record_spent``).
- A failed exchange ends the code, whichever client presented it (``end_code``): a wrong
  verifier, redirect address or client gets no second try.
- A code presented after its exchange is refused, and ends every token issued from that
  exchange and every token refreshed from those (RFC 6749 section 4.1.2): someone else held it.

``exchanging`` runs one exchange of a code at a time, so two requests racing with one code
cannot both be given tokens.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

from django.db import transaction
from django.db.models import Exists, OuterRef
from oauth2_provider.models import Grant, RefreshToken

from brain.models import SpentCode


def _checksum(code: str) -> str:
    return hashlib.sha256(code.encode()).hexdigest()


@contextmanager
def exchanging(code: str) -> Iterator[None]:
    """A transaction holding the code's row, when it has one, until the exchange is answered."""
    with transaction.atomic():
        list(Grant.objects.select_for_update().filter(code=code).values_list("pk", flat=True))
        yield


def record_spent(*, code: str, token_family: uuid.UUID | None) -> None:
    """Remember that ``code`` was exchanged and which family of tokens it began."""
    if token_family is not None:
        SpentCode.objects.create(code_checksum=_checksum(code), token_family=token_family)


def end_code(code: str) -> None:
    """After a failed exchange: the code works no more, and when it had been exchanged before,
    the tokens of that exchange end too."""
    Grant.objects.filter(code=code).delete()
    family = SpentCode.objects.filter(code_checksum=_checksum(code)).values_list("token_family", flat=True).first()
    if family is not None:
        RefreshToken.revoke_family(family)


def forget_spent() -> int:
    """Nightly: spent codes whose tokens are all gone, as nothing is left for a replay to end."""
    alive = RefreshToken.objects.filter(token_family=OuterRef("token_family"))
    deleted, _per_model = SpentCode.objects.filter(~Exists(alive)).delete()
    return deleted
