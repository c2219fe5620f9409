"""Metering is exact under concurrency: many callers at the allowance's edge never spend more than
there is and never pay twice, through real MCP sessions against the running app and through the
charge itself from many database connections at once."""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from django.db import connection
from django.db.models import Sum

from brain.mcp.prices import READ, REMEMBERING
from brain.models import ToolCall
from conftest import make_org, make_token
from tests.conftest import mcp_session
from usage.metering import OutOfCredits, charge, month_of
from usage.models import Account, Month

pytestmark = pytest.mark.django_db(transaction=True)

CLIENTS = 50


def at_edge(org: Any, *, free_left: int, credits: int) -> None:
    Month.objects.update_or_create(org=org, month=month_of(org), defaults={"free_used": 1000 - free_left})
    Account.objects.filter(org=org).update(credits=credits)


def test_fifty_mcp_clients_at_the_allowances_edge_spend_exactly_what_there_is(brain_url):
    org = make_org()
    tokens = [make_token(org).plaintext for _ in range(CLIENTS)]
    at_edge(org, free_left=10, credits=20)
    start = asyncio.Event()

    async def client(token: str) -> bool:
        async with mcp_session(brain_url, token) as session:
            await start.wait()  # every session is open before the first call goes out
            result = await session.call_tool("search_company_memory", {"query": "holiday policy"})
            return not result.is_error

    async def main() -> list[bool]:
        tasks = [asyncio.create_task(client(token)) for token in tokens]
        await asyncio.sleep(0)
        while sum(1 for _ in asyncio.all_tasks()) < CLIENTS + 1:
            await asyncio.sleep(0.01)
        await asyncio.sleep(1.0)
        start.set()
        return await asyncio.gather(*tasks)

    with ThreadPoolExecutor(max_workers=1) as pool:
        answered = pool.submit(asyncio.run, main()).result(timeout=300)

    assert answered.count(True) == 30
    calls = ToolCall.objects.filter(org=org, tool="search_company_memory")
    assert calls.count() == CLIENTS
    assert calls.filter(outcome="ok").count() == 30
    assert calls.filter(outcome="refused", error_code="out_of_credits", credits=0).count() == 20
    assert calls.aggregate(total=Sum("credits"))["total"] == 20
    month = Month.objects.get(org=org, month=month_of(org))
    assert (month.free_used, month.credits_spent, month.reads) == (1000, 20, 30)
    assert Account.objects.get(org=org).credits == 0


def test_charges_from_fifty_connections_at_once_never_overdraw_or_double_count(db):
    org = make_org()
    at_edge(org, free_left=25, credits=40)
    barrier = threading.Barrier(CLIENTS)
    taken: list[tuple[int, int]] = []
    refused: list[int] = []
    lock = threading.Lock()

    def caller(n: int) -> None:
        try:
            barrier.wait()
            for _ in range(3):
                price = READ if n % 5 else REMEMBERING  # one unit from the allowance, or two credits
                try:
                    spent = charge(org=org, price=price)
                except OutOfCredits:
                    with lock:
                        refused.append(n)
                else:
                    with lock:
                        taken.append((spent.free, spent.credits))
        finally:
            connection.close()

    threads = [threading.Thread(target=caller, args=(n,)) for n in range(CLIENTS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)

    free, credits = sum(f for f, _ in taken), sum(c for _, c in taken)
    balance = Account.objects.get(org=org).credits
    assert free == 25  # reads outnumber the free units: all of them and no more are taken
    assert credits == 40 - balance
    assert balance in (0, 1)  # one credit may be left that no two-credit price fits
    month = Month.objects.get(org=org, month=month_of(org))
    assert (month.free_used, month.credits_spent, month.reads) == (1000, credits, len(taken))
    assert len(taken) + len(refused) == CLIENTS * 3
    assert refused, "the edge was reached"
