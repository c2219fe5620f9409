"""What a scrape of /metrics costs: the database's figures (``overview.metrics.DatabaseFigures``) and
the whole answer, over a documents table of a given size.

    .venv/bin/python -m bench.metrics --documents 200000 --scrapes 200

Fills an organisation of its own (``bench-metrics``) with documents, most of them ready and a few
queued and failed, as a running installation has them, once (kept for the next run; ``--drop``
removes it). Then times the figures alone and the whole rendered answer, and counts the statements
one scrape runs.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

from bench.mcp_calls import percentile, setup_environment

SLUG = "bench-metrics"
BATCH = 5000


def fill(documents: int) -> Any:
    from brain.core.services import create_organisation
    from brain.models import Category, Organisation
    from memory.models import Document

    org = Organisation.objects.filter(slug=SLUG).first() or create_organisation(
        slug=SLUG, name="Bench metrics", plan="unlimited"
    )
    have = Document.objects.filter(org=org).count()
    category = Category.objects.filter(org=org).first()
    statuses = ["ready"] * 97 + ["queued", "failed", "processing"]
    while have < documents:
        batch = [
            Document(
                org=org,
                category=category,
                title=f"Note {n}",
                content=f"Note number {n}.",
                content_hash=f"{n:064x}",
                status=statuses[n % len(statuses)],
                length=20,
            )
            for n in range(have, min(have + BATCH, documents))
        ]
        Document.objects.bulk_create(batch)
        have += len(batch)
    return org


def timed(run: Callable[[], object], times: int) -> list[float]:
    for _ in range(5):
        run()
    took = []
    for _ in range(times):
        started = time.perf_counter()
        run()
        took.append((time.perf_counter() - started) * 1000)
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--documents", type=int, default=200_000)
    parser.add_argument("--scrapes", type=int, default=200)
    parser.add_argument("--drop", action="store_true", help="remove the bench organisation and stop")
    args = parser.parse_args()
    setup_environment()
    import django

    django.setup()
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from brain.infra.metrics import render
    from brain.models import Organisation
    from memory.models import Document
    from overview.metrics import DatabaseFigures

    if args.drop:
        Organisation.objects.filter(slug=SLUG).delete()
        return
    started = time.perf_counter()
    fill(args.documents)
    print(f"documents in the table: {Document.objects.count():,} (filled in {time.perf_counter() - started:.1f} s)")
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE memory_document")
    with CaptureQueriesContext(connection) as queries:
        list(DatabaseFigures().collect())
    print(f"statements per scrape: {len(queries.captured_queries)}")
    for name, run in [
        ("database figures", lambda: list(DatabaseFigures().collect())),
        ("whole answer", lambda: render([DatabaseFigures()])),
    ]:
        took = timed(run, args.scrapes)
        print(
            f"{name}: p50 {statistics.median(took):.2f} ms, p95 {percentile(took, 95):.2f} ms, "
            f"max {max(took):.2f} ms over {args.scrapes} scrapes"
        )


if __name__ == "__main__":
    main()
