"""Brain's database going away under REST and MCP calls: every answer is JSON, retryable, says a
write may have been saved when it may have, and nothing saved is lost or doubled.

The outage is real: the database refuses new connections and drops the server's open ones, as a
restart does, while this test keeps its own connection to check the rows afterwards.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import psycopg
import pytest
from django.db import connection

from conftest import make_org, make_token
from memory.models import Document
from tests.conftest import McpCaller
from tests.progress import wait_until

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.runs_last]
ROOT = Path(__file__).resolve().parent.parent
POLICY = {"title": "Travel policy", "content": "Book trains for trips under four hours.", "external_id": "travel-1"}


class Outage:
    """Brain's database refuses connections and drops the open ones, except the test's own."""

    def __init__(self) -> None:
        self.db = connection.settings_dict
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_backend_pid()")
            self.test_pid = cursor.fetchone()[0]

    def _admin(self) -> psycopg.Connection:
        # Connections to a database cannot be switched off from inside it: from the maintenance one.
        return psycopg.connect(
            host=self.db["HOST"], port=self.db["PORT"] or None, user=self.db["USER"], dbname="postgres", autocommit=True
        )

    def start(self) -> None:
        name = self.db["NAME"]
        with self._admin() as admin:
            admin.execute(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS false')
            admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s AND pid <> %s",
                [name, self.test_pid],
            )

    def stop(self) -> None:
        with self._admin() as admin:
            admin.execute(f'ALTER DATABASE "{self.db["NAME"]}" ALLOW_CONNECTIONS true')


@pytest.fixture
def outage():
    away = Outage()
    yield away
    away.stop()


def assert_unavailable(body: dict, *, may_have_saved: bool) -> None:
    assert body["code"] == "unavailable", body
    assert body["retryable"] is True
    assert ("may have been saved" in body["message"]) is may_have_saved, body["message"]


def test_rest_calls_while_the_database_is_away_answer_json_503_retryable(brain_url, outage):
    token = make_token(make_org()).plaintext
    auth = {"Authorization": f"Bearer {token}"}
    outage.start()
    listing = httpx.get(f"{brain_url}/api/v1/documents", headers=auth, timeout=60)
    search = httpx.post(f"{brain_url}/api/v1/search", json={"query": "trains"}, headers=auth, timeout=60)
    save = httpx.post(f"{brain_url}/api/v1/documents", json=POLICY, headers=auth, timeout=60)
    outage.stop()
    for response in (listing, search, save):
        assert response.status_code == 503, response.text
        assert response.headers["content-type"].startswith("application/json"), response.text[:200]
        assert response.headers["retry-after"] == "60"
    assert_unavailable(listing.json(), may_have_saved=False)
    assert_unavailable(search.json(), may_have_saved=True)  # POST: Brain cannot tell a search from a write here
    assert_unavailable(save.json(), may_have_saved=True)


def test_a_rest_save_when_the_database_goes_away_right_after_it_commits_loses_nothing(brain_url, outage, monkeypatch):
    org = make_org()
    auth = {"Authorization": f"Bearer {make_token(org).plaintext}"}
    import memory.api

    real = memory.api.add_document

    def saved_then_away(**kw):
        saved = real(**kw)  # committed
        outage.start()
        Document.objects.exists()  # the view reads once more after the write, and the database is gone
        return saved

    monkeypatch.setattr(memory.api, "add_document", saved_then_away)
    response = httpx.post(f"{brain_url}/api/v1/documents", json=POLICY, headers=auth, timeout=60)
    outage.stop()
    monkeypatch.undo()
    assert response.headers["content-type"].startswith("application/json"), response.text[:200]
    assert response.status_code == 503
    assert_unavailable(response.json(), may_have_saved=True)
    assert Document.objects.filter(org=org, external_id="travel-1").count() == 1  # it was saved
    again = httpx.post(f"{brain_url}/api/v1/documents", json=POLICY, headers=auth, timeout=60)
    assert again.status_code == 200, again.text  # sending it again is safe: the same document
    assert again.json()["created"] is False
    assert Document.objects.filter(org=org, external_id="travel-1").count() == 1


def test_mcp_calls_while_the_database_is_away_answer_a_json_rpc_error_that_is_retryable(brain_url, outage):
    token = make_token(make_org()).plaintext
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"}
    request = {"jsonrpc": "2.0", "id": 7, "method": "tools/call",
               "params": {"name": "add_company_knowledge", "arguments": {"title": "T", "content": "C"}}}  # fmt: skip
    outage.start()
    response = httpx.post(f"{brain_url}/mcp", json=request, headers=headers, timeout=60)
    outage.stop()
    assert response.status_code == 503, response.text
    assert response.headers["content-type"].startswith("application/json"), response.text[:200]
    body = response.json()
    assert body["jsonrpc"] == "2.0"
    assert body["id"] == 7
    assert body["error"]["data"] == {"code": "unavailable", "retryable": True}
    assert "may have been saved" in body["error"]["message"]


def test_an_mcp_save_when_the_database_goes_away_inside_the_tool_is_retryable_and_loses_nothing(
    brain_url, outage, monkeypatch
):
    org = make_org()
    token = make_token(org).plaintext
    import memory.mcp_tools.documents as tools

    real = tools.add_document

    def saved_then_away(**kw):
        saved = real(**kw)  # committed
        outage.start()
        Document.objects.exists()  # the tool reads once more after its write, and the database is gone
        return saved

    arguments = {"title": POLICY["title"], "content": POLICY["content"], "external_id": POLICY["external_id"]}
    with McpCaller(brain_url, token) as client:
        monkeypatch.setattr(tools, "add_document", saved_then_away)
        result = client.call("add_company_knowledge", arguments)
        outage.stop()
        monkeypatch.undo()
        assert result.is_error
        error = json.loads(result.content[1].text)["error"]
        assert (error["code"], error["retryable"]) == ("unavailable", True)
        assert "may have been saved" in result.content[0].text
        assert Document.objects.filter(org=org, external_id="travel-1").count() == 1
        again = client.call("add_company_knowledge", arguments)
        assert not again.is_error, again.content[0].text
    assert Document.objects.filter(org=org, external_id="travel-1").count() == 1


# --- a real restart of Brain's PostgreSQL under load ------------------------------------------


def embedded_postgres() -> None:
    """Skip unless the tests' database is the embedded cluster, which this test stops and starts."""
    from launcher import services

    socket_dir = str(services.data_dir() / "postgres")
    if (
        not (services.data_dir() / "postgres" / "postmaster.pid").exists()
        or connection.settings_dict["HOST"] != socket_dir
    ):
        pytest.skip("this test stops and starts the embedded PostgreSQL; the tests run on another one")


@dataclass
class Load:
    """Callers that keep reading over REST until told to stop, keeping every answer (or failure)."""

    url: str
    token: str
    answers: list[tuple[int, str, float]] = field(default_factory=list)  # status, body, when
    failures: list[str] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)

    def call(self) -> None:
        auth = {"Authorization": f"Bearer {self.token}"}
        with httpx.Client(base_url=self.url, headers=auth, timeout=60) as client:
            while not self.stop.is_set():
                try:
                    response = client.get("/api/v1/documents")
                except httpx.HTTPError as exc:  # a hang past the timeout, or a dropped connection
                    self.failures.append(repr(exc))
                    continue
                self.answers.append((response.status_code, response.text, time.monotonic()))

    def since(self, moment: float) -> list[int]:
        return [status for status, _, when in list(self.answers) if when > moment]


def test_postgres_restarted_under_load_answers_clean_503s_and_recovers_by_itself(brain_url):
    from launcher import services

    embedded_postgres()
    load = Load(brain_url, make_token(make_org()).plaintext)
    callers = [threading.Thread(target=load.call, daemon=True) for _ in range(3)]
    for caller in callers:
        caller.start()
    try:
        started = time.monotonic()
        wait_until(lambda: load.since(started).count(200) >= 3, what="the callers' first answers")
        stopped = time.monotonic()
        assert services.stop_postgres()  # a fast shutdown: open connections are dropped
        try:
            wait_until(lambda: bool(set(load.since(stopped)) - {200}), what="an answer while the database is down")
        finally:  # as ./brainctl starts it, from a process of its own that leaves it running
            subprocess.run(
                [sys.executable, "-c", "from launcher import services; services.start_postgres()"], cwd=ROOT, check=True
            )
        back = time.monotonic()
        # Nobody restarts the web: its next requests find the database again on their own.
        wait_until(lambda: load.since(back).count(200) >= 6, what="answers once the database is back")
    finally:
        load.stop.set()
        for caller in callers:
            caller.join()
        connection.close()  # the test's own connection went with the old server
    assert load.failures == []
    assert {status for status, _, _ in load.answers} == {200, 503}
    for status, body, _ in load.answers:
        if status == 503:
            assert json.loads(body)["code"] == "unavailable", body
