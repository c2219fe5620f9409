"""What a word no passage holds yet costs keyword search, now that its zero count is not cached.

    .venv/bin/python -m bench.new_words --chunks 10000 --queries 200

A term no readable passage holds is counted again on every search (so the first document that
says it is found as soon as it is ready); a term some passage holds is counted once per audience
for the cache's lifetime. On the synthetic organisation of ``bench.search``, the keyword arm is
timed for questions whose words are all known, then for the same questions with one word nobody
wrote, counted each time, and with that word's zero taken from the cache as before.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

from bench.mcp_calls import ROOT, percentile, setup_environment


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chunks", type=int, default=10000)
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    env = setup_environment()
    subprocess.run([sys.executable, "manage.py", "migrate", "-v", "0"], cwd=ROOT, env=env, check=True)
    import django

    django.setup()
    from django.core.cache import cache

    from bench.corpus import bench_org, fill, questions
    from memory.index import candidates

    org, actor = bench_org(f"bench-{args.chunks}")
    fill(org, actor, args.chunks)
    asked = questions(args.queries)
    where = candidates.with_counters(candidates.access_and_time(actor, None))
    for q in asked:  # every known word's count cached, as on a warm server
        candidates.keyword_candidates(q, where, 50)
        candidates.keyword_candidates(f"{q} zqxv", where, 50)

    def timed(texts: list[str]) -> list[float]:
        spent = []
        for text in texts:
            started = time.perf_counter()
            candidates.keyword_candidates(text, where, 50)
            spent.append((time.perf_counter() - started) * 1000)
        return spent

    known = timed(asked)
    unwritten = timed([f"{q} zqxv" for q in asked])
    key, _, _ = candidates._audience_totals(where, "memory_chunk")
    cache.set(f"{key}:{candidates._digest('zqxv')}", 0, candidates.STATS_SECONDS)
    cached_zero = timed([f"{q} zqxv" for q in asked])
    print(f"chunks={args.chunks} queries={len(asked)} (keyword arm only, ms)")
    print(f"{'questions':<34} {'p50':>6} {'p95':>6} {'mean':>6}")
    for label, spent in (
        ("words all known", known),
        ("one unwritten word, counted", unwritten),
        ("one unwritten word, zero cached", cached_zero),
    ):
        print(f"{label:<34} {percentile(spent, 50):6.2f} {percentile(spent, 95):6.2f} {statistics.mean(spent):6.2f}")


if __name__ == "__main__":
    main()
