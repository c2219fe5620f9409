"""The registers' nightly scans on 2 cores: commitments and glossary in documents a second, and
the contradiction scan over a large fact table.

    .venv/bin/python -m bench.registers --chunks 20000 --facts 200000

An organisation ``bench-registers`` is filled with synthetic passages (every one a speaker's
turn, one in five holding a promise such as "I'll send the contract to Acme by Friday") and
synthetic facts, kept between runs. Each scan starts from nothing (its progress is reset), so
the figures are a first night's full read; a second run of the contradiction scan shows the
incremental night after 1,000 new facts. The facts are single-valued statements in groups of
four about the same thing, the shape the scan joins on.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from typing import Any

from bench.mcp_calls import ROOT, setup_environment


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chunks", type=int, default=20_000)
    parser.add_argument("--facts", type=int, default=200_000)
    args = parser.parse_args()
    env = setup_environment()
    subprocess.run([sys.executable, "manage.py", "migrate", "-v", "0"], cwd=ROOT, env=env, check=True)
    import django

    django.setup()
    from django.db import connection

    from bench.corpus import bench_org, chunk_count, fact_count, fill, fill_facts
    from brain.models import Features
    from registers.commitments.nightly import scan_commitments
    from registers.contradictions.nightly import scan_contradictions
    from registers.glossary.nightly import scan_glossary
    from registers.models import Commitment, Contradiction, Scan, Term

    org, actor = bench_org("bench-registers")
    fill(org, actor, args.chunks)
    fill_facts(org, actor, args.facts)
    Features.objects.filter(org=org).update(commitments=True, contradictions=True, glossary=True)
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE memory_chunk SET text = text || ' I''ll send the contract to Acme by Friday.' "
            "WHERE org_id = %s AND id %% 5 = 0 AND text NOT LIKE '%%send the contract to Acme%%'",
            [org.pk],
        )

    def group_facts() -> None:
        """Facts in groups of four single-valued statements about the same thing."""
        with connection.cursor() as cursor:
            cursor.execute(
                "UPDATE memory_fact SET single_valued = true, value_key = 'k' || (id %% %s) WHERE org_id = %s "
                "AND NOT single_valued",
                [max(1, args.facts // 4), org.pk],
            )

    group_facts()
    documents = chunk_count(org)  # one passage a turn: a document of its own in a chat export
    print(f"cores={os.cpu_count()} passages={documents} facts={fact_count(org)}")

    def timed_from_nothing(register: str, entries: Any, scan: Any) -> tuple[int, float]:
        """The register's scan over everything, its entries and progress cleared first."""
        Scan.objects.filter(org=org, register=register).delete()
        entries.objects.filter(org=org).delete()
        started = time.perf_counter()
        return scan(org), time.perf_counter() - started

    found, seconds = timed_from_nothing("commitments", Commitment, scan_commitments)
    print(f"commitments: {found} found in {documents} turns, {seconds:.1f} s, {documents / seconds:.0f} documents/s")
    terms, seconds = timed_from_nothing("glossary", Term, scan_glossary)
    print(f"glossary: {terms} terms from {documents} passages, {seconds:.1f} s, {documents / seconds:.0f} documents/s")
    raised, seconds = timed_from_nothing("contradictions", Contradiction, scan_contradictions)
    print(f"contradictions: first night over {fact_count(org)} facts, {raised} raised, {seconds:.1f} s")
    fill_facts(org, actor, fact_count(org) + 1000, seed=99)
    group_facts()
    started = time.perf_counter()
    raised = scan_contradictions(org)
    seconds = time.perf_counter() - started
    print(f"contradictions: next night after 1000 new facts, {raised} raised, {seconds:.1f} s")


if __name__ == "__main__":
    main()
