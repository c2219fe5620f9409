"""Cases for the isolation matrix, generated from the tool registry, the prompts and the REST schema.

Every argument is built from its JSON schema and its name: free text gets each probe word for
word; id fields (``*_id``, ``*_ids``, ``entity``) get every hidden id of their kind, visible ids
and a missing one; hidden names (external ids, skill slugs, file paths, repositories, categories,
activities) go where their field takes them; flags and choices are varied one at a time. A field
the generator does not understand stops the run with its name: a new tool is covered, or loudly
not covered, without editing the tests.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from functools import cache
from typing import Any

from brain.mcp.registry import PROMPTS, TOOLS

OMIT = object()


class CannotBuild(Exception):
    """The generator met an argument it cannot fill; extend it rather than skip the tool."""


@dataclass(frozen=True)
class Ref:
    """An id or name filled in per organisation: a hidden one (in A or B), a visible one, or one that
    exists nowhere. In the twin, hidden numbered ids become missing ones; names stay as they are."""

    kind: str  # doc, chunk, mem, ent, con | ext, ext-source, title, content, slug, path, repo, category, act
    which: str  # hidden, visible, missing
    key: Any


@dataclass(frozen=True)
class Target:
    name: str  # tool:x, prompt:x, or rest:METHOD /path
    schema: dict[str, Any]
    root: dict[str, Any]  # where "$ref"s resolve
    tool: str | None = None
    method: str | None = None
    path: str | None = None


@dataclass(frozen=True)
class Case:
    target: Target
    label: str
    args: dict[str, Any]


@dataclass(frozen=True)
class Pool:
    """How many refs of each kind there are (the same counts in A and its twin)."""

    hidden: dict[str, int]  # numbered and literal kinds
    visible: dict[str, list[Any]]  # keys common to A and the twin


# Probes: every secret word, word for word, a few hidden names and titles, and words Mira may see.
ANCHOR = "Quorvane"
SECRET_PROBES = ("Zorblatt", "Vexmoor", "Kelpfire", "Helena", "Nightjar", "Ostrava", "Thistlewood", "Marrowgate",
                 "Glimmerwick", "Saltmarsh", "Quillmarsh", "Ferrovane", "Wrenfield", "4,200,000", "Helena Quorvane",
                 "Vexmoor Labs", "Thistlewood offer", "Quillmarsh Desk")  # fmt: skip
VISIBLE_PROBES = (ANCHOR, "Brackwater Mill", "loading dock", "src/billing/totals.py")
PROBES = SECRET_PROBES + VISIBLE_PROBES
COMBINED = (
    "Zorblatt Vexmoor Labs Kelpfire Helena Quorvane Nightjar Ostrava Thistlewood Marrowgate Glimmerwick "
    "Saltmarsh Quillmarsh Ferrovane Wrenfield Brackwater Mill"
)
REST_PROBES = (COMBINED, "Helena Quorvane", ANCHOR, "src/billing/totals.py")

NUMBERED = {"document_id": "doc", "document_ids": "doc", "chunk_id": "chunk", "chunk_ids": "chunk",
            "memory_id": "mem", "memory_id_a": "mem", "memory_id_b": "mem", "entity": "ent", "entity_id": "ent",
            "contact_id": "con"}  # fmt: skip
# A field called just ``id`` points at an entry of the register its tool or route belongs to.
REGISTER_IDS = {"commitment": "cmt", "contradiction": "ctr", "term": "term", "glossary": "term", "job": "job"}
LITERAL = {"external_id": "ext", "activity_id": "act", "slug": "slug", "path": "path", "repo": "repo",
           "category": "category", "categories": "category"}  # fmt: skip
KINDS_OF_LITERALS = ("ext", "ext-source", "title", "content", "act", "slug", "path", "repo", "category")
TEXT_LIKE = {"slug", "path", "repo", "ent"}  # kinds whose fields also take names: the probes
CALLERS_OWN = {"conversation_id"}  # ids the client makes up; Brain keeps them and looks nothing up by them
PATTERN_HINTS = {"relation": "head_of", "source_kind": "api", "thread_ts": "1764590400.000100"}
LOOKS_LIKE_ID = re.compile(r"(^|_)ids?$")


def id_kind(name: str, where: str = "") -> tuple[str, str] | None:
    """("numbered" | "literal", kind) for a field that carries an id or a name of something."""
    if name == "id":
        for word, kind in REGISTER_IDS.items():
            if word in where:
                return "numbered", kind
    for table, family in ((NUMBERED, "numbered"), (LITERAL, "literal")):
        for suffix, kind in table.items():
            if name == suffix or name.endswith("_" + suffix):
                return family, kind
    if LOOKS_LIKE_ID.search(name) and name not in CALLERS_OWN:
        raise CannotBuild(f"{name!r} looks like an id, but the matrix does not know what it points to")
    return None


# --- reading schemas ----------------------------------------------------------------------


@dataclass(frozen=True)
class Arg:
    name: str
    schema: dict[str, Any]
    required: bool
    shape: str  # text, enum, bool, int, number, date, datetime, dict, object, list-text, list-enum, list-object
    family: str | None = None  # numbered or literal
    kind: str | None = None
    default: Any = field(default=OMIT, compare=False)


def resolve(schema: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema or ("allOf" in schema and len(schema["allOf"]) == 1):
        if "$ref" in schema:
            node: Any = root
            for part in schema["$ref"].removeprefix("#/").split("/"):
                node = node[part]
            schema = {**{k: v for k, v in schema.items() if k != "$ref"}, **node}
        else:
            schema = {**{k: v for k, v in schema.items() if k != "allOf"}, **resolve(schema["allOf"][0], root)}
    if "anyOf" in schema:
        options = [resolve(o, root) for o in schema["anyOf"] if o.get("type") != "null"]
        types = {o.get("type") for o in options}
        if len(options) == 1:
            return {**{k: v for k, v in schema.items() if k != "anyOf"}, **options[0]}
        if types == {"string", "integer"}:  # an id as text or as a bare number
            return {**{k: v for k, v in schema.items() if k != "anyOf"}, "type": "string"}
        raise CannotBuild(f"a choice of {sorted(map(str, types))} the matrix cannot fill")
    return schema


def shape_of(name: str, schema: dict[str, Any], root: dict[str, Any]) -> str:
    kind = schema.get("type")
    if "enum" in schema or "const" in schema:
        return "enum"
    if kind == "string":
        return {"date": "date", "date-time": "datetime"}.get(schema.get("format", ""), "text")
    if kind in ("integer", "number", "boolean"):
        return {"integer": "int", "number": "number", "boolean": "bool"}[kind]
    if kind == "object":
        return "object" if schema.get("properties") else "dict"
    if kind == "array":
        items = resolve(schema.get("items", {}), root)
        inner = shape_of(name, items, root)
        if inner in ("text", "enum"):
            return f"list-{inner}"
        if inner in ("object", "dict"):
            return "list-object"
    raise CannotBuild(f"{name!r} has a schema the matrix cannot fill: {schema}")


def args_of(schema: dict[str, Any], root: dict[str, Any], where: str) -> list[Arg]:
    found = []
    for name, raw in (resolve(schema, root).get("properties") or {}).items():
        try:
            resolved = resolve(raw, root)
            if resolved.get("type") == "array":
                resolved = {**resolved, "items": resolve(resolved.get("items", {}), root)}
            shape = shape_of(name, resolved, root)
            family_kind = id_kind(name, where) if shape in ("text", "list-text") else None  # a choice is not an id
            found.append(
                Arg(
                    name=name,
                    schema=resolved,
                    required=name in schema.get("required", []),
                    shape=shape,
                    family=family_kind and family_kind[0],
                    kind=family_kind and family_kind[1],
                    default=resolved.get("default", OMIT),
                )
            )
        except CannotBuild as exc:
            raise CannotBuild(f"{where}: {exc}") from None
    return found


# --- values -------------------------------------------------------------------------------


def text_value(arg: Arg, probe: str) -> str:
    value = probe
    pattern = arg.schema.get("pattern")
    if pattern:
        slug = re.sub(r"[^a-z0-9]+", "-", probe.lower()).strip("-")
        candidates = [probe, PATTERN_HINTS.get(arg.name, ""), slug, slug.replace("-", "_")]
        value = next((c for c in candidates if c and re.search(pattern, c)), "")
        if not value:
            raise CannotBuild(f"no value found for {arg.name!r} matching {pattern!r}")
    limit = arg.schema.get("maxLength")
    return value[:limit] if limit else value


def object_value(schema: dict[str, Any], root: dict[str, Any], probe: str, where: str) -> dict[str, Any]:
    if not schema.get("properties"):
        return {"note": probe}
    values = {}
    for arg in args_of(schema, root, where):
        value = base_value(arg, root, probe, where)
        if value is not OMIT:
            values[arg.name] = value
    return values


def base_value(arg: Arg, root: dict[str, Any], probe: str, where: str) -> Any:
    """What an argument holds in a probe case: the probe in every text, the revealing flags on."""
    if arg.family is not None and arg.kind not in TEXT_LIKE:
        if not arg.required:
            return OMIT
        if arg.family == "numbered":
            ref = Ref(arg.kind or "", "missing", 0)
            return [ref] if arg.shape.startswith("list") else ref
    shape = arg.shape
    if shape == "text":
        return text_value(arg, probe)
    if shape == "enum":
        return OMIT if arg.default is not OMIT else (arg.schema.get("enum") or [arg.schema.get("const")])[0]
    if shape == "bool":
        return True if arg.name.startswith("include_") else OMIT
    if shape == "int":
        return 1000  # numbers are clamped into their ranges: the largest answer
    if shape in ("number", "date", "datetime", "dict", "list-enum"):
        return OMIT if not arg.required else alternatives(arg, probe)[0]
    if shape == "object":
        return object_value(arg.schema, root, probe, where)
    if shape == "list-text":
        return [text_value(Arg(arg.name, resolve(arg.schema.get("items", {}), root), True, "text"), probe)]
    if shape == "list-object":
        return [object_value(resolve(arg.schema["items"], root), root, probe, f"{where}.{arg.name}")]
    raise CannotBuild(f"{where}: no value for {arg.name!r} ({shape})")


def alternatives(arg: Arg, probe: str) -> list[Any]:
    """Values other than the base one, one case each."""
    shape = arg.shape
    if shape == "enum":
        values = arg.schema.get("enum") or [arg.schema.get("const")]
        return [v for v in values if v != arg.default]
    if shape == "bool":
        return [not arg.name.startswith("include_")]
    if shape == "number":
        return [0]
    if shape == "date":
        return [date.today().isoformat()]
    if shape == "datetime":
        return [datetime.now(UTC).isoformat()]
    if shape == "dict":
        return [{"note": probe}]
    if shape == "list-enum":
        return [[arg.schema["items"]["enum"][0]]]
    return []


# --- cases --------------------------------------------------------------------------------


def base_args(target: Target, probe: str = ANCHOR) -> dict[str, Any]:
    """The probe in every text field, revealing flags on, ids left out unless required."""
    values = {a.name: base_value(a, target.root, probe, target.name) for a in target_args(target)}
    return {k: v for k, v in values.items() if v is not OMIT}


def target_args(target: Target) -> list[Arg]:
    return args_of(target.schema, target.root, target.name)


def cases_for(target: Target, pool: Pool, probes: tuple[str, ...] = PROBES) -> list[Case]:
    args = target_args(target)
    made: list[Case] = []

    def add(label: str, values: dict[str, Any]) -> None:
        if all(values != c.args for c in made):
            made.append(Case(target, label, values))

    for probe in probes:
        values = base_args(target, probe)
        add(f"probe {probe!r}" if probe in str(values) else "no text to probe", values)
    for arg in args:
        if arg.family is None:
            continue
        for ref in refs(arg.kind or "", pool):
            if ref.which == "hidden" and arg.family == "numbered":
                continue  # every hidden id, and the ids around it, have a test of their own
            values = id_case_args(target, arg, ref)
            if arg.kind == "ext" and ref.which == "hidden":
                _replay_source(values, args, ref)
            add(f"{arg.name}={ref.which} {ref.kind} #{ref.key}", values)
        if arg.shape.startswith("list") and arg.family == "numbered":
            mixed = [r for r in refs(arg.kind or "", pool) if r.which != "missing"]
            add(f"{arg.name}=visible and hidden together", {**id_case_args(target, arg, None), arg.name: mixed[:20]})
        if arg.kind == "ext":
            for i in range(pool.hidden.get("ext", 0)):
                values = {**base_args(target), arg.name: Ref("ext", "hidden", i)}
                if _replay_source(values, args, Ref("ext", "hidden", i), whole=True):
                    add(f"replay hidden document #{i}", values)
    for arg in args:
        if arg.family is None:
            for value in alternatives(arg, COMBINED):
                add(f"{arg.name}={value!r}", {**base_args(target, COMBINED), arg.name: value})
    return made


def id_case_args(target: Target, arg: Arg, value: Any) -> dict[str, Any]:
    """Arguments that make a tool act on an id: the anchor probe, every flag on, and the id."""
    values = base_args(target, ANCHOR)
    values.update({other.name: True for other in target_args(target) if other.shape == "bool"})
    values[arg.name] = [value] if arg.shape.startswith("list") else value
    return values


def _replay_source(values: dict[str, Any], args: list[Arg], ref: Ref, whole: bool = False) -> bool:
    """With a hidden external id, also send its source kind (and, replaying, its title and content)."""
    names = {a.name for a in args}
    if "source_kind" in names:
        values["source_kind"] = Ref("ext-source", "hidden", ref.key)
    if whole and {"title", "content"} <= names:
        values["title"], values["content"] = Ref("title", "hidden", ref.key), Ref("content", "hidden", ref.key)
        return True
    return False


def refs(kind: str, pool: Pool) -> list[Ref]:
    hidden = [Ref(kind, "hidden", i) for i in range(pool.hidden.get(kind, 0))]
    visible = [Ref(kind, "visible", key) for key in pool.visible.get(kind, [])]
    return hidden + visible + ([Ref(kind, "missing", 0)] if kind in NUMBERED.values() else [])


# --- targets ------------------------------------------------------------------------------


def tool_target(name: str) -> Target:
    schema = TOOLS[name].input_schema()
    return Target(f"tool:{name}", schema, schema, tool=name)


def prompt_target(name: str) -> Target:
    spec = PROMPTS[name]
    schema = {
        "type": "object",
        "properties": {n: {"type": "string", "description": d} for n, d, _ in spec.arguments},
        "required": [n for n, _, required in spec.arguments if required],
    }
    return Target(f"prompt:{name}", schema, schema)


@cache
def openapi() -> dict[str, Any]:
    from drf_spectacular.generators import SchemaGenerator

    return SchemaGenerator().get_schema(request=None, public=True)


@cache
def rest_targets() -> tuple[Target, ...]:
    """Every REST operation: a tool's arguments where it runs a tool, else its declared parameters."""
    document = openapi()
    found = []
    for path, operations in sorted(document["paths"].items()):
        for method, operation in sorted(operations.items()):
            name = f"rest:{method.upper()} {path}"
            tool = operation.get("operationId") if operation.get("operationId") in TOOLS else None
            if tool:
                schema, root = TOOLS[tool].input_schema(), TOOLS[tool].input_schema()
            else:
                schema, root = _declared(operation, document), document
            found.append(Target(name, schema, root, tool=tool, method=method, path=path))
    return tuple(found)


def _declared(operation: dict[str, Any], document: dict[str, Any]) -> dict[str, Any]:
    properties: dict[str, Any] = {}
    required: list[str] = []
    for parameter in operation.get("parameters", []):
        properties[parameter["name"]] = parameter.get("schema", {"type": "string"})
        if parameter.get("required"):
            required.append(parameter["name"])
    body = operation.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema")
    if body:
        resolved = resolve(body, document)
        properties.update(resolved.get("properties", {}))
        required += resolved.get("required", [])
    return {"type": "object", "properties": properties, "required": required}
