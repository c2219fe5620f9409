"""Argument limits shared by every tool: numbers are clamped, texts are cut or refused.

- ``Clamped(lo, hi)``: a whole number outside the range moves to the nearest bound.
- ``Cut(n)``: text longer than ``n`` characters is cut to ``n``.
- ``Field(max_length=n)``: text longer than ``n`` is refused with a message naming the field.
- ``NonBlank``: text that is more than spaces (a name, an entity); blank is refused.
- ``IsoDay``: a calendar day written YYYY-MM-DD; other shapes (timestamps, "30 June") are refused.
- ``Moment``: a date and time that Python, Django and PostgreSQL can all hold once in UTC
  (``9999-12-31T23:59:59-12:00`` is already year 10000 there, so it is refused); naive means UTC.

Whole numbers sent as text are read from ASCII digits only (``brain.core.inputs.whole_number``).

Ranges are stated in the field descriptions rather than as JSON Schema bounds, because a
client that validates against ``minimum``/``maximum`` would refuse what Brain clamps.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime
from typing import Annotated, Any

from pydantic import AfterValidator, BeforeValidator, ValidationError

from brain.core.inputs import whole_number


def _clamp(lo: int, hi: int) -> Any:
    def clamp(value: Any) -> Any:
        if isinstance(value, bool):
            raise ValueError("must be a whole number, not true or false")
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, str):
            # Only ASCII digits: left to pydantic, "1_000" would become 1000 past the clamp.
            if (number := whole_number(value)) is None:
                raise ValueError("must be a whole number written in ASCII digits")
            value = number
        if isinstance(value, int):
            return min(hi, max(lo, value))
        return value

    return clamp


def Clamped(lo: int, hi: int) -> BeforeValidator:  # noqa: N802 - reads like a type
    return BeforeValidator(_clamp(lo, hi))


def clamp(value: int, lo: int, hi: int) -> int:
    return min(hi, max(lo, value))


def _cut(limit: int) -> Any:
    def cut(value: Any) -> Any:
        if isinstance(value, str) and len(value) > limit:
            return value[:limit]
        return value

    return cut


def Cut(limit: int) -> BeforeValidator:  # noqa: N802 - reads like a type
    return BeforeValidator(_cut(limit))


def _within_calendar(value: datetime) -> datetime:
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    try:
        return value.astimezone(UTC)
    except OverflowError:
        raise ValueError("the moment is outside the calendar once in UTC (years 1 to 9999)") from None


Moment = Annotated[datetime, AfterValidator(_within_calendar)]


def _iso_day(value: Any) -> Any:
    if isinstance(value, str) and not _ISO_DAY.fullmatch(value):
        raise ValueError("must be an ISO date, YYYY-MM-DD")
    if not isinstance(value, str | date) or isinstance(value, datetime):
        raise ValueError("must be an ISO date written as text, YYYY-MM-DD")
    return value


_ISO_DAY = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", re.ASCII)
IsoDay = Annotated[date, BeforeValidator(_iso_day)]


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be blank")
    return value


NonBlank = Annotated[str, AfterValidator(_not_blank)]


def describe_validation_error(tool: str, error: ValidationError) -> str:
    """One readable paragraph a model can act on: which argument, what is wrong, what to send."""
    parts = []
    for item in error.errors():
        field = ".".join(str(p) for p in item["loc"]) or "arguments"
        kind, ctx = item["type"], item.get("ctx") or {}
        if kind == "missing":
            parts.append(f"'{field}' is required")
        elif kind == "extra_forbidden":
            parts.append(f"'{field}' is not an argument of {tool}")
        elif kind == "string_too_long":
            got = len(item["input"]) if isinstance(item.get("input"), str) else "too many"
            parts.append(
                f"'{field}' has {got} characters; the limit is {ctx.get('max_length')} "
                "and longer text is refused, not cut"
            )
        elif kind == "string_too_short":
            parts.append(f"'{field}' must not be empty")
        elif kind == "value_error":
            parts.append(f"'{field}': {item['msg'].removeprefix('Value error, ')}")
        elif kind in ("literal_error", "enum"):
            parts.append(f"'{field}' must be one of {ctx.get('expected', 'the listed values')}")
        else:
            parts.append(f"'{field}': {item['msg']}")
    return f"Invalid arguments for {tool}: " + "; ".join(parts) + ". Fix the arguments and call again."
