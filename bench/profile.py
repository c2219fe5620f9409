"""Where one MCP call's time goes, and how many SQL statements it runs.

    .venv/bin/python -m bench.profile --calls 500                  # get_profile
    .venv/bin/python -m bench.profile --calls 500 --search --chunks 1000   # and search_company_memory

Brain's server is started as ``bench.mcp_calls`` starts it (uvicorn, one process) and called at
concurrency 1, one tool after the other:

1. **Statements**: a second server, ``bench.statements`` (Brain's application with an execute
   wrapper on every connection), answers ``--statement-calls`` calls of each tool; printed per
   call, grouped by the stage that ran them and by their verb and first table.
2. **Profile**: the plain server (``brain.asgi``, nothing added) is recorded with py-spy
   (``--idle --threads``, raw collapsed stacks) while it answers ``--calls`` calls; each stack
   is folded into a stage by ``bench.stages`` and printed as a share of the samples and as
   milliseconds per call (samples / rate / calls). Threads that only wait for work are left out;
   the client's mean wall time per call is printed beside the sum, the rest being time no
   thread of the server was seen working or waiting on something (network, client, wake-ups).
   "in psycopg" is the part of a stage spent in the database driver: sending statements and
   waiting for Postgres, as against building them and the Python around them.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from bench.mcp_calls import ROOT, Arguments, issue_token, run_level, serving, setup_environment
from bench.stages import IDLE, STAGES, classify, in_database, parse_collapsed

STATEMENTS_APP = ["--factory", "bench.statements:build"]


def py_spy() -> str:
    found = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    if not Path(found).exists():
        raise SystemExit("py-spy is not installed: pip install -r requirements-dev.txt")
    return found


def search_arguments(chunks: int) -> tuple[str, list[dict[str, object]]]:
    """A read token on an organisation of ``chunks`` synthetic passages (``bench.corpus``, kept
    between runs), and questions to ask it."""
    from bench.corpus import bench_org, fill, questions
    from brain.core.services import create_token

    org, actor = bench_org(f"bench-{chunks}")
    fill(org, actor, chunks)
    token = create_token(org=org, user=actor.user, scopes=["read"], expires_in_days=1).plaintext
    return token, [{"query": q, "top_k": 5} for q in questions(200)]


def count_statements(env: dict[str, str], port: int, tools: list[tuple[str, str, Arguments]], calls: int) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        log = Path(scratch) / "statements.jsonl"
        with serving(port, dict(env, BENCH_STATEMENTS_LOG=str(log)), STATEMENTS_APP) as (url, _pid):
            for tool, token, arguments in tools:
                asyncio.run(run_level(url, token, tool, arguments, 20, 1))  # warm-up
                log.write_text("")
                result = asyncio.run(run_level(url, token, tool, arguments, calls, 1))
                requests = [json.loads(line)["statements"] for line in log.read_text().splitlines()]
                print_statements(tool, requests, result["errors"])


def print_statements(tool: str, requests: list[list[list[str]]], errors: int) -> None:
    counts = sorted(len(r) for r in requests)
    if not counts:
        print(f"\n{tool}: no requests logged")
        return
    groups = Counter((stage, head) for r in requests for stage, head in r)
    per_call = sum(counts) / len(counts)
    print(
        f"\n{tool}: {per_call:.2f} statements per call over {len(counts)} calls "
        f"(fewest {counts[0]}, most {counts[-1]}, errors {errors})"
    )
    print(f"  {'stage':<12} {'per call':>8}  statement")
    order = {stage: i for i, stage in enumerate(STAGES)}
    for (stage, head), n in sorted(groups.items(), key=lambda item: (order.get(item[0][0], 99), -item[1])):
        print(f"  {stage:<12} {n / len(counts):>8.2f}  {head}")


def profile(
    env: dict[str, str], port: int, tool: str, token: str, arguments: Arguments, calls: int, rate: int, keep: str = ""
) -> None:
    with serving(port, env) as (url, pid), tempfile.TemporaryDirectory() as scratch:
        asyncio.run(run_level(url, token, tool, arguments, 100, 1))  # warm-up: caches, the model
        out = Path(scratch) / "stacks.txt"
        spy = subprocess.Popen(
            [
                py_spy(),
                "record",
                "--pid",
                str(pid),
                "--format",
                "raw",
                "--output",
                str(out),
                "--rate",
                str(rate),
                "--idle",
                "--threads",
                "--nonblocking",
                "--full-filenames",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        time.sleep(1.0)  # py-spy attaches
        started = time.perf_counter()
        result = asyncio.run(run_level(url, token, tool, arguments, calls, 1))
        wall = time.perf_counter() - started
        spy.send_signal(signal.SIGINT)
        _, err = spy.communicate(timeout=60)
        if not out.exists():
            raise SystemExit(f"py-spy wrote nothing: {err.decode(errors='replace')[-500:]}")
        if keep:
            Path(keep).mkdir(parents=True, exist_ok=True)
            shutil.copy(out, Path(keep) / f"{tool}.stacks.txt")
        samples: Counter[str] = Counter()
        database: Counter[str] = Counter()
        for line in out.read_text().splitlines():
            parsed = parse_collapsed(line)
            if parsed:
                stage = classify(parsed[0])
                samples[stage] += parsed[1]
                database[stage] += parsed[1] if in_database(parsed[0]) else 0
    print_profile(tool, samples, database, calls=result["calls"], wall=wall, rate=rate, result=result)


def print_profile(
    tool: str, samples: Counter[str], database: Counter[str], *, calls: int, wall: float, rate: int, result: dict
) -> None:
    busy = sum(n for stage, n in samples.items() if stage != IDLE)
    wall_ms = wall * 1000 / calls
    print(
        f"\n{tool}: {calls} calls at concurrency 1, p50 {result['p50_ms']} ms, p95 {result['p95_ms']} ms, "
        f"mean {wall_ms:.2f} ms, {result['errors']} errors; "
        f"{busy} samples at {rate} Hz, {samples[IDLE]} idle left out"
    )
    print(f"  {'stage':<12} {'share %':>8} {'ms/call':>8} {'in psycopg':>10}")
    accounted = in_driver = 0.0
    for stage in STAGES:
        ms, db_ms = (n / rate * 1000 / calls for n in (samples[stage], database[stage]))
        accounted, in_driver = accounted + ms, in_driver + db_ms
        print(f"  {stage:<12} {100 * samples[stage] / max(busy, 1):>8.1f} {ms:>8.2f} {db_ms:>10.2f}")
    print(f"  {'sampled':<12} {100.0:>8.1f} {accounted:>8.2f} {in_driver:>10.2f}")
    print(f"  {'unsampled':<12} {'':>8} {wall_ms - accounted:>8.2f}   (no server thread seen busy)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=500, help="calls of each tool under the profiler")
    parser.add_argument("--statement-calls", type=int, default=50, help="calls of each tool counting statements")
    parser.add_argument("--search", action="store_true", help="search_company_memory as well as get_profile")
    parser.add_argument("--chunks", type=int, default=1000, help="passages of the organisation searched")
    parser.add_argument("--rate", type=int, default=250, help="py-spy's samples per second")
    parser.add_argument("--port", type=int, default=8771)
    parser.add_argument("--keep", default="", help="a folder to keep py-spy's stacks in (<tool>.stacks.txt)")
    args = parser.parse_args()

    env = setup_environment()
    env["BRAIN_BASE_URL"] = f"http://127.0.0.1:{args.port}"
    subprocess.run([sys.executable, "manage.py", "migrate", "-v", "0"], cwd=ROOT, env=env, check=True)
    tools: list[tuple[str, str, Arguments]] = [("get_profile", issue_token(), {})]
    if args.search:
        tools.append(("search_company_memory", *search_arguments(args.chunks)))
    print(f"cores={os.cpu_count()} calls={args.calls} statement_calls={args.statement_calls}")
    count_statements(env, args.port, tools, args.statement_calls)
    for tool, token, arguments in tools:
        profile(env, args.port, tool, token, arguments, args.calls, args.rate, args.keep)


if __name__ == "__main__":
    main()
