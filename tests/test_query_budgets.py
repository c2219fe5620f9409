"""How many SQL queries the hot tools make, on the small organisation of the contract test.

Each budget is the count measured when it was set plus a small margin. A change that needs more
must say why in its commit and raise the number here; a count that grows unnoticed is how a
query per row (N+1) gets in."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from brain.core.actors import Actor
from brain.core.services import actor_for_token, authenticate_token, start_activity
from brain.mcp.invoke import execute
from brain.mcp.registry import TOOLS
from brain.models import Organisation, ToolCall
from conftest import make_token
from tests.small_org import small_organisation

pytestmark = pytest.mark.django_db

# tool: (arguments, budget). Measured when set: init 4, search_company_memory 10, ask_company_memory 26
# (the call record included), one warm call each, with a new actor as in production: its organisation
# loaded with its account and plan, as token authentication loads it. Metering then adds one query to a
# billed call (the month's upsert; init is never billed). A change that needs more queries says why in
# its commit and updates both the measured count and the budget. Since: search 12 and ask 31 (29 before),
# one read of the search counters per passage or fact search (memory.models.SearchEpoch), which key
# what search caches so that nothing withdrawn from an audience still weighs in its results. Then
# search 13 (one read of the review dates of the hits it returns: knowledge past its review date is
# marked) and ask 44 (its answer card runs the search page's own search, eleven statements, so that
# the card an assistant gets is the card the page shows: memory.search.evidence.card_for). Measured
# again on 8 December 2026: search 15, ask 44; then search 16 and ask 36: one read of whether the
# keyword arm's first passage is written or a turn (memory.search.passages._written_first), and
# ask's card read from ask's own retrieval, the arms run once for both
# (memory.search.passages.search_views), eight statements fewer.
BUDGETS: dict[str, tuple[dict[str, Any], int]] = {
    "init": ({}, 4 + 2),
    "search_company_memory": ({"query": "When do deploys run?"}, 16 + 3),
    "ask_company_memory": ({"question": "When do deploys run?"}, 36 + 4),
}


@pytest.mark.parametrize("tool", sorted(BUDGETS))
def test_a_hot_tool_stays_within_its_query_budget(tool):
    _, actor, _ = small_organisation()
    arguments, budget = BUDGETS[tool]
    execute(actor, TOOLS[tool], arguments)  # once first: per-process caches are not the tool's cost
    org = Organisation.objects.select_related("account__plan").get(pk=actor.org.pk)  # as brain.core.services loads it
    with CaptureQueriesContext(connection) as queries:
        outcome = execute(dataclasses.replace(actor, org=org), TOOLS[tool], arguments)  # a new call, a new actor
    assert outcome.output is not None, outcome.message
    assert len(queries) <= budget, "\n".join(str(q["sql"])[:200] for q in queries.captured_queries)


# --- the path every call shares (issue 36) --------------------------------------------------
#
# Exact, no margin: a statement added to every call fails here. With a bearer token: the token's
# row (one statement: its organisation, account, plan, features, user, role and profile), the
# charge of a billed call (one), the call record with its activity (one). The token's last use
# is written at most once a minute, so not on the calls measured.


def _by_token(org: Organisation) -> Actor:
    issued = make_token(org)
    assert authenticate_token(issued.plaintext) is not None  # its first use is written now
    token = authenticate_token(issued.plaintext)
    assert token is not None
    return actor_for_token(token, via="mcp")


def _statements(fn: Callable[[], object]) -> list[str]:
    with CaptureQueriesContext(connection) as queries:
        fn()
    return [q["sql"] for q in queries.captured_queries]


def test_get_profile_by_token_costs_three_statements_in_all(org):
    issued = make_token(org)
    authenticate_token(issued.plaintext)

    def call() -> None:
        token = authenticate_token(issued.plaintext)
        assert token is not None
        outcome = execute(actor_for_token(token, via="mcp"), TOOLS["get_profile"], {})
        assert outcome.output is not None, outcome.message

    call()
    statements = _statements(call)
    assert len(statements) == 3, "\n".join(s[:200] for s in statements)  # token, the month's usage, the record


def test_a_billed_call_costs_two_statements_besides_its_tool():
    _, member, _ = small_organisation()
    actor = _by_token(member.org)
    spec, arguments = TOOLS["search_company_memory"], {"query": "When do deploys run?"}
    execute(actor, spec, arguments)  # warm: per-process caches are not the path's cost
    around = _statements(lambda: execute(actor, spec, arguments))
    inside = _statements(lambda: spec.fn(actor, spec.args.model_validate(arguments)))
    assert len(around) - len(inside) == 2, "\n".join(s[:200] for s in around)  # the charge, the record


def test_an_activity_id_costs_no_statement_of_its_own():
    _, member, _ = small_organisation()
    actor = _by_token(member.org)
    activity = start_activity(actor=actor, label="deploys")
    spec = TOOLS["search_company_memory"]
    plain = {"query": "When do deploys run?"}
    execute(actor, spec, plain)
    without = _statements(lambda: execute(actor, spec, plain))
    with_activity = _statements(lambda: execute(actor, spec, {**plain, "activity_id": activity.public_id}))
    assert len(with_activity) == len(without)
    assert ToolCall.objects.filter(activity=activity).count() == 1
