"""Pages say a tool's refusal in words for people: fed bad input, no page shows a tool's name, its
arguments or "Invalid arguments"; the tools' own messages stay as they are for MCP clients."""

from __future__ import annotations

import re

import pytest
from django.contrib.messages import get_messages
from django.test import Client

from brain.faces.refusals import for_people, names_a_tool
from brain.mcp.invoke import execute
from brain.mcp.registry import TOOLS
from conftest import make_actor, make_org, make_user
from memory.tests.factories import save

pytestmark = pytest.mark.django_db

LONG = "pricing " * 600  # over the search's limit


def shown(answer) -> str:
    """What a person reads: the page, and the notices it carries to the next one."""
    notices = " ".join(str(m) for m in get_messages(answer.wsgi_request))
    return re.sub(r"<script.*?</script>", "", answer.content.decode(), flags=re.S) + notices


def for_models(text: str) -> list[str]:
    words = [tool for tool in TOOLS if "_" in tool and re.search(rf"\b{tool}\b", text)]  # not "forget"
    return words + [w for w in ("Invalid arguments", "argument", "activity_id") if w in text]


@pytest.fixture
def member():
    org = make_org()
    user = make_user(org)
    save(make_actor(org, user), "Pricing", "The Team plan costs 29 EUR per seat a month.")
    client = Client()
    client.force_login(user)
    return client


BAD = [
    ("get", "/memory/search/", {"q": LONG}),
    ("get", "/memory/search/", {"q": "pricing", "as_of": "yesterday-ish"}),
    ("get", "/memory/search/", {"q": "pricing", "as_of": "2025-02-30"}),
    ("get", "/memory/entities/999999/", {}),
    ("get", "/memory/entities/999999/", {"by": "learned", "as_of": "soon"}),
    ("get", "/memory/documents/999999/", {}),
    ("post", "/memory/mine/forget/", {"memory_id": "not-a-memory"}),
    ("post", "/memory/mine/forget/", {"memory_id": ""}),
    ("post", "/memory/mine/forget/", {"memory_id": "mem_999999"}),
]


@pytest.mark.parametrize(("method", "path", "data"), BAD)
def test_a_page_fed_bad_input_names_no_tool_and_no_argument(member, method, path, data):
    answer = getattr(member, method)(path, data)
    assert answer.status_code < 500
    assert for_models(shown(answer)) == []


def test_a_search_too_long_says_so_in_the_pages_words(member):
    page = shown(member.get("/memory/search/", {"q": LONG}))
    assert "The search is too long (4,799 characters): at most 2,000 characters." in page  # as typed, trimmed


def test_the_tools_own_message_is_unchanged_for_mcp_clients():
    org = make_org()
    actor = make_actor(org, make_user(org))
    arguments = {"query": LONG}
    outcome = execute(actor, TOOLS["search_company_memory"], arguments)
    assert outcome.message.startswith("Invalid arguments for search_company_memory: 'query' has 4800 characters")
    said = for_people("search_company_memory", arguments, outcome).message
    assert not names_a_tool(said)
    assert said.startswith("The search is too long")
