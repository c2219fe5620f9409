"""What the memory pages share: running a tool as the viewer, the page that says why nothing is
shown, days from the query string, and links that are safe to follow."""

from __future__ import annotations

from datetime import date
from typing import Any
from urllib.parse import urlsplit

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from pydantic import TypeAdapter, ValidationError

from brain.core.actors import Actor
from brain.faces.refusals import for_people
from brain.infra.ids import parse_numeric_id
from brain.mcp.invoke import Outcome, execute
from brain.mcp.registry import TOOLS

DAY = TypeAdapter(date)


def run_tool(actor: Actor, name: str, arguments: dict[str, Any]) -> Outcome:
    """One tool call as MCP makes it: authorised, validated, limited, charged and recorded; a
    refusal in words for the person on the page, never a tool's name or its arguments'
    (``brain.faces.refusals``)."""
    return for_people(name, arguments, execute(actor, TOOLS[name], arguments))


def message_page(request: HttpRequest, *, title: str, message: str, status: int) -> HttpResponse:
    """A page that only says why there is nothing to show (not found, out of credits, a bad day)."""
    return render(request, "memory/message.html", {"title": title, "message": message}, status=status)


def day_of(value: str) -> date | None:
    """The day a tool accepted as ``as_of``, read the way the tool read it (None when absent)."""
    if not value:
        return None
    try:
        return DAY.validate_python(value)
    except ValidationError:
        return None


def web_link(url: str | None) -> str | None:
    """A source's URL when it is a web address a browser may follow; never ``javascript:`` and the like."""
    if not url:
        return None
    return url if urlsplit(url.strip()).scheme.lower() in ("http", "https") else None


def entity_url(ref: str) -> str | None:
    key = parse_numeric_id(ref, "ent")
    return reverse("memory-entity", args=[key]) if key else None


def document_url(ref: str | None) -> str | None:
    key = parse_numeric_id(ref, "doc") if ref else None
    return reverse("memory-document", args=[key]) if key else None
