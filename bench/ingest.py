"""Ingestion throughput with a real Celery worker, and the resident memory of web and worker.

    .venv/bin/python -m bench.ingest --documents 200 --words 300
    .venv/bin/python -m bench.ingest --documents 1000 --chat

With ``--chat`` each document is one chat message (speaker, conversation, session, time) of
about 25 words, as a chat export loaded message by message: one passage each, each embedded
after the message before it.

Saves documents through the same service as add_company_knowledge (ingestion queued on
commit), runs one Celery worker as ./brainctl run does (2 pool processes), and times until all
are ready and their facts learnt (extraction done or failed), with the CPU time the worker used
meanwhile (comparable between runs on a busy machine, where the rates are not). Then serves a
few searches from uvicorn and reports each process's resident memory.
"""

from __future__ import annotations

import argparse
import contextlib
import random
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta

import httpx
import psutil

from bench.mcp_calls import ROOT, setup_environment


def rss_mb(process: psutil.Process) -> float:
    total = process.memory_info().rss
    for child in process.children(recursive=True):
        with contextlib.suppress(psutil.NoSuchProcess):  # a pool process may just have exited
            total += child.memory_info().rss
    return total / 2**20


def cpu_seconds(process: psutil.Process) -> float:
    """CPU time a process and its pool have used so far, the pool processes that ended included: what
    a run costs whatever else the machine is doing (wall-clock rates depend on the load)."""
    times = process.cpu_times()
    total = times.user + times.system + times.children_user + times.children_system
    for child in process.children(recursive=True):
        with contextlib.suppress(psutil.NoSuchProcess):
            total += sum(child.cpu_times()[:2])
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--documents", type=int, default=200)
    parser.add_argument("--words", type=int, default=300)
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--port", type=int, default=8767)
    parser.add_argument("--chat", action="store_true", help="One short chat message a document")
    args = parser.parse_args()
    env = setup_environment()
    subprocess.run([sys.executable, "manage.py", "migrate", "-v", "0"], cwd=ROOT, env=env, check=True)
    import django

    django.setup()
    from django.db.models import Q

    from bench.corpus import PEOPLE, bench_org, sentence
    from brain.core.services import create_token
    from memory.documents.saving import add_document
    from memory.models import Document

    org, actor = bench_org(f"bench-ingest-{int(time.time())}")
    worker = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "brain",
            "worker",
            "-Q",
            "celery,ingest",
            "-c",
            str(args.concurrency),
            "-l",
            "warning",
            "-n",
            f"bench-{time.time()}@%h",
        ],
        cwd=ROOT,
        env=env,
    )
    from brain.celery import app

    while not app.control.broadcast("ping", reply=True, timeout=0.5, limit=1):
        time.sleep(0.5)
    rng = random.Random(3)
    texts = []
    for _ in range(args.documents):
        words: list[str] = []
        while len(words) < (25 if args.chat else args.words):
            words += sentence(rng).split()
        paragraphs = [" ".join(words[i : i + 60]) for i in range(0, len(words), 60)]
        texts.append("\n\n".join(paragraphs))
    started, cpu_before = time.perf_counter(), cpu_seconds(psutil.Process(worker.pid))
    if args.chat:
        begin = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
        ids = [
            add_document(
                actor=actor,
                title=PEOPLE[i % 4],
                content=t,
                speaker=PEOPLE[i % 4],
                conversation="bench",
                session=f"day {i // 100}",
                occurred_at=begin + timedelta(minutes=i),
            ).document.pk
            for i, t in enumerate(texts)
        ]
    else:
        ids = [add_document(actor=actor, title=f"Doc {i}", content=t).document.pk for i, t in enumerate(texts)]
    unread = Q(status__in=["ready", "failed"]) & ~Q(extraction__in=["pending", "running"])
    pending = Document.objects.filter(pk__in=ids).exclude(unread)
    while pending.exists():
        time.sleep(0.2)
    seconds = time.perf_counter() - started
    cpu = cpu_seconds(psutil.Process(worker.pid)) - cpu_before
    chunks = sum(Document.objects.filter(pk__in=ids).values_list("chunk_count", flat=True))
    failed = Document.objects.filter(pk__in=ids, status="failed").count()
    print(f"documents={len(ids)} words_each={args.words} chunks={chunks} failed={failed} seconds={seconds:.1f}")
    print(f"documents/s={len(ids) / seconds:.1f} chunks/s={chunks / seconds:.1f}")
    print(f"worker CPU seconds={cpu:.1f} per document={cpu / len(ids) * 1000:.0f} ms (database not counted)")
    print(f"worker resident memory: {rss_mb(psutil.Process(worker.pid)):.0f} MB (main + {args.concurrency} pool)")
    token = create_token(org=org, user=actor.user, scopes=["read"], expires_in_days=1).plaintext
    web = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "brain.asgi:application", "--port", str(args.port), "--log-level", "warning"],
        cwd=ROOT,
        env=env,
    )
    try:
        url = f"http://127.0.0.1:{args.port}/mcp"
        headers = {"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"}
        search = {"name": "search_company_memory", "arguments": {"query": "who owns the contract"}}
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": search}
        for _ in range(200):
            try:
                httpx.post(url, json=body, headers=headers, timeout=30)
                break
            except httpx.TransportError:
                time.sleep(0.1)
        for _ in range(20):
            httpx.post(url, json=body, headers=headers, timeout=30)
        print(f"web resident memory after searches: {rss_mb(psutil.Process(web.pid)):.0f} MB")
    finally:
        web.terminate()
        worker.terminate()
        web.wait(10)
        worker.wait(30)


if __name__ == "__main__":
    main()
