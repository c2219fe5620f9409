"""Vector search for small organisations in a table shared with large ones.

    .venv/bin/python -m bench.tenants --chunks 1000000 --orgs 100 --queries 200

The table: ``--orgs`` organisations whose sizes follow Zipf's law (the largest holds about a
fifth of all rows, the smallest about two thousand) and sum to ``--chunks``, in the database
``brain_bench_tenants`` of the embedded cluster (filled once, kept between runs). Each measured
organisation (``--measure``: ranks, 1 = the largest) is also put alone, with the very same
passages, in a database of its own. Both are measured the same way: the vector arm of search
(``memory.index.candidates.vector_candidates``, 50 candidates, as ``search_chunks`` asks),
the whole ``search_chunks`` in ``auto`` mode (query embedding included), and the vector arm's
recall against an exact search (every visible row compared).

Passages come from ``bench.corpus``: one pool of embedded passages, each row its pool vector
plus noise, so every organisation talks about the same kind of things (the hard case: the
neighbours of a question in other organisations are as close as in one's own). After loading,
each database gets its organisations' search indexes as beat would build them
(``memory.index.org_indexes``). Recall counts distinct passages: a pool passage is stored
many times over, and its copies are near-equal neighbours.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import statistics
import subprocess
import sys
import time
from typing import Any

import numpy as np

from bench.mcp_calls import ROOT, percentile

TABLE_DB = "brain_bench_tenants"
POOL = 2000
BATCH = 20_000
CANDIDATES = 50


def sizes(total: int, orgs: int) -> list[int]:
    """Zipf-shaped sizes (rank r holds about 1/r of the largest) that sum to ``total``."""
    weights = [1 / (rank + 1) for rank in range(orgs)]
    counts = [int(total * w / sum(weights)) for w in weights]
    counts[0] += total - sum(counts)
    return counts


def embedded_pool(seed: int = 7) -> tuple[list[str], np.ndarray, str]:
    """The pool's passages and their vectors, embedded once and kept beside the embedded cluster."""
    from bench.corpus import passage
    from launcher.services import data_dir
    from memory.index.embedding import get_embedder

    embedder = get_embedder()
    path = data_dir() / f"bench-pool-{POOL}-{seed}.npz"
    if path.exists():
        saved = np.load(path, allow_pickle=False)
        if str(saved["model"]) == embedder.name:
            return [str(t) for t in saved["texts"]], saved["vectors"], embedder.name
    rng = random.Random(seed)
    texts = [passage(rng) for _ in range(POOL)]
    vectors = np.asarray(embedder.embed(texts), dtype=np.float32)
    np.savez(path, texts=np.asarray(texts), vectors=vectors, model=np.asarray(embedder.name))
    return texts, vectors, embedder.name


def fill_org(slug: str, rows: int, seed: int, pool: tuple[list[str], np.ndarray, str]) -> None:
    """The organisation ``slug`` with ``rows`` passages (one document per 20), the same for a seed."""
    from django.db import connection

    from bench.corpus import PEOPLE, bench_org, synthetic_documents
    from brain.models import Category

    texts, vectors, model = pool
    org, actor = bench_org(slug)
    general = Category.objects.get(org=org, slug="general")
    rng = np.random.default_rng(seed)
    with connection.cursor() as cursor:
        documents = synthetic_documents(org, general, actor, rows)
        for start in range(0, rows, BATCH):
            count = min(BATCH, rows - start)
            picks = rng.integers(0, len(texts), size=count)
            batch = vectors[picks] + rng.normal(0, 0.02, size=(count, vectors.shape[1])).astype(np.float32)
            batch /= np.linalg.norm(batch, axis=1, keepdims=True)
            buffer = io.StringIO()
            for j in range(count):
                i = start + j
                text = texts[picks[j]].replace("\t", " ")
                buffer.write(
                    f"{org.pk}\t{documents[i // 20]}\t{i % 20}\tSynthetic\t\t{text}\t0\t{len(text)}\t"
                    f"[{','.join(f'{x:.5f}' for x in batch[j])}]\t{model}\t{general.pk}\tshared\t{actor.user.pk}"
                    f"\t2026-01-01\t{PEOPLE[i % len(PEOPLE)]}\t{2021 + i % 6}-{1 + i % 12:02d}-{1 + i % 28:02d}\n"
                )
            with cursor.copy(
                "COPY memory_chunk (org_id, document_id, ordinal, title, heading, text, char_start, char_end,"
                " embedding, embedding_model, category_id, scope, owner_id, recorded_at, speaker, said_at)"
                " FROM STDIN"
            ) as copy:
                copy.write(buffer.getvalue())


def fill_database(plan: list[tuple[str, int, int]]) -> float:
    """Load every (slug, rows, seed) of ``plan`` that is missing, then build the organisations'
    search indexes as beat would (``memory.index.org_indexes``). Returns the seconds taken."""
    from django.db import connection

    from brain.models import Organisation
    from memory.index.org_indexes import sync_org_indexes

    started = time.perf_counter()
    missing = [entry for entry in plan if not Organisation.objects.filter(slug=entry[0]).exists()]
    if missing:
        pool = embedded_pool()
        for slug, rows, seed in missing:
            fill_org(slug, rows, seed, pool)
            print(f"  {slug}: {rows} chunks ({time.perf_counter() - started:.0f} s)", file=sys.stderr)
    report = sync_org_indexes(concurrently=False)
    if missing or report.created:
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
        return time.perf_counter() - started
    return 0.0


def exact_ids(vector: Any, where: Any, limit: int) -> set[int]:
    """The true nearest rows under the caller's clause: no index scan, every visible row compared."""
    from django.db import connection, transaction

    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_indexscan = off")
        cursor.execute(
            f"SELECT c.id FROM memory_chunk c WHERE {where.sql} AND c.embedding_model = %(model)s "  # noqa: S608
            "ORDER BY c.embedding <=> %(vec)s::vector LIMIT %(limit)s",
            {
                **where.params,
                "model": vector.model,
                "limit": limit,
                "vec": "[" + ",".join(f"{x:.6f}" for x in vector.values) + "]",
            },
        )
        return {row[0] for row in cursor.fetchall()}


def passages_of(ids: set[int]) -> set[str]:
    """The distinct passages of these rows. A pool passage is stored many times over, with noise:
    its copies are near-equal neighbours, so recall counts passages found, not copies."""
    from memory.models import Chunk

    return set(Chunk.objects.filter(pk__in=ids).values_list("text", flat=True))


def measure(slug: str, queries: list[str]) -> dict[str, Any]:
    """Latency of the vector arm and of the whole search, and the arm's recall, for one organisation."""
    from bench.corpus import bench_org
    from memory.index.candidates import access_and_time, vector_candidates
    from memory.index.serving import query_vector
    from memory.search.passages import search_chunks

    org, actor = bench_org(slug)
    where = access_and_time(actor, None)
    vectors = [query_vector(org, q) for q in queries]
    for vector in vectors[:20]:
        vector_candidates(vector, where, CANDIDATES)  # warm the caches
    arm, recall, found = [], [], []
    for vector in vectors:
        started = time.perf_counter()
        rows = vector_candidates(vector, where, CANDIDATES)
        arm.append((time.perf_counter() - started) * 1000)
        truth = passages_of(exact_ids(vector, where, CANDIDATES))
        recall.append(len(passages_of({cid for cid, _ in rows}) & truth) / max(1, len(truth)))
        found.append(len(rows))
    whole = []
    for q in queries:
        started = time.perf_counter()
        search_chunks(actor=actor, query=q, top_k=5, mode="auto")
        whole.append((time.perf_counter() - started) * 1000)
    return {
        "arm_p50": statistics.median(arm), "arm_p95": percentile(arm, 95),
        "auto_p50": statistics.median(whole), "auto_p95": percentile(whole, 95),
        "recall": statistics.mean(recall), "short": sum(n < CANDIDATES for n in found),
    }  # fmt: skip


def child(args: argparse.Namespace) -> None:
    """In one database: fill what is missing, then measure the organisations named."""
    import django

    django.setup()
    from bench.corpus import questions

    plan = [(str(slug), int(rows), int(seed)) for slug, rows, seed in map(json.loads, args.plan)]
    seconds = fill_database(plan)
    if seconds:
        print(f"  filled {args.database} in {seconds:.0f} s", file=sys.stderr)
    results = {slug: measure(slug, questions(args.queries)) for slug in args.slugs}
    print(json.dumps(results))


def run_child(database: str, plan: list[tuple[str, int, int]], slugs: list[str], queries: int) -> dict[str, Any]:
    from launcher.services import ensure_services, start_postgres

    env = dict(os.environ, DJANGO_SETTINGS_MODULE="brain.settings", HF_HUB_OFFLINE="1")
    env.update(ensure_services())
    env["DATABASE_URL"] = start_postgres(database)
    subprocess.run([sys.executable, "manage.py", "migrate", "-v", "0"], cwd=ROOT, env=env, check=True)
    command = [
        sys.executable,
        "-m",
        "bench.tenants",
        "--child",
        "--database",
        database,
        "--queries",
        str(queries),
        "--plan",
        *(json.dumps(entry) for entry in plan),
        "--slugs",
        *slugs,
    ]
    output = subprocess.run(command, cwd=ROOT, env=env, check=True, stdout=subprocess.PIPE, text=True).stdout
    return dict(json.loads(output.strip().splitlines()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chunks", type=int, default=1_000_000)
    parser.add_argument("--orgs", type=int, default=100)
    parser.add_argument("--measure", default="100,50,10,1", help="ranks of the organisations to measure")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--database", help=argparse.SUPPRESS)
    parser.add_argument("--plan", nargs="*", default=[], help=argparse.SUPPRESS)
    parser.add_argument("--slugs", nargs="*", default=[], help=argparse.SUPPRESS)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    if args.child:
        child(args)
        return
    counts = sizes(args.chunks, args.orgs)
    plan = [(f"tenant-{args.chunks}-{rank + 1}", rows, rank + 1) for rank, rows in enumerate(counts)]
    ranks = [int(r) for r in args.measure.split(",")]
    measured = [plan[rank - 1] for rank in ranks]
    print(
        f"cores={os.cpu_count()} chunks={args.chunks} orgs={args.orgs} queries={args.queries} "
        f"largest={counts[0]} smallest={counts[-1]}"
    )
    shared = run_child(f"{TABLE_DB}_{args.chunks}", plan, [slug for slug, _, _ in measured], args.queries)
    header = f"{'rank':>4} {'chunks':>7} {'table':>7} {'arm p50':>8} {'arm p95':>8} {'auto p50':>9} {'auto p95':>9}"
    print(f"{header} {'recall':>7} {'short':>6}")
    for rank, (slug, rows, seed) in zip(ranks, measured, strict=True):
        alone = run_child(f"brain_bench_alone_{rows}_{seed}", [(slug, rows, seed)], [slug], args.queries)[slug]
        for where, figures in (("alone", alone), ("shared", shared[slug])):
            print(
                f"{rank:>4} {rows:>7} {where:>7} {figures['arm_p50']:>8.1f} {figures['arm_p95']:>8.1f} "
                f"{figures['auto_p50']:>9.1f} {figures['auto_p95']:>9.1f} {figures['recall']:>7.3f} "
                f"{figures['short']:>6}"
            )


if __name__ == "__main__":
    main()
