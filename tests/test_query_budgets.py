"""How many SQL queries the hot tools make, on the small organisation of the contract test.

Each budget is the count measured when it was set plus a small margin. A change that needs more
must say why in its commit and raise the number here; a count that grows unnoticed is how a
query per row (N+1) gets in."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from brain.mcp.invoke import execute
from brain.mcp.registry import TOOLS
from brain.models import Organisation
from tests.small_org import small_organisation

pytestmark = pytest.mark.django_db

# tool: (arguments, budget). Measured when set: init 4, search_company_memory 10, ask_company_memory 26
# (the call record included), one warm call each, with a new actor as in production: its organisation
# loaded with its account and plan, as token authentication loads it. Metering then adds one query to a
# billed call (the month's upsert; init is never billed). A change that needs more queries says why in
# its commit and updates both the measured count and the budget. Since: search 12 and ask 31 (29 before),
# one read of the search counters per passage or fact search (memory.models.SearchEpoch), which key
# what search caches so that nothing withdrawn from an audience still weighs in its results.
BUDGETS: dict[str, tuple[dict[str, Any], int]] = {
    "init": ({}, 4 + 2),
    "search_company_memory": ({"query": "When do deploys run?"}, 12 + 3),
    "ask_company_memory": ({"question": "When do deploys run?"}, 31 + 4),
}


@pytest.mark.parametrize("tool", sorted(BUDGETS))
def test_a_hot_tool_stays_within_its_query_budget(tool):
    _, actor, _ = small_organisation()
    arguments, budget = BUDGETS[tool]
    execute(actor, TOOLS[tool], arguments)  # once first: per-process caches are not the tool's cost
    org = Organisation.objects.select_related("account__plan").get(pk=actor.org.pk)  # as brain.services loads it
    with CaptureQueriesContext(connection) as queries:
        outcome = execute(dataclasses.replace(actor, org=org), TOOLS[tool], arguments)  # a new call, a new actor
    assert outcome.output is not None, outcome.message
    assert len(queries) <= budget, "\n".join(q["sql"][:200] for q in queries.captured_queries)
