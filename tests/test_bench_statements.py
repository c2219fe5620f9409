"""bench.statements: the statement counter bench.profile serves Brain with, and nothing of it in Brain."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from asgiref.sync import async_to_sync, sync_to_async
from django.db import connection
from django.db.backends.signals import connection_created
from starlette.types import Receive, Scope, Send

from bench.statements import HEADER, CountingStatements, counting, head, install
from brain.models import Organisation

ROOT = Path(__file__).resolve().parent.parent


def _two_queries() -> None:
    Organisation.objects.count()
    list(Organisation.objects.filter(slug="nobody"))


async def querying_app(scope: Scope, receive: Receive, send: Send) -> None:
    await sync_to_async(_two_queries, thread_sensitive=True)()
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"{}"})


def _call(app: Any) -> list[dict[str, Any]]:
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    async_to_sync(app)({"type": "http", "path": "/mcp", "headers": []}, receive, send)
    return sent


@pytest.mark.django_db
def test_it_counts_each_requests_statements_in_its_answer_and_its_log(tmp_path: Path) -> None:
    log = tmp_path / "statements.jsonl"
    install(sender=None, connection=connection)
    try:
        first = _call(CountingStatements(querying_app, log=str(log)))
        second = _call(CountingStatements(querying_app, log=str(log)))
    finally:
        connection.execute_wrappers.remove(counting)
    for sent in (first, second):
        assert dict(sent[0]["headers"])[HEADER] == b"2"
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert [len(line["statements"]) for line in lines] == [2, 2]
    assert lines[0]["statements"][0][1] == "SELECT brain_organisation"


@pytest.mark.django_db
def test_statements_outside_a_request_are_not_counted() -> None:
    install(sender=None, connection=connection)
    try:
        _two_queries()
        sent = _call(CountingStatements(querying_app))
    finally:
        connection.execute_wrappers.remove(counting)
    assert dict(sent[0]["headers"])[HEADER] == b"2"


def test_brain_itself_neither_imports_nor_installs_the_counter() -> None:
    importing = re.compile(r"^\s*(from|import) bench\b", re.MULTILINE)
    assert [path for path in (ROOT / "brain").rglob("*.py") if importing.search(path.read_text())] == []
    assert counting not in connection.execute_wrappers
    assert not any(lookup[0] == "bench.statements" for lookup, *_ in connection_created.receivers)


def test_a_statement_is_named_by_its_verb_and_its_own_table_not_a_subquerys() -> None:
    sql = (
        'SELECT "t"."id", (SELECT U0."role" FROM "brain_membership" U0 WHERE (U0."org_id" = ("t"."org_id"))) '
        'AS "member_role" FROM "brain_apitoken" "t" WHERE "t"."hashed" = %s'
    )
    assert head(sql) == "SELECT brain_apitoken"
    assert head('INSERT INTO "brain_toolcall" ("org_id") VALUES (%s)') == "INSERT brain_toolcall"
    assert head('UPDATE "brain_apitoken" SET "last_used_at" = %s') == "UPDATE brain_apitoken"
