"""Public ids: one parser for every ``prefix_123`` id Brain hands out.

Only ASCII digits count, and at most 18 of them (every such number fits a 64-bit key):
``con_²`` and ``con_٣`` are not ids, although ``str.isdigit`` accepts both and ``int`` reads the
second as 3. Random ids (``act_``, ``req_``) are checked for their shape before any lookup.
"""

from __future__ import annotations

import re

_NUMERIC = re.compile(r"(?:([a-z]+)_)?([0-9]{1,18})", re.ASCII)
_RANDOM = re.compile(r"([a-z]+)_[0-9a-f]{8,36}", re.ASCII)


def parse_numeric_id(value: object, prefix: str, *, bare: bool = False) -> int | None:
    """``doc_12`` to 12 for ``prefix="doc"`` (and ``12`` too when ``bare``); None for anything else."""
    if not isinstance(value, str):
        return None
    match = _NUMERIC.fullmatch(value.strip())
    if match is None:
        return None
    given = match.group(1)
    if given != prefix and not (bare and given is None):
        return None
    return int(match.group(2))


def is_random_id(value: object, prefix: str) -> bool:
    """Whether ``value`` has the shape of a random id such as ``act_3f9c...`` or ``req_0a1b...``."""
    if not isinstance(value, str):
        return False
    match = _RANDOM.fullmatch(value)
    return match is not None and match.group(1) == prefix


def format_id(prefix: str, pk: int) -> str:
    """12 to ``doc_12`` for ``prefix="doc"``: the one way a public numeric id is written."""
    return f"{prefix}_{pk}"
