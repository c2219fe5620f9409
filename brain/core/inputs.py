"""What Brain accepts as input: one rule for every way in (MCP, REST, web forms, file ingestion).

PostgreSQL cannot store the NUL character (U+0000) in text or JSON, and text that is not valid
Unicode (an unpaired surrogate, U+D800 to U+DFFF) cannot be encoded to be stored at all. So:

- Arguments that contain either are refused with a message naming the field. Brain does not
  strip them: an id, title or query that changed silently is worse than a clear refusal.
- Text Brain extracts from files itself (PDF text, email bodies, chat exports) has NUL removed
  and unpaired surrogates replaced by U+FFFD (``storable``): whoever ingests a folder cannot fix
  what a parser produced.
- Inside free-form JSON (``metadata``, skill assets, lists of ids) numbers must be finite and
  whole numbers must fit in 64 bits; anything nested deeper than ``MAX_DEPTH`` is refused. A
  top-level number is left to its field: numeric limits are clamped there (``brain.mcp.limits``).
- Whole numbers written as text are read only from ASCII digits (``whole_number``): "²" and
  "٣" are not numbers to Brain, whatever ``str.isdigit`` and ``int`` think.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from brain.core.errors import InvalidArgument

MAX_DEPTH = 32
INT64_MAX = 2**63 - 1

_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")
_WHOLE_NUMBER = re.compile(r"\s*([+-]?)0*([0-9]+)\s*", re.ASCII)
_TOO_MANY_DIGITS = 19  # more digits than any 64-bit number has


def text_problem(text: str) -> str | None:
    """Why ``text`` cannot be stored, or None when it can."""
    found = _UNSTORABLE.search(text)
    if found is None:
        return None
    if found.group() == "\x00":
        return "contains a NUL character (U+0000), which Brain cannot store"
    return f"contains an unpaired surrogate (U+{ord(found.group()):04X}), which is not valid Unicode text"


def storable(text: str) -> str:
    """Extracted text made storable: NUL removed, unpaired surrogates replaced by U+FFFD."""
    return _UNSTORABLE.sub(lambda m: "" if m.group() == "\x00" else "\ufffd", text)


def storable_json(value: Any) -> Any:
    """``storable`` applied to every string (keys too) of a small JSON value built by a parser."""
    if isinstance(value, str):
        return storable(value)
    if isinstance(value, Mapping):
        return {storable(str(k)): storable_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [storable_json(v) for v in value]
    return value


def refuse_unstorable(arguments: Mapping[str, Any], *, what: str) -> None:
    """Raise InvalidArgument naming the first argument Brain cannot store or safely read.

    Walks the arguments without recursion, so a value nested 50,000 deep costs a loop, not a crash.
    """
    problem = first_problem(arguments)
    if problem is not None:
        path, reason = problem
        path = path if len(path) <= 80 else path[:77] + "..."
        raise InvalidArgument(f"Invalid arguments for {what}: '{path}' {reason}. Fix the arguments and call again.")


def first_problem(arguments: Mapping[str, Any]) -> tuple[str, str] | None:
    """The path of the first value Brain cannot take (``metadata.owner``, ``tags[2]``) and why."""
    for key in arguments:
        if isinstance(key, str) and (reason := text_problem(key)) is not None:
            return _key(key), f"is an argument name that {reason}"
    stack: list[tuple[str, Any, int]] = [(_key(k), v, 1) for k, v in reversed(list(arguments.items()))]
    while stack:
        path, value, depth = stack.pop()
        if (reason := _problem(value, depth)) is not None:
            return path, reason
        children: list[tuple[str, Any, int]] = []
        if isinstance(value, Mapping):
            for key, item in value.items():
                if isinstance(key, str) and (reason := text_problem(key)) is not None:
                    return f"{path}.{_key(key)}", f"has a key that {reason}"
                children.append((f"{path}.{_key(key)}", item, depth + 1))
        elif isinstance(value, list | tuple):
            children = [(f"{path}[{i}]", item, depth + 1) for i, item in enumerate(value)]
        stack.extend(reversed(children))
    return None


def _problem(value: Any, depth: int) -> str | None:
    if isinstance(value, str):
        return text_problem(value)
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return "must be a finite number (not NaN or infinity)"
    if isinstance(value, int) and depth > 1 and not -INT64_MAX - 1 <= value <= INT64_MAX:
        return f"is a whole number outside the 64-bit range (±{INT64_MAX:,})"
    if isinstance(value, Mapping | list | tuple) and depth > MAX_DEPTH:
        return f"is nested more than {MAX_DEPTH} levels deep"
    return None


def _key(key: object) -> str:
    text = str(key)
    shown = text.encode("unicode_escape").decode("ascii") if _UNSTORABLE.search(text) else text
    return shown if len(shown) <= 60 else shown[:57] + "..."


def whole_number(text: str) -> int | None:
    """An optionally signed whole number in ASCII digits, or None.

    More than 19 digits reads as ±10**19: outside every range, without asking ``int`` to parse
    thousands of digits (it refuses past 4,300).
    """
    match = _WHOLE_NUMBER.fullmatch(text)
    if match is None:
        return None
    sign, digits = -1 if match.group(1) == "-" else 1, match.group(2)
    return sign * (10**_TOO_MANY_DIGITS if len(digits) > _TOO_MANY_DIGITS else int(digits))


def checked_text(value: str | None, field: str, limit: int, *, required: bool = False) -> str:
    """A text argument of a service, trimmed, storable and within its limit; '' when absent and
    not ``required``. Refusals name the field."""
    text = (value or "").strip()
    if required and not text:
        raise InvalidArgument(f"{field} is required and cannot be blank.")
    if problem := text_problem(text):
        raise InvalidArgument(f"{field}: {problem}")
    if len(text) > limit:
        raise InvalidArgument(f"{field} is {len(text)} characters; at most {limit}.")
    return text
