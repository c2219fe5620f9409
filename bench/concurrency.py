"""Many MCP clients at once for a fixed time: throughput, latency and errors per tool and level.

    .venv/bin/python -m bench.concurrency --clients 10,50 --seconds 60 --chunks 10000

One server (``bench.mcp_calls.serve``: uvicorn, one process, as ./brainctl run starts it) over
an organisation of synthetic passages (``bench.corpus``, kept between runs). Each client keeps
its own connection and calls back to back; ``search_company_memory`` takes the questions in
turn, ``get_profile`` takes no arguments. The aim: no errors, and at the highest level at least
80% of the throughput at the lowest.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys

from bench.mcp_calls import ROOT, run_level, serve, setup_environment


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", default="10,50")
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--tools", default="search_company_memory,get_profile")
    parser.add_argument("--chunks", type=int, default=10_000)
    parser.add_argument("--port", type=int, default=8769)
    args = parser.parse_args()
    env = setup_environment()
    subprocess.run([sys.executable, "manage.py", "migrate", "-v", "0"], cwd=ROOT, env=env, check=True)
    import django

    django.setup()
    from bench.corpus import bench_org, chunk_count, fill, questions
    from brain.core.services import create_token

    org, actor = bench_org(f"bench-{args.chunks}")
    fill(org, actor, args.chunks)
    token = create_token(org=org, user=actor.user, scopes=["read"], expires_in_days=1).plaintext
    arguments: dict[str, list[dict[str, object]]] = {
        "search_company_memory": [{"query": q, "top_k": 5} for q in questions(500)],
        "get_profile": [{}],
    }
    levels = [int(c) for c in args.clients.split(",")]
    print(f"cores={os.cpu_count()} chunks={chunk_count(org)} seconds={args.seconds:g} per level")
    print(
        f"{'tool':<22} {'clients':>7} {'calls':>7} {'calls/s':>8} {'p50 ms':>7} {'p95 ms':>7} {'p99 ms':>7} "
        f"{'errors':>6}"
    )
    with serve(args.port, env) as url:
        for tool in args.tools.split(","):
            asyncio.run(run_level(url, token, tool, arguments[tool], 200, 4))  # warm-up: model, caches
            results = [
                asyncio.run(run_level(url, token, tool, arguments[tool], 0, level, seconds=args.seconds))
                for level in levels
            ]
            for r in results:
                print(
                    f"{tool:<22} {r['concurrency']:>7} {r['calls']:>7} {r['calls_per_s']:>8} {r['p50_ms']:>7} "
                    f"{r['p95_ms']:>7} {r['p99_ms']:>7} {r['errors']:>6}",
                    flush=True,
                )
            ratio = results[-1]["calls_per_s"] / max(r["calls_per_s"] for r in results[:-1] or results)
            print(f"{tool:<22} {levels[-1]} clients reach {ratio:.0%} of the best throughput below them")


if __name__ == "__main__":
    main()
