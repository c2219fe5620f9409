"""Calls per second and latency of an MCP tool over real HTTP, at several concurrency levels.

    .venv/bin/python -m bench.mcp_calls --tool get_profile --calls 2000 --concurrency 1,10
    .venv/bin/python -m bench.mcp_calls --oauth   # a brn_ token and an OAuth access token, side by side
    .venv/bin/python -m bench.mcp_calls --floor   # Brain against a bare MCP SDK server, side by side

Starts the embedded services if needed, serves brain.asgi with uvicorn in a child process (one
worker, as ./brainctl run does), issues a token in a throwaway organisation, and sends JSON-RPC
``tools/call`` POSTs with httpx (stateless server: no session set-up per call).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent


def setup_environment() -> dict[str, str]:
    sys.path.insert(0, str(ROOT))
    from launcher import services

    env = dict(os.environ, DJANGO_SETTINGS_MODULE="brain.settings", HF_HUB_OFFLINE="1")
    env.update(services.ensure_services())
    os.environ.update(env)
    return env


def issue_token() -> str:
    import django

    django.setup()
    from django.contrib.auth.models import User

    from brain.core.services import add_member, create_organisation, create_token, mark_memory_built
    from brain.models import Organisation

    org = Organisation.objects.filter(slug="bench").first() or create_organisation(
        slug="bench", name="Bench", plan="unlimited"
    )
    mark_memory_built(org=org)
    user = User.objects.filter(username="bench").first() or User.objects.create_user("bench", "bench@example.com")
    add_member(org=org, user=user)
    return create_token(org=org, user=user, scopes=["read", "write"], name="bench", expires_in_days=1).plaintext


def issue_oauth_token(base_url: str) -> str:
    """An OAuth access token of the same person and access as ``issue_token``'s, as the consent
    page and the token endpoint make it (brain.oauth): a connected app and a token bound to /mcp."""
    import secrets
    from datetime import timedelta

    from django.conf import settings
    from django.contrib.auth.models import User
    from django.utils import timezone
    from oauth2_provider.models import AccessToken, Application, set_token_value

    from brain.models import ApiToken, Organisation
    from brain.oauth.connections import connect_app

    settings.BRAIN_BASE_URL = base_url
    org, user = Organisation.objects.get(slug="bench"), User.objects.get(username="bench")
    app = Application.objects.create(
        name="Bench app",
        client_type=Application.CLIENT_PUBLIC,
        authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
        redirect_uris="http://127.0.0.1:9/callback",
        registration_source=Application.RegistrationSource.DCR,
    )
    connect_app(user=user, org=org, application=app, access=ApiToken.WRITE)
    plaintext = secrets.token_urlsafe(30)
    token = AccessToken(
        user=user,
        application=app,
        scope="read write",
        expires=timezone.now() + timedelta(hours=1),
        resource=[f"{base_url}/mcp"],
    )
    set_token_value(token, plaintext)
    token.save()
    return plaintext


BRAIN_APP = ["brain.asgi:application"]


@contextmanager
def serving(port: int, env: dict[str, str] | None = None, app: Sequence[str] = BRAIN_APP) -> Iterator[tuple[str, int]]:
    """Run ``app`` (uvicorn's arguments naming it; brain.asgi unless told) in uvicorn, one process
    with the HTTP parser and event loop ./brainctl run gives it (``BENCH_SERVER=h11,asyncio``
    names others, for a figure from before); yield the /mcp URL once it answers, and the
    server's process id."""
    from launcher.processes import EVENT_LOOP, HTTP_PARSER

    parser, loop = os.environ.get("BENCH_SERVER", f"{HTTP_PARSER},{EVENT_LOOP}").split(",")
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "uvicorn",
            *app,
            "--port",
            str(port),
            "--http",
            parser,
            "--loop",
            loop,
            "--no-access-log",
            "--log-level",
            "warning",
        ],
        # Every client of a bench comes from loopback: no limit per address (docs/operations.md).
        cwd=ROOT,
        env={"BRAIN_HTTP_MAX_CONNECTIONS_PER_ADDRESS": "0", **(env or os.environ)},
    )
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        for _ in range(300):
            if server.poll() is not None:
                raise SystemExit(f"the server on port {port} exited ({server.returncode}); is the port taken?")
            try:
                httpx.post(url, timeout=1)
                break
            except httpx.TransportError:
                time.sleep(0.1)
        yield url, server.pid
    finally:
        server.terminate()
        server.wait(10)


@contextmanager
def serve(port: int, env: dict[str, str] | None = None, app: Sequence[str] = BRAIN_APP) -> Iterator[str]:
    with serving(port, env, app) as (url, _pid):
        yield url


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(pct / 100 * (len(ordered) - 1))))]


Arguments = dict[str, object] | Sequence[dict[str, object]]


async def run_level(
    url: str,
    token: str,
    tool: str,
    args: Arguments,
    calls: int,
    concurrency: int,
    *,
    seconds: float | None = None,
) -> dict:
    """``concurrency`` clients, each with a connection of its own, calling ``tool`` back to back:
    ``calls`` calls in all, or as many as fit in ``seconds`` when it is given. ``args`` may be a
    list, taken in turn (different queries). A call fails on a transport error, a status other
    than 200 or a tool error."""
    variants = [args] if isinstance(args, dict) else list(args)
    bodies = [
        json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool, "arguments": a}})
        for a in variants
    ]
    headers = {
        "Authorization": f"Bearer {token}",
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
    }
    latencies: list[float] = []
    errors = 0
    issued = 0
    deadline = time.perf_counter() + seconds if seconds else None

    def more() -> bool:
        return time.perf_counter() < deadline if deadline is not None else issued < calls

    async def client() -> None:
        # One connection per client, as separate assistants would have; a shared pool of many
        # connections costs the client more per call than the server spends on it.
        nonlocal errors, issued
        limits = httpx.Limits(max_connections=1, max_keepalive_connections=1)
        async with httpx.AsyncClient(timeout=60, limits=limits) as http:
            while more():
                body = bodies[issued % len(bodies)]
                issued += 1
                started = time.perf_counter()
                try:
                    response = await http.post(url, content=body, headers=headers)
                    failed = response.status_code != 200 or bool(response.json()["result"].get("isError"))
                except (httpx.HTTPError, ValueError, KeyError):
                    failed = True
                latencies.append((time.perf_counter() - started) * 1000)
                errors += failed

    started = time.perf_counter()
    await asyncio.gather(*(client() for _ in range(concurrency)))
    elapsed = time.perf_counter() - started
    return {
        "concurrency": concurrency,
        "calls": len(latencies),
        "errors": errors,
        "seconds": round(elapsed, 1),
        "calls_per_s": round(len(latencies) / elapsed, 1),
        "p50_ms": round(statistics.median(latencies), 1),
        "p95_ms": round(percentile(latencies, 95), 1),
        "p99_ms": round(percentile(latencies, 99), 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tool", default="get_profile")
    parser.add_argument("--arguments", default="{}", help="JSON arguments for the tool")
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--concurrency", default="1,10")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--oauth", action="store_true", help="also an OAuth access token, level by level")
    parser.add_argument("--floor", action="store_true", help="also a bare MCP SDK server (bench.floor), level by level")
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds per level with --oauth or --floor")
    args = parser.parse_args()

    env = setup_environment()
    env["BRAIN_BASE_URL"] = f"http://127.0.0.1:{args.port}"
    subprocess.run([sys.executable, "manage.py", "migrate", "-v", "0"], cwd=ROOT, env=env, check=True)
    token = issue_token()
    if args.floor:
        against_floor(args, env, token)
        return
    if args.oauth:
        compare(args, env, token, issue_oauth_token(env["BRAIN_BASE_URL"]))
        return
    with serve(args.port, env) as url:
        tool_args = json.loads(args.arguments)
        asyncio.run(run_level(url, token, args.tool, tool_args, 100, 4))  # warm-up
        print(f"tool={args.tool} calls={args.calls} cores={os.cpu_count()}")
        print(f"{'concurrency':>11} {'calls/s':>8} {'p50 ms':>7} {'p95 ms':>7} {'p99 ms':>7} {'errors':>6}")
        for level in [int(c) for c in args.concurrency.split(",")]:
            r = asyncio.run(run_level(url, token, args.tool, tool_args, args.calls, level))
            print(
                f"{level:>11} {r['calls_per_s']:>8} {r['p50_ms']:>7} {r['p95_ms']:>7} {r['p99_ms']:>7} {r['errors']:>6}"
            )


def compare(args: argparse.Namespace, env: dict[str, str], token: str, oauth_token: str) -> None:
    """The same calls with each kind of token, alternating in rounds so both see the same machine."""
    with serve(args.port, env) as url:
        tool_args = json.loads(args.arguments)
        for warm in (token, oauth_token):
            asyncio.run(run_level(url, warm, args.tool, tool_args, 100, 4))
        print(f"tool={args.tool} calls={args.calls} per token and level, 3 rounds, cores={os.cpu_count()}")
        print(
            f"{'concurrency':>11} {'token':>6} {'calls/s':>8} {'p50 ms':>7} {'p95 ms':>7} {'p99 ms':>7} {'errors':>6}"
        )
        for level in [int(c) for c in args.concurrency.split(",")]:
            runs: dict[str, list[dict]] = {"brn_": [], "oauth": []}
            for _round in range(args.rounds):
                for kind, value in (("brn_", token), ("oauth", oauth_token)):
                    runs[kind].append(
                        asyncio.run(run_level(url, value, args.tool, tool_args, args.calls // args.rounds, level))
                    )
            for kind, results in runs.items():
                m = median_round(results)
                print(
                    f"{level:>11} {kind:>6} {m['calls_per_s']:>8} {m['p50_ms']:>7} {m['p95_ms']:>7} {m['p99_ms']:>7} "
                    f"{m['errors']:>6}"
                )


def median_round(results: list[dict]) -> dict:
    """Each figure's median over the rounds; the errors of all of them."""
    keys = [
        key
        for key in ("calls_per_s", "p50_ms", "p95_ms", "p99_ms", "server_cpu_ms", "postgres_cpu_ms", "client_cpu_ms")
        if key in results[0]
    ]
    figures = {key: statistics.median(r[key] for r in results) for key in keys}
    return {**figures, "errors": sum(r["errors"] for r in results)}


def cpu_seconds(pid: int) -> float:
    """CPU time (user and system, all threads) the process ``pid`` has used so far."""
    import psutil

    times = psutil.Process(pid).cpu_times()
    return times.user + times.system


def postgres_cpu_seconds() -> float:
    """CPU time used so far by every PostgreSQL process on the machine (backends and helpers)."""
    import psutil

    total = 0.0
    for proc in psutil.process_iter(["name"]):
        if proc.info["name"] == "postgres":
            try:
                times = proc.cpu_times()
            except psutil.Error:  # a backend that ended meanwhile
                continue
            total += times.user + times.system
    return total


def measured_level(url: str, pid: int, token: str, tool: str, args: Arguments, calls: int, level: int) -> dict:
    """``run_level``, and the CPU time per call it took: the server's, PostgreSQL's and this
    client's own (backends that end within the round are not counted)."""
    before = (cpu_seconds(pid), postgres_cpu_seconds(), time.process_time())
    result = asyncio.run(run_level(url, token, tool, args, calls, level))
    after = (cpu_seconds(pid), postgres_cpu_seconds(), time.process_time())
    done = max(1, result["calls"])
    for key, start, end in zip(("server_cpu_ms", "postgres_cpu_ms", "client_cpu_ms"), before, after, strict=True):
        result[key] = round((end - start) * 1000 / done, 2)
    return result


def against_floor(args: argparse.Namespace, env: dict[str, str], token: str) -> None:
    """Brain and a bare SDK server (bench.floor) both running, called the same way in alternating
    rounds (floor, Brain, floor, Brain ...), so both see the same machine; Brain as a share of it.
    Each row also gives the CPU time a call took in the server process, in PostgreSQL and in this
    client: on two cores their sum bounds the calls a second either server can answer."""
    tool_args = json.loads(args.arguments)
    with serving(args.port, env) as brain_server, serving(free_port(), env, ["bench.floor:app"]) as floor_server:
        servers = {"floor": floor_server, "brain": brain_server}
        for url, _pid in servers.values():
            asyncio.run(run_level(url, token, args.tool, tool_args, 100, 4))
        per_round = max(1, args.calls // args.rounds)
        print(
            f"tool={args.tool} calls={per_round} per server, round and level, {args.rounds} rounds, "
            f"cores={os.cpu_count()}; CPU in ms a call: server, PostgreSQL, client"
        )
        print(
            f"{'concurrency':>11} {'server':>6} {'calls/s':>8} {'p50 ms':>7} {'p95 ms':>7} {'p99 ms':>7} {'errors':>6}"
            f" {'srv cpu':>7} {'pg cpu':>7} {'cli cpu':>7}"
        )
        for level in [int(c) for c in args.concurrency.split(",")]:
            runs: dict[str, list[dict]] = {name: [] for name in servers}
            for _round in range(args.rounds):
                for name, (url, pid) in servers.items():
                    runs[name].append(measured_level(url, pid, token, args.tool, tool_args, per_round, level))
            medians = {name: median_round(results) for name, results in runs.items()}
            for name, m in medians.items():
                cpu = f"{m['server_cpu_ms']:>7} {m['postgres_cpu_ms']:>7} {m['client_cpu_ms']:>7}"
                print(
                    f"{level:>11} {name:>6} {m['calls_per_s']:>8} {m['p50_ms']:>7} {m['p95_ms']:>7} {m['p99_ms']:>7} "
                    f"{m['errors']:>6} {cpu}"
                )
            brain, floor = medians["brain"], medians["floor"]
            print(
                f"{level:>11} {'ratio':>6} {brain['calls_per_s'] / floor['calls_per_s']:>8.2f} "
                f"{brain['p50_ms'] / floor['p50_ms']:>7.2f} {brain['p95_ms'] / floor['p95_ms']:>7.2f} "
                f"{brain['p99_ms'] / floor['p99_ms']:>7.2f}   brain/floor"
            )


if __name__ == "__main__":
    main()
