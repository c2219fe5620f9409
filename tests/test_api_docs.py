"""The API docs: every endpoint in one declared group, how to authenticate first, and the pages link to them."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from brain.api.groups import TOOL_GROUPS, group_of
from brain.api.introduction import CONNECT_PATH
from brain.core.services import mark_memory_built
from brain.models import ApiToken
from conftest import make_user


@pytest.fixture(scope="module")
def schema() -> dict[str, Any]:
    return APIClient().get("/api/v1/schema/", HTTP_ACCEPT="application/json").json()


def operations(schema: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    return [(f"{method.upper()} {path}", op) for path, ops in schema["paths"].items() for method, op in ops.items()]


def test_every_operation_is_in_exactly_one_declared_group_and_every_group_is_used(schema):
    declared = [tag["name"] for tag in schema["tags"]]
    assert all(tag.get("description") for tag in schema["tags"]), schema["tags"]
    assert len(declared) == len(set(declared)), declared
    used = set()
    for name, op in operations(schema):
        assert len(op.get("tags", [])) == 1, (name, op.get("tags"))
        assert op["tags"][0] in declared, (name, op["tags"])
        used.add(op["tags"][0])
    assert used == set(declared), f"declared but empty: {sorted(set(declared) - used)}"


def test_the_group_table_names_only_tools_that_have_a_route(schema):
    routed = {op["operationId"] for _, op in operations(schema)}
    assert set(TOOL_GROUPS) <= routed, sorted(set(TOOL_GROUPS) - routed)


def test_a_tool_without_a_group_is_refused_rather_than_left_untagged():
    with pytest.raises(ImproperlyConfigured, match="TOOL_GROUPS"):
        group_of("a_tool_nobody_grouped")


def test_the_description_starts_with_how_to_authenticate(schema):
    description = schema["info"]["description"]
    assert description.startswith("## Authentication\n")
    first_section = description.split("\n## ")[0]
    assert "Authorization: Bearer brn_" in first_section
    assert f"]({CONNECT_PATH})" in first_section
    assert reverse("connect") == CONNECT_PATH
    for scope in ApiToken.SCOPES:
        assert f"`{scope}`" in first_section, scope
    for part in ('"code"', '"message"', '"details"', '"retryable"', "Retry-After"):
        assert part in description, part


def test_every_operation_asks_for_the_bearer_token_the_schema_declares(schema):
    assert schema["components"]["securitySchemes"]["bearerAuth"] == {
        "type": "http",
        "scheme": "bearer",
        "description": "An API token (brn_...) from the Connect page.",
    }
    for name, op in operations(schema):
        assert {"bearerAuth": []} in op.get("security", []), name


@pytest.mark.django_db
def test_the_connect_page_and_the_menu_link_to_the_api_docs(org):
    mark_memory_built(org=org)
    web = Client()
    web.force_login(make_user(org))
    docs = reverse("api-docs")

    connect = web.get(reverse("connect")).content.decode()
    main = connect[connect.index("<main") :]
    assert f'href="{docs}"' in main

    registers = web.get(reverse("registers")).content.decode()
    menu = re.search(r'<nav aria-label="Main".*?</nav>', registers, re.S)
    assert menu is not None
    assert f'<a href="{docs}">API docs</a>' in menu.group()
