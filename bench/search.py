"""Search latency at several corpus sizes: through the selector and end to end over MCP.

    .venv/bin/python -m bench.search --chunks 10000,100000 --queries 200 [--sides] [--messages] [--stages]

For each size, an organisation ``bench-<size>`` is filled with synthetic passages (kept between
runs), then every query runs through ``search_chunks`` (the selector all interfaces use,
query embedding included) and through ``search_company_memory`` over real HTTP. ``--sides`` adds
a row for questions that give their time as one side of an event ("... before the renewal for
Acme?"), whose side arm dates the event first. ``--messages`` fills ``bench-msg-<size>`` instead:
every passage a chat message of its own document, in 50 conversations saved interleaved, so
the neighbours of each candidate are looked up in its conversation's order.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import time

from bench.mcp_calls import ROOT, percentile, run_level, serve, setup_environment


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chunks", default="10000,100000")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--top-k", type=int, default=5)
    parser.add_argument("--port", type=int, default=8766)
    parser.add_argument("--no-mcp", action="store_true")
    parser.add_argument("--sides", action="store_true", help="also time questions about one side of an event")
    parser.add_argument("--stages", action="store_true", help="each selector row's stages (timings_ms), p50 in ms")
    parser.add_argument(
        "--messages", action="store_true", help="a corpus of chat messages, one document each, in 50 conversations"
    )
    args = parser.parse_args()
    env = setup_environment()
    subprocess.run([sys.executable, "manage.py", "migrate", "-v", "0"], cwd=ROOT, env=env, check=True)
    import django

    django.setup()
    from bench.corpus import bench_org, chunk_count, fill, questions, side_questions
    from brain.core.services import create_token
    from memory.search.passages import search_chunks

    queries = questions(args.queries)
    print(f"cores={os.cpu_count()} queries={len(queries)} top_k={args.top_k}")
    print(f"{'chunks':>8} {'where':>9} {'mode':>7} {'p50 ms':>7} {'p95 ms':>7} {'p99 ms':>7}")
    for size in [int(s) for s in args.chunks.split(",")]:
        org, actor = bench_org(f"bench-msg-{size}" if args.messages else f"bench-{size}")
        seconds = fill(org, actor, size, per_document=1 if args.messages else 20)
        if seconds:
            print(f"(filled {org.slug} to {chunk_count(org)} chunks in {seconds:.0f} s)", file=sys.stderr)
        # "tool": the selector asked as search_company_memory asks it (a document's best passage
        # once, with how many more matched), what the row "mcp" is compared with.
        runs = [("auto", "auto", queries, False), ("tool", "auto", queries, True),
                ("vector", "vector", queries, False), ("keyword", "keyword", queries, False)]  # fmt: skip
        if args.sides:
            runs.append(("side", "auto", side_questions(len(queries)), False))
        for label, mode, asked, per_document in runs:
            for q in asked[:20]:
                search_chunks(actor=actor, query=q, top_k=args.top_k, mode=mode, per_document=per_document)  # warm
            latencies = []
            stages: dict[str, list[float]] = {}
            for q in asked:
                started = time.perf_counter()
                found = search_chunks(actor=actor, query=q, top_k=args.top_k, mode=mode, per_document=per_document)
                latencies.append((time.perf_counter() - started) * 1000)
                for stage, ms in found.timings_ms.items():
                    stages.setdefault(stage, []).append(ms)
            print(
                f"{size:>8} {'selector':>9} {label:>7} {statistics.median(latencies):>7.1f} "
                f"{percentile(latencies, 95):>7.1f} {percentile(latencies, 99):>7.1f}"
            )
            if args.stages:
                print(" " * 27 + " ".join(f"{k} {statistics.median(v):.2f}" for k, v in stages.items()))
        if not args.no_mcp:
            token = create_token(org=org, user=actor.user, scopes=["read"], expires_in_days=1).plaintext
            print_mcp(size, token, queries, args)
            if args.sides:
                print_mcp(size, token, side_questions(len(queries)), args, label="side")


def print_mcp(size: int, token: str, queries: list[str], args: argparse.Namespace, label: str = "auto") -> None:
    """One client on one kept connection, as an assistant holds one, asking every query in turn
    after 20 to warm up (the server loads its model on the first), as the selector is timed."""
    asked = [{"query": q, "top_k": args.top_k} for q in queries]
    with serve(args.port) as url:
        asyncio.run(run_level(url, token, "search_company_memory", asked[:20], 20, 1))
        result = asyncio.run(run_level(url, token, "search_company_memory", asked, len(asked), 1))
    if result["errors"]:
        print(f"({result['errors']} calls failed)", file=sys.stderr)
    print(f"{size:>8} {'mcp':>9} {label:>7} {result['p50_ms']:>7.1f} {result['p95_ms']:>7.1f} {result['p99_ms']:>7.1f}")


if __name__ == "__main__":
    main()
