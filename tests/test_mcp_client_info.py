"""Which assistant app a report came from: the name and version the client gives at initialize,
and the connection's session id, kept over Brain's stateless endpoint and shown in the admin."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx2
import mcp_types as types
import pytest
from django.test import Client
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

import brain
from brain.core.services import mark_memory_built
from brain.mcp import sessions
from brain.models import Report
from conftest import make_org, make_token, make_user

pytestmark = pytest.mark.django_db(transaction=True)

ISSUE = {"category": "tool_error", "observed": "search timed out", "expected": "an answer"}


def reports_from(url: str, token: str, app: types.Implementation, count: int = 1, session_id: str = "") -> Any:
    """Open one MCP session as ``app`` and report ``count`` issues through it."""

    async def main() -> list[Any]:
        headers = {"Authorization": f"Bearer {token}", "User-Agent": "assistant-http/7.1"}
        if session_id:
            headers[sessions.HEADER] = session_id
        async with (
            httpx2.AsyncClient(headers=headers, timeout=60) as http,
            streamable_http_client(f"{url}/mcp", http_client=http) as (read, write),
            ClientSession(read, write, client_info=app) as session,
        ):
            await session.initialize()
            return [await session.call_tool("report_issue", ISSUE) for _ in range(count)]

    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, main()).result()


def test_a_report_keeps_the_assistant_apps_name_and_version_its_session_and_the_release(brain_url):
    org = make_org()
    mark_memory_built(org=org)
    token = make_token(org).plaintext

    results = reports_from(brain_url, token, types.Implementation(name="Claude Desktop", version="1.4.2"), count=2)
    reports_from(brain_url, token, types.Implementation(name="Cursor", version="0.50"))

    assert not any(result.is_error for result in results)
    first, second, other = Report.objects.filter(org=org).order_by("pk")
    assert (first.client_name, first.client_version) == ("Claude Desktop", "1.4.2")
    assert (other.client_name, other.client_version) == ("Cursor", "0.50")
    assert first.user_agent == "assistant-http/7.1"
    assert first.release == brain.__version__
    assert len(first.session_ref) >= 16
    assert second.session_ref == first.session_ref  # one connection, one session
    assert other.session_ref != first.session_ref


def test_a_session_id_brain_did_not_make_names_no_app(brain_url):
    org = make_org()
    mark_memory_built(org=org)
    forged = sessions.mint({"name": "Claude Desktop", "version": "1"}) + "x"

    reports_from(
        brain_url, make_token(org).plaintext, types.Implementation(name="Real", version="2"), session_id=forged
    )

    report = Report.objects.get(org=org)
    assert (report.client_name, report.client_version, report.session_ref) == ("", "", "")


def test_operators_see_where_a_report_came_from_in_the_admin(brain_url):
    org = make_org()
    mark_memory_built(org=org)
    reports_from(brain_url, make_token(org).plaintext, types.Implementation(name="Claude Desktop", version="1.4.2"))
    report = Report.objects.get(org=org)
    operator = Client()
    operator.force_login(make_user(is_superuser=True, is_staff=True))  # type: ignore[arg-type]

    listing = operator.get("/admin/brain/report/").content.decode()
    detail = operator.get(f"/admin/brain/report/{report.pk}/change/").content.decode()

    assert "Claude Desktop 1.4.2" in listing
    for value in ("Claude Desktop", "1.4.2", report.session_ref, "assistant-http/7.1", brain.__version__):
        assert value in detail


def test_initialize_hands_out_a_session_id_and_brain_ends_none(brain_url):
    org = make_org()
    headers = {"Authorization": f"Bearer {make_token(org).plaintext}", "Content-Type": "application/json",
               "Accept": "application/json, text/event-stream"}  # fmt: skip
    params = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "Zed", "version": "0.9"}}
    hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}
    with httpx2.Client(timeout=60) as http:
        answer = http.post(f"{brain_url}/mcp", json=hello, headers=headers)
        listed = http.post(
            f"{brain_url}/mcp",
            json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
            headers={**headers, "Mcp-Protocol-Version": "2025-11-25"},
        )
        session_id = answer.headers[sessions.HEADER]
        ended = http.delete(f"{brain_url}/mcp", headers={**headers, sessions.HEADER: session_id})

    assert answer.status_code == 200
    assert sessions.read(session_id)["name"] == "Zed"
    assert sessions.HEADER not in listed.headers  # only the initialize answer carries a new one
    assert ended.status_code == 405
