"""A tool's refusal as a page says it to a person.

A tool's messages are written for the model that called it: they name the tool and its arguments
("Invalid arguments for search_company_memory: 'query' has 4,100 characters...") and tell it what to
call next. A page that calls a tool (``memory.web.common.run_tool``) shows people these words
instead: what they typed, named as the page names it, and what to do. The tools' own messages are
unchanged for MCP and REST clients.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from pydantic import ValidationError

from brain.mcp.invoke import Outcome
from brain.mcp.registry import TOOLS

# What a tool's argument is called on the pages that fill it in.
FIELD_WORDS = {
    "query": "The search",
    "question": "The question",
    "as_of": "The date",
    "memory_id": "The memory",
    "document_id": "The document",
    "document_ids": "The document",
    "entity": "The entity",
    "name": "The name",
    "content": "The text",
    "title": "The title",
}
# Said when a refusal's own words are for a model (they name a tool or its arguments), by its code.
BY_CODE = {
    "not_found": "There is nothing here by that name that you may see: it may have been deleted or moved.",
    "permission_denied": "Your account may not do that here. An admin of your organisation can tell you why.",
    "unavailable": "Brain could not do that just now: a part of it is not answering. Try again in a minute.",
    "internal": "Something went wrong on Brain's side. Try again; if it keeps happening, tell whoever runs this Brain.",
    "invalid_argument": "Brain could not read what was typed. Check it and try again.",
}
OTHERWISE = "Brain could not do that. Check what you typed and try again."
# What a page's tool is called where a refusal names it ("Brain cannot run this search: ...").
TOOL_WORDS = {
    "search_company_memory": "this search",
    "ask_company_memory": "this question",
    "retrieve_company_memory": "this document",
    "explore_entity": "this entity's page",
}
ALWAYS_FOR_MODELS = ("internal", "unavailable")  # said for a model, whatever their words
_FOR_MODELS = re.compile(r"\b(arguments?|activity_id|call (it )?again)\b", re.IGNORECASE)
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def for_people(name: str, arguments: dict[str, Any], outcome: Outcome) -> Outcome:
    """The outcome of a page's call of tool ``name``, its message in words for the person who
    asked: what they typed that cannot be read, named as the page names it; any other refusal's
    sentences that speak to a model (naming a tool or its arguments) left out, and the tool named in
    the first one said in words. An answer is unchanged."""
    if outcome.output is not None:
        return outcome
    if outcome.code == "invalid_argument":
        return replace(outcome, message=_invalid(name, arguments))
    fallback = BY_CODE.get(outcome.code, OTHERWISE)
    first, *rest = _SENTENCE.split(outcome.message.strip()) or [""]
    if outcome.code in ALWAYS_FOR_MODELS or not first or _FOR_MODELS.search(first):
        return replace(outcome, message=fallback)
    kept = [_tools_in_words(first)] + [s for s in rest if not names_a_tool(s) and not _FOR_MODELS.search(s)]
    said = " ".join(kept)
    return replace(outcome, message=fallback if names_a_tool(said) else said)


def names_a_tool(text: str) -> bool:
    """Whether ``text`` names one of Brain's tools by its name for models (``search_company_memory``);
    the few named by an everyday word (``forget``) are not counted."""
    return any(re.search(rf"\b{re.escape(tool)}\b", text) for tool in TOOLS if "_" in tool)


def _tools_in_words(sentence: str) -> str:
    for tool in TOOLS:
        if "_" in tool:
            sentence = re.sub(rf"\b{re.escape(tool)}\b", TOOL_WORDS.get(tool, "this"), sentence)
    return sentence


def _invalid(name: str, arguments: dict[str, Any]) -> str:
    spec = TOOLS.get(name)
    try:
        if spec is not None:
            spec.args.model_validate(arguments)
    except ValidationError as error:
        said = [line for item in error.errors() if (line := _problem(item))]
        if said:
            return " ".join(said)
    return BY_CODE["invalid_argument"]


def _problem(item: Any) -> str:
    """One problem with one field, as a sentence; empty for what the person did not type."""
    field = str(item["loc"][0]) if item["loc"] else ""
    if item["type"] == "extra_forbidden" or not field:
        return ""
    words = FIELD_WORDS.get(field, f"The {field.replace('_', ' ')}")
    kind, ctx = item["type"], item.get("ctx") or {}
    if kind == "missing" or kind == "string_too_short":
        return f"{words} is empty: fill it in."
    if kind == "string_too_long":
        got = len(item["input"]) if isinstance(item.get("input"), str) else None
        length = f" ({got:,} characters)" if got else ""
        return f"{words} is too long{length}: at most {ctx.get('max_length'):,} characters."
    if kind == "value_error":
        said = (
            str(item["msg"]).removeprefix("Value error, ").replace("an ISO date, YYYY-MM-DD", "a day like 2025-03-11")
        )
        return f"{words} {said.rstrip('.')}." if said.startswith("must") else f"{words}: {said.rstrip('.')}."
    if kind in ("literal_error", "enum"):
        return f"{words} must be one of {ctx.get('expected', 'the values offered')}."
    if kind.startswith(("date", "datetime")):
        return f"{words} is not a day Brain can read: write it like 2025-03-11."
    return f"{words} is not something Brain can read: check it and try again."
