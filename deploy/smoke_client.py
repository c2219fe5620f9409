"""The client deploy/smoke.sh runs inside the stack's network (in Brain's own image): saves,
searches over MCP with the ``mcp`` SDK client, and waits on documents, printing one JSON object
per command for the script to read.

    python -m deploy.smoke_client save-mcp URL TOKEN
    python -m deploy.smoke_client save URL TOKEN --count 20 --chars 3000 --tag pair
    python -m deploy.smoke_client hold URL TOKEN --chars 90000
    python -m deploy.smoke_client wait URL TOKEN DOCUMENT_ID...
    python -m deploy.smoke_client search URL TOKEN QUERY --rounds 20

URL is where Brain answers (the proxy), TOKEN a read-write token. Waits poll until the documents
move no more for --idle seconds (300 by default), so a slow machine makes the run longer, not failed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
import uuid
from collections.abc import Sequence
from typing import Any

import httpx
import httpx2
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

SENTENCE = (
    "Meridian Freight moved its Rotterdam warehouse to Antwerp in March, and Priya Shah now signs "
    "off every shipment above 40,000 euros; the night shift counts pallets at 02:00. "
)
SAVED_FACT = "The smoke test's pass phrase is heliotrope lantern, chosen by Tomas Berg for the deployment check."


def report(**fields: Any) -> None:
    print(json.dumps(fields), flush=True)


RETRYABLE = {502, 503, 504}
retried: list[str] = []  # the answers that were retried: "503: the reason"


def api(url: str, token: str) -> httpx.Client:
    return httpx.Client(base_url=f"{url}/api/v1", headers={"Authorization": f"Bearer {token}"}, timeout=60)


def call(client: httpx.Client, method: str, path: str, idle: float, **kwargs: Any) -> Any:
    """A REST call, tried again after a retryable answer (502, 503, 504, or no connection) for up to
    ``idle`` seconds, waiting what Retry-After says (at most 5 s); the JSON body of the answer."""
    deadline = time.monotonic() + idle
    while True:
        try:
            response = client.request(method, path, **kwargs)
        except httpx.TransportError as exc:
            reason, wait_seconds = f"no answer: {exc}", 1.0
        else:
            if response.status_code not in RETRYABLE:
                return response.raise_for_status().json()
            reason = f"{response.status_code}: {response.text[:200]}"
            wait_seconds = min(5.0, float(response.headers.get("Retry-After", "1") or 1))
        retried.append(reason)
        if time.monotonic() + wait_seconds > deadline:
            raise SystemExit(f"{method} {path} kept failing for {idle} s; last: {reason}")
        time.sleep(wait_seconds)


async def _mcp(url: str, token: str, tool: str, arguments: dict[str, Any], rounds: int = 1) -> tuple[Any, list[float]]:
    headers = {"Authorization": f"Bearer {token}"}
    times: list[float] = []
    result: Any = None
    async with (
        httpx2.AsyncClient(headers=headers, timeout=120) as http,
        streamable_http_client(f"{url}/mcp", http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        for _ in range(rounds):
            started = time.perf_counter()
            result = await session.call_tool(tool, arguments)
            times.append(time.perf_counter() - started)
            if result.is_error:
                raise SystemExit(f"{tool} answered an error: {result.content}")
    return result, times


def save_mcp(args: argparse.Namespace) -> None:
    """One save through the MCP tool an assistant uses."""
    arguments = {"title": "Deployment check", "content": SAVED_FACT, "external_id": f"smoke-{uuid.uuid4().hex}"}
    result, times = asyncio.run(_mcp(args.url, args.token, "add_company_knowledge", arguments))
    with api(args.url, args.token) as client:
        found = call(client, "GET", "/documents", args.idle, params={"limit": 200})
    rows = found["results"] if isinstance(found, dict) else found
    ids = [row["document_id"] for row in rows if row["external_id"] == arguments["external_id"]]
    if not ids:
        raise SystemExit("the document saved over MCP is not listed by the REST API")
    report(document_id=ids[0], seconds=round(times[0], 3), said=str(result.content[0].text)[:120], retried=retried)


def save(args: argparse.Namespace) -> None:
    """``count`` documents over REST, each about ``chars`` characters long."""
    ids = []
    started = time.perf_counter()
    with api(args.url, args.token) as client:
        for n in range(args.count):
            text = f"Report {args.tag} {n}. " + SENTENCE * max(1, args.chars // len(SENTENCE))
            body = {"title": f"Smoke {args.tag} {n}", "content": text, "external_id": f"smoke-{args.tag}-{n}"}
            ids.append(call(client, "POST", "/documents", args.idle, json=body)["document_id"])
    report(document_ids=ids, seconds=round(time.perf_counter() - started, 3), retried=retried)


def hold(args: argparse.Namespace) -> None:
    """Saves one long document and returns once a worker is ingesting it (status processing)."""
    text = f"Long report {uuid.uuid4().hex}. " + SENTENCE * (args.chars // len(SENTENCE))
    with api(args.url, args.token) as client:
        body = {"title": "Smoke long report", "content": text, "external_id": f"smoke-long-{uuid.uuid4().hex}"}
        document_id = call(client, "POST", "/documents", args.idle, json=body)["document_id"]
        deadline = time.monotonic() + args.idle
        while time.monotonic() < deadline:
            status = call(client, "GET", f"/documents/{document_id}", args.idle)["status"]
            if status == "processing":
                report(document_id=document_id, status=status, retried=retried)
                return
            if status in ("ready", "failed"):
                raise SystemExit(f"the long document was {status} before a worker was seen holding it")
            time.sleep(0.1)
    raise SystemExit(f"no worker took the long document within {args.idle} s")


def wait(args: argparse.Namespace) -> None:
    """Until every document is ready; fails when one fails or none moves for ``idle`` seconds."""
    started = time.perf_counter()
    waiting = set(args.document_ids)
    seen: dict[str, str] = {}
    moved = time.monotonic()
    with api(args.url, args.token) as client:
        while waiting:
            for document_id in sorted(waiting):
                status = call(client, "GET", f"/documents/{document_id}", args.idle)["status"]
                if status != seen.get(document_id):
                    seen[document_id], moved = status, time.monotonic()
                if status == "failed":
                    raise SystemExit(f"document {document_id} failed")
                if status == "ready":
                    waiting.discard(document_id)
            if waiting and time.monotonic() - moved > args.idle:
                raise SystemExit(f"{len(waiting)} documents did not move for {args.idle} s: {sorted(waiting)[:5]}")
            if waiting:
                time.sleep(0.25)
    report(ready=len(args.document_ids), seconds=round(time.perf_counter() - started, 3), retried=retried)


def search(args: argparse.Namespace) -> None:
    """``rounds`` searches over one MCP session; the first must find what ``expect`` says."""
    arguments = {"query": args.query, "top_k": 5}
    result, times = asyncio.run(_mcp(args.url, args.token, "search_company_memory", arguments, args.rounds))
    text = " ".join(getattr(part, "text", "") for part in result.content)
    if args.expect and args.expect.lower() not in text.lower():
        raise SystemExit(f"the search for {args.query!r} did not find {args.expect!r}: {text[:300]}")
    ordered = sorted(times)
    report(
        rounds=len(times),
        first_seconds=round(times[0], 3),
        median_ms=round(statistics.median(times) * 1000, 1),
        p95_ms=round(ordered[max(0, int(len(ordered) * 0.95) - 1)] * 1000, 1),
        found=bool(args.expect),
    )


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="python -m deploy.smoke_client")
    commands = top.add_subparsers(dest="command", required=True)
    for name in ("save-mcp", "save", "hold", "wait", "search"):
        sub = commands.add_parser(name)
        sub.add_argument("url")
        sub.add_argument("token")
        sub.add_argument("--idle", type=float, default=300.0)
        if name == "save":
            sub.add_argument("--count", type=int, default=20)
            sub.add_argument("--chars", type=int, default=3000)
            sub.add_argument("--tag", default="one")
        if name == "hold":
            sub.add_argument("--chars", type=int, default=90_000)
        if name == "wait":
            sub.add_argument("document_ids", nargs="+")
        if name == "search":
            sub.add_argument("query")
            sub.add_argument("--rounds", type=int, default=20)
            sub.add_argument("--expect", default="")
    return top


def main(argv: Sequence[str]) -> int:
    args = parser().parse_args(argv)
    url = args.url.rstrip("/")
    args.url = url
    {"save-mcp": save_mcp, "save": save, "hold": hold, "wait": wait, "search": search}[args.command](args)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
