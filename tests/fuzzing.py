"""Hypothesis strategies built from a tool's JSON input schema, hostile values included.

Every registered tool is fuzzed from its own ``input_schema()``, so a new tool is covered the day
it is registered. Each argument draws mostly values of its declared type (so calls get past
validation into the code behind it) and sometimes hostile ones: NUL and other control
characters, unpaired surrogates, digits of other scripts, ids that are almost right, numbers past
64 bits, non-finite floats, dates at the calendar's edges with extreme offsets, very long texts
and JSON nested deeper than Brain takes.
"""

from __future__ import annotations

import string
from typing import Any

from hypothesis import strategies as st

OFFSETS = ["+14:00", "-12:00", "Z", "+00:00", "-00:30", "+05:45"]
ID_PREFIXES = ["doc", "chunk", "mem", "ent", "con", "act", "req", "prf", "brn"]

CONTROL = "".join(chr(c) for c in [*range(0x00, 0x20), 0x7F, 0x85, 0x2028, 0x2029, 0x200B, 0x202E, 0xFEFF])
OTHER_DIGITS = "²³¹٠١٢٣٤٥٦٧٨٩۳०१२३੩౩๓᠓𝟎𝟗⑦"

HOSTILE_TEXT = [
    "", " ", "\x00", "a\x00b", "\ud800", "x\udfff", "\udbff\udc00", "\x01\x02\x1b[31m\x7f", "\u202eevil",
    "²", "٣", "١٢٣", "𝟗", "Ⅻ", "-1", "0", "9" * 30, "1e308", "NaN", "Infinity", "null", "true", "[]", "{}",
    "<div>" * 40, "' OR 1=1 --", "%s%(x)s{0}", "{{7*7}}", "../../etc/passwd", "\\", '"', "😀😀", "ǅİß",
    "\r\n\r\n", "\t", "a" * 5000, "#" * 300, "?" * 50, "& | ! ( ) : * '", "-- ; DROP TABLE x",
]  # fmt: skip
DAYS = [
    "0001-01-01", "9999-12-31", "0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-12:00",
    "9999-12-31T00:00:00-12:00", "0001-01-01T00:00:00Z", "2024-02-29", "2023-02-29", "2024-13-01", "0000-01-01",
    "10000-01-01", "٢٠٢٤-٠١-٠١", "2024-01-01T24:00:00", "+002024-01-01", "2024-1-1", "today", "2024-W01-1",
]  # fmt: skip
MOMENTS = [*DAYS, "9999-12-31T23:59:59.999999-12:00", "0001-01-01T00:00:00.000001+14:00", "2024-06-01T12:00:00+25:00"]
HUGE_INTEGERS = [2**31, 2**53 + 1, 2**63 - 1, 2**63, 2**64 + 5, -(2**63) - 1, 10**30, -(10**30), 10**400]
NUMBER_TEXTS = ["12", " 7 ", "-3", "²", "٣", "1_000", "1e3", "0x10", "9" * 30, "9" * 5000, "NaN", "inf", "1e400"]
ODD_FLOATS = [1e308, -1e308, 5e-324, -0.0, 2.5, 1.5e16, float(2**70)]


def text(*, storable: bool = False) -> st.SearchStrategy[str]:
    """Short text from any plane, leaning on control characters and digits of other scripts.

    ``storable`` leaves out NUL and unpaired surrogates, the two things Brain refuses in any text.
    """
    if storable:
        anything = st.characters(exclude_characters="\x00")
        odd = st.sampled_from(CONTROL.replace("\x00", "") + OTHER_DIGITS + string.ascii_letters + "_-")
        return st.one_of(st.text(anything, max_size=40), st.text(odd, max_size=20))
    anything = st.one_of(st.characters(), st.characters(), st.characters(categories=["Cs"]))
    odd = st.sampled_from(CONTROL + OTHER_DIGITS + string.ascii_letters + "_-")
    return st.one_of(st.text(anything, max_size=40), st.text(odd, max_size=20), st.sampled_from(HOSTILE_TEXT))


def long_text(limit: int | None) -> st.SearchStrategy[str]:
    """Texts at and just past a limit, from one repeated character (ASCII, accented, astral, NUL)."""
    sizes = [limit, limit + 1] if limit else [10_000, 250_000]
    return st.builds(lambda c, n: c * n, st.sampled_from(["x", "é", "😀", "\x00", " "]), st.sampled_from(sizes))


def ids(known: list[str]) -> st.SearchStrategy[str]:
    """Real ids of the fuzzed organisation and near misses of every prefix Brain hands out."""
    digits = st.one_of(
        st.integers(0, 10**6).map(str),
        st.sampled_from(["9" * 18, "9" * 19, "0" * 25, "-1", "", " 1", "1 "]),
        st.text(st.sampled_from(OTHER_DIGITS), min_size=1, max_size=4),
    )
    made = st.builds(lambda p, d: f"{p}_{d}", st.sampled_from(ID_PREFIXES), digits)
    real = st.sampled_from(known) if known else made
    mangled = st.builds(lambda i, extra: i + extra, real, st.sampled_from(["\x00", "²", "٣", " ", "_1", "x"]))
    return st.one_of(real, real, made, mangled)


def nested(depth: int) -> Any:
    value: Any = "bottom"
    for level in range(depth):
        value = [value] if level % 2 else {"k": value}
    return value


def json_values() -> st.SearchStrategy[Any]:
    """Free-form JSON with hostile leaves and keys, and values nested past Brain's limit."""
    leaves = st.one_of(st.none(), st.booleans(), st.integers(), st.sampled_from(HUGE_INTEGERS), st.floats(), text())
    tree = st.recursive(
        leaves, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(text(), inner, max_size=4), max_leaves=12
    )
    return st.one_of(tree, tree, st.sampled_from([nested(35), nested(120)]))


class SchemaStrategies:
    """Turns one JSON schema (with its ``$defs``) into a strategy for argument dictionaries.

    Most examples are plausible calls (every argument of its type, within its limits, edge values
    included), so they reach the code behind validation; others spoil one argument, and some are
    chaos: any argument hostile, unknown arguments added.
    """

    def __init__(self, schema: dict[str, Any], known_ids: list[str]) -> None:
        self.defs = {**schema.get("$defs", {})}
        self.known_ids = known_ids
        self.root = schema

    def arguments(self) -> st.SearchStrategy[dict[str, Any]]:
        return self._object(self.root, spoil=True)

    def _object(self, schema: dict[str, Any], *, spoil: bool) -> st.SearchStrategy[dict[str, Any]]:
        properties = schema.get("properties", {})
        required = set(schema.get("required", []))

        def shape(hostile: bool) -> st.SearchStrategy[dict[str, Any]]:
            def pick(name: str) -> st.SearchStrategy[Any]:
                return self.value(name, properties[name], hostile=hostile)

            return st.fixed_dictionaries(
                {name: pick(name) for name in properties if name in required},
                optional={name: pick(name) for name in properties if name not in required},
            )

        plausible = shape(hostile=False)
        if not spoil:
            return plausible
        chaos = st.builds(
            lambda known, other: {**other, **known},
            shape(hostile=True),
            st.dictionaries(text(), json_values(), max_size=2),
        )
        if not properties:
            return st.one_of(plausible, chaos)
        spoiled = st.sampled_from(sorted(properties)).flatmap(
            lambda name: st.builds(
                lambda base, bad: {**base, name: bad}, plausible, self.value(name, properties[name], hostile=True)
            )
        )
        return st.one_of(plausible, plausible, spoiled, spoiled, spoiled, chaos)

    def value(self, name: str, schema: dict[str, Any], *, hostile: bool) -> st.SearchStrategy[Any]:
        if "$ref" in schema:
            schema = self.defs[schema["$ref"].rsplit("/", 1)[-1]]
        if "anyOf" in schema:
            return st.one_of([self.value(name, option, hostile=hostile) for option in schema["anyOf"]])
        if hostile:
            return st.one_of(self._hostile(name, schema), self._hostile(name, schema), json_values())
        return self._plausible(name, schema)

    def _plausible(self, name: str, schema: dict[str, Any]) -> st.SearchStrategy[Any]:
        kind = schema.get("type")
        if "enum" in schema:
            return st.sampled_from(schema["enum"])
        if kind == "string":
            return self._string(name, schema)
        if kind == "integer":  # Brain clamps whole numbers, so any size is a fair call
            return st.one_of(
                st.integers(-5, 60), st.integers(), st.sampled_from(HUGE_INTEGERS), st.sampled_from(["12", "3"])
            )
        if kind == "number":
            return st.one_of(st.floats(allow_nan=False, allow_infinity=False), st.sampled_from(ODD_FLOATS))
        if kind == "boolean":
            return st.booleans()
        if kind == "array":
            return st.lists(
                self.value(name, schema.get("items", {}), hostile=False), max_size=min(schema.get("maxItems", 5), 5)
            )
        if kind == "object":
            if "properties" in schema:
                return self._object(schema, spoil=False)
            return st.dictionaries(
                text(storable=True), st.one_of(st.none(), st.integers(-10, 10), text(storable=True)), max_size=4
            )
        if kind == "null":
            return st.none()
        return json_values()

    def _hostile(self, name: str, schema: dict[str, Any]) -> st.SearchStrategy[Any]:
        kind = schema.get("type")
        if "enum" in schema or kind == "string":
            too_long = long_text(schema["maxLength"]) if "maxLength" in schema else long_text(None)
            extra = [ids(self.known_ids)] if self._is_id(name) else []
            return st.one_of(text(), too_long, st.sampled_from(DAYS + MOMENTS), *extra)
        if kind in ("integer", "number"):
            return st.one_of(
                st.floats(), st.sampled_from(NUMBER_TEXTS), st.sampled_from(ODD_FLOATS), st.booleans(), text()
            )
        if kind == "boolean":
            return st.sampled_from(["true", "false", 1, 0, "yes", None, 2.5])
        if kind == "array":
            most = schema.get("maxItems", 5)
            items = self.value(name, schema.get("items", {}), hostile=True)
            return st.one_of(st.lists(items, max_size=4), st.lists(items, min_size=most + 1, max_size=most + 2))
        if kind == "object":
            return st.one_of(
                st.dictionaries(text(), json_values(), max_size=4), st.sampled_from([nested(35), nested(120)])
            )
        return json_values()

    def _string(self, name: str, schema: dict[str, Any]) -> st.SearchStrategy[str]:
        limit, least = schema.get("maxLength"), schema.get("minLength", 0)
        if schema.get("format") == "date":
            return st.one_of(st.dates().map(str), st.sampled_from(DAYS[:6]))
        if schema.get("format") == "date-time":
            moments = st.builds(lambda d, o: d.isoformat() + o, st.datetimes(), st.sampled_from(OFFSETS))
            return st.one_of(moments, st.sampled_from(MOMENTS[:6]))
        if name == "slug":  # letters, digits and hyphens, as the description says (no pattern: Brain lowercases)
            return st.one_of(st.from_regex(r"[a-zA-Z0-9][a-zA-Z0-9-]{0,40}", fullmatch=True), text(storable=True))
        if "pattern" in schema:
            return st.from_regex(schema["pattern"], fullmatch=True).filter(
                lambda t: least <= len(t) <= (limit or len(t))
            )
        fitting = text(storable=True).filter(lambda t: least <= len(t) <= (limit or len(t)))
        at_limit = st.builds(lambda c: c * limit, st.sampled_from(["x", "é", "😀", " "])) if limit else fitting
        choices = [fitting, fitting, fitting, at_limit]
        if self._is_id(name):
            choices += [ids(self.known_ids).filter(lambda t: "\x00" not in t)] * 3
        return st.one_of(choices)

    @staticmethod
    def _is_id(name: str) -> bool:
        return name.endswith(("_id", "_ids")) or name in ("entity", "subject")
