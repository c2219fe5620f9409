"""Throughput of the topology's parts side by side: ingestion with 1 and 2 ingest workers, search
with 1 and 2 web processes.

    .venv/bin/python -m bench.topology --documents 200 --searches 600

Processes are started as in tests/test_topology.py (tests/topology.py), against the embedded
services of ./brainctl. Ingestion: the documents are saved through one web process while the
ingest workers are stopped, then the workers start on the full queue; the rate counts from the
first document ready to the last (the workers' start is left out). Search: 8 client threads send
the searches round-robin over the web processes. On a machine with N cores the ceiling of either
is the N cores, not the process count.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any

from bench.mcp_calls import ROOT, setup_environment
from tests.progress import documents_progress, log_size, wait_while_progressing
from tests.topology import RoundRobin, Topology, ready, topology_env

THREADS = 8


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def bench_token() -> tuple[Any, str]:
    from django.contrib.auth.models import User

    from brain.core.services import add_member, create_organisation, create_token, mark_memory_built

    slug = f"bench-topology-{uuid.uuid4().hex[:6]}"
    org = create_organisation(slug=slug, name="Bench topology", plan="unlimited")
    mark_memory_built(org=org)
    user = User.objects.create_user(username=slug, email=f"{slug}@example.com")
    add_member(org=org, user=user, role="admin")
    return org, create_token(org=org, user=user, scopes=["read", "write"], expires_in_days=1).plaintext


def start_webs(world: Topology, count: int) -> list[str]:
    urls = []
    for i in range(count):
        port = free_port()
        world.web(f"web-{i}", port)
        urls.append(f"http://127.0.0.1:{port}")
    for i, url in enumerate(urls):
        wait_while_progressing(partial(ready, url), log_size(world.log_path(f"web-{i}")), what=f"{url} to be ready")
    return urls


def ingestion(env: dict[str, str], logs: Path, workers: int, documents: int) -> float:
    """Documents per second once ``workers`` ingest workers work a full queue: from the first document
    ready to the last, so the workers' start (loading the models) is left out."""
    from memory.models import Document

    org, token = bench_token()
    world = Topology(env=env, logs=logs)
    try:
        client = RoundRobin(start_webs(world, 1), token)
        text = "The {0} desk answers questions about {0} within two days. " * 20
        with ThreadPoolExecutor(THREADS) as pool:
            list(
                pool.map(
                    lambda i: client.post(
                        "/api/v1/documents", {"title": f"Doc {i}", "content": text.format(f"topic{i}")}
                    ),
                    range(documents),
                )
            )
        for i in range(workers):
            world.worker(f"bench-ingest-{i}", ("ingest",))
        wait_while_progressing(
            lambda: Document.objects.filter(org=org, status="ready").count() == documents,
            documents_progress(Document.objects.filter(org=org)),
            what="ingestion",
        )
        stamps = sorted(t for t in Document.objects.filter(org=org).values_list("processed_at", flat=True) if t)
        return (documents - 1) / (stamps[-1] - stamps[0]).total_seconds()
    finally:
        world.stop()


def search(env: dict[str, str], logs: Path, webs: int, searches: int) -> float:
    """Search calls per second from 8 threads round-robin over ``webs`` web processes."""
    _, token = bench_token()
    world = Topology(env=env, logs=logs)
    try:
        client = RoundRobin(start_webs(world, webs), token)
        queries = [f"who answers questions about topic{i}?" for i in range(searches)]
        with ThreadPoolExecutor(THREADS) as pool:
            list(pool.map(lambda q: client.post("/api/v1/search", {"query": q}), queries[: THREADS * 4]))  # warm-up
            started = time.monotonic()
            list(pool.map(lambda q: client.post("/api/v1/search", {"query": q}), queries))
        if client.failed:
            raise RuntimeError(f"{len(client.failed)} searches failed: {client.failed[:3]}")
        return searches / (time.monotonic() - started)
    finally:
        world.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--documents", type=int, default=200)
    parser.add_argument("--searches", type=int, default=600)
    args = parser.parse_args()
    base = setup_environment()
    subprocess.run([sys.executable, "manage.py", "migrate", "-v", "0"], cwd=ROOT, env=base, check=True)
    import django

    django.setup()
    logs = Path(tempfile.mkdtemp(prefix="bench-topology-"))
    env = topology_env(
        database_url=base["DATABASE_URL"], redis_url=base["REDIS_URL"], data_dir=logs, base_url="http://127.0.0.1:8000"
    )
    env["BRAIN_DATA_DIR"] = base["BRAIN_DATA_DIR"]
    print(f"cores={os.cpu_count()} documents={args.documents} searches={args.searches} client threads={THREADS}")
    for workers in (1, 2):
        rate = ingestion(env, logs, workers, args.documents)
        print(f"ingestion  {workers} ingest worker(s)  {rate:7.1f} documents/s", flush=True)
    for webs in (1, 2):
        rate = search(env, logs, webs, args.searches)
        print(f"search     {webs} web process(es)   {rate:7.1f} calls/s", flush=True)
    print(f"logs in {logs}")


if __name__ == "__main__":
    main()
