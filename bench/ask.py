"""ask_company_memory end to end over MCP at a given corpus size (chunks and facts).

.venv/bin/python -m bench.ask --chunks 100000 --facts 200000 --queries 200
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys

from bench.mcp_calls import ROOT, percentile, run_level, serve, setup_environment


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--facts", type=int, default=200_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--port", type=int, default=8768)
    args = parser.parse_args()
    env = setup_environment()
    subprocess.run([sys.executable, "manage.py", "migrate", "-v", "0"], cwd=ROOT, env=env, check=True)
    import django

    django.setup()
    from bench.corpus import bench_org, chunk_count, fact_count, fill, fill_facts, questions
    from brain.core.services import create_token

    org, actor = bench_org(f"bench-{args.chunks}")
    fill(org, actor, args.chunks)
    fill_facts(org, actor, args.facts)
    print(f"cores={os.cpu_count()} chunks={chunk_count(org)} facts={fact_count(org)} queries={args.queries}")
    token = create_token(org=org, user=actor.user, scopes=["read"], expires_in_days=1).plaintext
    with serve(args.port) as url:
        latencies = []
        for q in questions(args.queries + 10):
            r = asyncio.run(run_level(url, token, "ask_company_memory", {"question": q}, 1, 1))
            latencies.append(r["p50_ms"])
        latencies = latencies[10:]  # warm-up: model load, caches
        print(
            f"ask_company_memory over MCP: p50 {statistics.median(latencies):.1f} ms, "
            f"p95 {percentile(latencies, 95):.1f} ms, p99 {percentile(latencies, 99):.1f} ms"
        )


if __name__ == "__main__":
    main()
