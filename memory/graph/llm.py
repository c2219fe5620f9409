"""Optional LLM extraction over an OpenAI-compatible chat-completions endpoint.

Produces the same dataclasses as ``memory.extraction.sentences.extract``. The answer is constrained with a
strict JSON schema and then validated item by item: an invalid entity, fact or value is dropped,
not the whole answer. Transport or format failures raise ``LLMError`` so the caller can fall back
to the deterministic extractor.
"""

from __future__ import annotations

import datetime
import json
import re
from collections.abc import Sequence
from typing import Any, Literal, TypeVar

import httpx
from pydantic import BaseModel, Field, ValidationError, field_validator

from brain.core.errors import Outage
from memory.extraction import ExtractedEntity, ExtractedFact, ExtractedValue, Extraction, KnownEntity, link_name
from memory.extraction.vocabulary import ENTITY_TYPES, FACT_KINDS

MAX_KNOWN_IN_PROMPT = 200

EntityType = Literal[
    "person", "team", "customer", "deal", "project", "system", "product", "place", "term", "organisation", "other"
]
FactKind = Literal["fact", "decision", "preference", "event", "procedure"]
_SNAKE = r"^[a-z][a-z0-9_]*$"

SYSTEM_PROMPT = f"""You extract structured company knowledge from one document for an organisation's memory.
Return JSON only, matching the given schema.

entities: the people, teams, customers, deals, projects, systems, products, places, terms and
organisations the text names. type is one of: {", ".join(ENTITY_TYPES)}. When an entity is one of the
known entities listed by the user, use the known name and type exactly; put other spellings in aliases.

facts: one per statement worth remembering. statement is the sentence as the text says it; keep
pronouns and time words as written ("by Friday" stays "by Friday"), never put dates into it. Resolve
each time phrase against the document date into valid_from, valid_to or a dated value instead; a
recurring time ("every Monday at 10:00", "on the 20th of each month") or a clock time alone is no
date and gets none. kind is one of: {", ".join(FACT_KINDS)}
(decision: we decided/agreed/will; preference: prefers/likes/wants; event: a dated past action;
procedure: an instruction or how-to; fact: anything else). subject is the entity name the statement
is mainly about, object a second entity it relates to, relation a snake_case verb phrase between
them such as works_at, head_of, reports_to, owns, signed, replaced (null when there is none).
single_valued is true when the subject can hold only one value of that relation or value key at a
time (a role or title, employer, manager, owner, price, deal value, headcount, renewal date, status).
valid_from / valid_to are ISO dates bounding when the statement holds ("from", "since", "starting",
an event's date / "until", "by end of"), else null. values: amounts, percentages, counts and dates the
statement carries, with a snake_case key (price, deal_value, budget, salary, amount, discount, churn,
growth, percent, headcount, renewal_date, date), number or ISO date, the source text, and unit (an ISO
currency code like USD, EUR, GBP, or "%", "days", "people"). "$40k" is 40000. Never invent facts."""


class LLMError(Outage):
    """The endpoint failed or answered something unusable; fall back to ``memory.extraction.sentences.extract``."""

    dependency = "its language model"


class _Value(BaseModel):
    key: str = Field(pattern=_SNAKE)
    number: float | None = None
    date: datetime.date | None = None
    text: str = ""
    unit: str = ""


class _Entity(BaseModel):
    name: str = Field(min_length=1)
    type: EntityType
    aliases: list[str] = []


class _Fact(BaseModel):
    statement: str = Field(min_length=1)
    kind: FactKind
    subject: str | None = None
    object: str | None = None
    relation: str | None = Field(default=None, pattern=_SNAKE)
    single_valued: bool = False
    valid_from: datetime.date | None = None
    valid_to: datetime.date | None = None
    values: list[_Value] = []

    @field_validator("values", mode="before")
    @classmethod
    def _drop_invalid_values(cls, items: Any) -> list[_Value]:
        return _valid(_Value, items)

    @field_validator("relation", mode="before")
    @classmethod
    def _snake_relation(cls, relation: Any) -> Any:
        # "works at" and "Works-At" are the same relation; an empty one is no relation.
        if isinstance(relation, str):
            return re.sub(r"[^a-z0-9]+", "_", relation.strip().lower()).strip("_") or None
        return relation


class _Answer(BaseModel):
    entities: list[_Entity] = []
    facts: list[_Fact] = []


_Model = TypeVar("_Model", bound=BaseModel)


def strict_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema of ``model`` in the form strict structured outputs accept: definitions
    inlined, every property required (an optional one may be null), no other properties, and no
    keywords the endpoint does not take (titles, defaults, patterns, lengths). Validation of those
    stays with the pydantic models, item by item."""
    schema = model.model_json_schema()
    definitions = schema.pop("$defs", {})

    def convert(node: Any) -> Any:
        if isinstance(node, list):
            return [convert(item) for item in node]
        if not isinstance(node, dict):
            return node
        if "$ref" in node:
            return convert(definitions[node["$ref"].rsplit("/", 1)[-1]])
        if "anyOf" in node:  # X | None: a nullable X
            kinds = [convert(option) for option in node["anyOf"]]
            plain = [k for k in kinds if k.get("type") != "null"]
            if len(plain) == 1 and len(kinds) == 2:
                merged = dict(plain[0])
                merged["type"] = [merged["type"], "null"]
                return merged
            return {"anyOf": kinds}
        out = {k: convert(v) for k, v in node.items() if k not in _NOT_STRICT}
        if "enum" in out and "type" not in out:
            out["type"] = "string"
        if out.get("format") == "date":
            out.pop("format")
            out["description"] = "ISO date YYYY-MM-DD"
        if out.get("type") == "object" and "properties" in out:
            out["required"] = list(out["properties"])
            out["additionalProperties"] = False
        return out

    return convert(schema)


_NOT_STRICT = {"title", "default", "pattern", "minLength", "maxLength"}


def _valid(model: type[_Model], items: Any) -> list[_Model]:
    """The items that validate; the model may be right about most of an answer and wrong about one item."""
    out = []
    for item in items if isinstance(items, list) else []:
        try:
            out.append(model.model_validate(item))
        except ValidationError:
            continue
    return out


SCHEMA: dict[str, Any] = strict_schema(_Answer)  # generated from the models that validate the answer


class LLMExtractor:
    def __init__(self, base_url: str, model: str, api_key: str = "", timeout: float = 60) -> None:
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model = model
        self.api_key = api_key
        self.timeout = timeout

    def extract(
        self,
        text: str,
        *,
        document_date: datetime.date | None = None,
        known: Sequence[KnownEntity] = (),
        undated: bool = False,
    ) -> Extraction:
        data = self._complete(self._user_message(text, document_date, known, undated))
        entities = _valid(_Entity, data.get("entities"))
        facts = _valid(_Fact, data.get("facts"))
        return _convert(text, entities, facts, known)

    def _user_message(
        self, text: str, document_date: datetime.date | None, known: Sequence[KnownEntity], undated: bool = False
    ) -> str:
        # Only the known entities the text plausibly mentions: the whole memory would not fit a prompt.
        lowered = text.casefold()
        mentioned = [e for e in known if any(f.casefold() in lowered for f in (e.name, *e.aliases) if f.strip())]
        lines = [f"- {e.name} | {e.type} | {', '.join(e.aliases)}" for e in mentioned[:MAX_KNOWN_IN_PROMPT]]
        day = (document_date or datetime.date.today()).isoformat()
        if undated:  # the text gives no date of its own: a day and month without a year stays without one
            day = f"unknown (saved on {day}; leave a day or month without a year undated)"
        listing = "\n".join(lines) or "(none)"
        return f"Document date: {day}\nKnown entities (name | type | aliases):\n{listing}\n\nText:\n{text}"

    def _complete(self, user_message: str) -> dict[str, Any]:
        payload = {
            "model": self.model,
            "temperature": 0,
            "messages": [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user_message}],
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": "extraction", "strict": True, "schema": SCHEMA},
            },
        }
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        try:
            response = httpx.post(self.url, json=payload, headers=headers, timeout=self.timeout)
            response.raise_for_status()
            data = json.loads(response.json()["choices"][0]["message"]["content"])
        except httpx.HTTPError as exc:
            raise LLMError(f"LLM request failed: {exc}") from exc
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise LLMError(f"LLM answer is not the expected JSON: {exc}") from exc
        if not isinstance(data, dict):
            raise LLMError("LLM answer is not a JSON object")
        return data


def _convert(text: str, entities: list[_Entity], facts: list[_Fact], known: Sequence[KnownEntity]) -> Extraction:
    by_name: dict[str, ExtractedEntity] = {}
    canonical: dict[str, str] = {}  # any name or alias the model used -> the entity's canonical name
    for item in entities:
        linked = link_name(item.name, known)
        name = linked.name if linked else item.name.strip()
        entity = by_name.setdefault(name, ExtractedEntity(name, linked.type if linked else item.type, [], bool(linked)))
        for form in (item.name.strip(), *(a.strip() for a in item.aliases)):
            if form and form not in entity.aliases:
                entity.aliases.append(form)
            canonical[form.casefold()] = name

    def resolve(name: str | None) -> str | None:
        if not name or not name.strip():
            return None
        linked = link_name(name, known)
        return canonical.get(name.strip().casefold()) or (linked.name if linked else name.strip())

    out = []
    for fact in facts:
        start = text.find(fact.statement)
        values = [ExtractedValue(v.key, v.number, v.date, v.text, v.unit) for v in fact.values]
        out.append(
            ExtractedFact(
                statement=fact.statement,
                kind=fact.kind,
                subject=resolve(fact.subject),
                object=resolve(fact.object),
                relation=fact.relation,
                single_valued=fact.single_valued,
                valid_from=fact.valid_from,
                valid_to=fact.valid_to,
                values=values,
                char_start=max(start, 0),
                char_end=start + len(fact.statement) if start >= 0 else 0,
            )
        )
    return Extraction(entities=list(by_name.values()), facts=out)
