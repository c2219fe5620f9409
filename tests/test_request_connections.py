"""Under ASGI, page and REST requests leave no idle database connection behind; MCP calls keep
reusing theirs (brain.infra.request_connections)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from django.conf import settings
from django.db import connection

from conftest import make_org, make_token
from tests.conftest import call
from tests.progress import wait_until

pytestmark = pytest.mark.django_db(transaction=True)
CONCURRENT = 30


def server_connections() -> int:
    """Connections to the test database other than this test's own."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
        return int(cursor.fetchone()[0])


def settled(expected_at_most: int) -> int:
    """The server's connection count once it is at most ``expected_at_most``, or after a generous
    while: a closed connection's backend ends when the server gets to it."""
    wait_until(lambda: server_connections() <= expected_at_most, what="the server to end closed connections", poll=0.1)
    return server_connections()


def test_concurrent_page_and_rest_requests_close_their_connections_when_they_end(brain_url):
    assert connection.settings_dict["CONN_MAX_AGE"] > 0  # reuse is on, as ./brainctl run has it
    base = brain_url.removesuffix("/mcp")
    token = make_token(make_org()).plaintext
    before = server_connections()

    def probe(i: int) -> int:
        if i % 2:
            return httpx.get(f"{base}/readyz", timeout=30).status_code
        headers = {"Authorization": f"Bearer {token}"}
        return httpx.post(f"{base}/api/v1/search", json={"query": "travel"}, headers=headers, timeout=30).status_code

    with ThreadPoolExecutor(CONCURRENT) as pool:
        codes = list(pool.map(probe, range(CONCURRENT)))
    assert set(codes) == {200}, codes
    # A web process's search threads keep a connection each for reuse, as its MCP threads do
    # (memory.index.side_by_side): at most that many stay, however many requests searched.
    kept = settings.BRAIN_SEARCH_THREADS
    assert settled(before + kept) <= before + kept


def test_mcp_calls_reuse_a_bounded_set_of_connections(brain_url):
    token = make_token(make_org()).plaintext
    before = server_connections()
    for _ in range(3):
        with ThreadPoolExecutor(8) as pool:
            list(pool.map(lambda _: call(brain_url, token, "search_company_memory", {"query": "travel"}), range(8)))
    # The MCP threads and the search threads keep a connection each for reuse: no more than the
    # thread pools have threads, however many calls were made.
    assert server_connections() - before <= 32 + settings.BRAIN_SEARCH_THREADS
