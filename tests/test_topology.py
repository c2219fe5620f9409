"""Brain as a deployment on one machine: two web processes, a worker per queue, one beat, Postgres
over TCP and Redis. A round-robin client saves and searches through both web processes while one
web process and one ingest worker are killed; nothing is lost, doubled or sent twice.

BRAIN_TOPOLOGY_SCALE (default 1) divides the counts (500 saves, 1,000 searches) for quick runs.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from urllib.parse import quote

import pytest
import redis
from django.conf import settings
from django.db import connection
from django.db.models import Count

from brain.core.services import mark_memory_built
from conftest import make_org, make_token, make_user
from contacts.models import Contact, HumanRequest
from contacts.services import save_contact_topics
from memory.documents.chunking import chunk
from memory.documents.ingestion import worker_tag
from memory.models import Chunk, Document
from tests.conftest import call, free_port
from tests.progress import documents_progress, log_size, wait_while_progressing
from tests.topology import RoundRobin, SlackStub, TcpToSocket, Topology, ready, topology_env

pytestmark = pytest.mark.django_db(transaction=True)
SCALE = max(1, int(os.environ.get("BRAIN_TOPOLOGY_SCALE", "1")))
SAVES, SEARCHES, REQUESTS_TO_PEOPLE = 500 // SCALE, 1000 // SCALE, 3
CLIENT_THREADS = 8
TOPICS = ("travel", "invoices", "hiring", "security", "parking", "holidays", "laptops", "budgets")


def content_of(i: int) -> str:
    topic = TOPICS[i % len(TOPICS)]
    return "\n\n".join(
        f"Note {i}, part {part}: the {topic} rule number {i} says to ask the {topic} desk first. " * 6
        for part in range(3)
    )


@pytest.fixture
def topology(tmp_path):
    """Two web processes, two ingest workers, a worker on each other queue, one beat, over TCP."""
    redis.Redis.from_url(settings.REDIS_URL).flushdb()  # no stale messages from earlier tests
    db = connection.settings_dict
    socket_path = f"{db['HOST']}/.s.PGSQL.{db['PORT'] or 5432}"
    with TcpToSocket(socket_path) as postgres_tcp:
        ports = [free_port(), free_port()]
        urls = [f"http://127.0.0.1:{port}" for port in ports]
        database_url = f"postgresql://{quote(db['USER'])}@127.0.0.1:{postgres_tcp.port}/{db['NAME']}"
        env = topology_env(database_url=database_url, redis_url=settings.REDIS_URL, data_dir=tmp_path, base_url=urls[0])
        world = Topology(env=env, logs=tmp_path)
        try:
            for name, port in zip(("web-a", "web-b"), ports, strict=True):
                world.web(name, port)
            world.worker("ingest-1", ("ingest",))
            world.worker("ingest-2", ("ingest",))
            world.worker("dispatch", ("dispatch",), concurrency=2)
            world.worker("sweeps", ("celery",))
            world.worker("scheduled", ("jobs", "nightly"))
            world.beat()
            for name, url in zip(("web-a", "web-b"), urls, strict=True):
                wait_while_progressing(
                    partial(ready, url),
                    log_size(world.log_path(name)),
                    what=f"{name} to be ready",
                    details=partial(world.log, name),
                )
            yield world, urls
        finally:
            world.stop()


def held_by(name: str) -> list[int]:
    """The documents the worker of that name is ingesting right now (its claims carry its tag)."""
    tag = worker_tag(f"{name}@{socket.gethostname()}")
    return list(Document.objects.filter(status="processing", claim__endswith=tag).values_list("pk", flat=True))


def ask_people(urls: list[str], token: str) -> None:
    """Preview then dispatch a question to a person, alternating web processes, over MCP."""
    for i in range(REQUESTS_TO_PEOPLE):
        url = urls[i % len(urls)]
        question = f"What is the travel budget for trip {i}?"
        preview = call(url, token, "request_human_info", {"question": question})
        contact_id = preview.structured_content["contact"]["contact_id"]
        sent = call(
            url,
            token,
            "request_human_info",
            {"question": question, "dispatch": True, "requested_contact_id": contact_id},
        )
        assert sent.structured_content["status"] == "queued", sent.content[0].text


def test_two_web_processes_and_a_worker_per_queue_survive_kills_without_losing_or_doubling_anything(topology):
    world, urls = topology
    org = make_org(credits=1_000_000)
    mark_memory_built(org=org)
    user = make_user(org)
    token = make_token(org, user=user).plaintext
    with SlackStub() as slack:
        travel = Contact.objects.create(
            org=org,
            name="Tara Travel",
            topics="travel, trips, budgets",
            slack=f"{slack.url}/services/T1/B1/travel",
            channels=["slack"],
        )
        save_contact_topics(travel)
        client = RoundRobin(urls, token)
        saved = threading.Semaphore(0)
        halfway = threading.Event()
        done = {"saves": 0}
        lock = threading.Lock()

        def save(i: int) -> None:
            body = {"title": f"Note {i}", "content": content_of(i), "external_id": f"note-{i}"}
            response = client.post("/api/v1/documents", body)
            assert response is None or response.status_code in (200, 201), response.text
            with lock:
                done["saves"] += 1
                if done["saves"] == SAVES // 2:
                    halfway.set()
            saved.release()

        def search(i: int) -> None:
            response = client.post("/api/v1/search", {"query": f"who do I ask about {TOPICS[i % len(TOPICS)]}?"})
            assert response is None or response.status_code == 200, response.text

        started = time.monotonic()
        with ThreadPoolExecutor(CLIENT_THREADS) as pool:
            futures = [pool.submit(save, i) for i in range(SAVES)]
            futures += [pool.submit(search, i) for i in range(SEARCHES)]
            ask_people(urls, token)
            wait_while_progressing(halfway.is_set, lambda: done["saves"], what="the first half of the saves")
            world.kill("web-b")  # mid-traffic: requests in flight on it are dropped
            moving = documents_progress(Document.objects.filter(org=org))
            wait_while_progressing(lambda: bool(held_by("ingest-1")), moving, what="ingest-1 to take a document")
            world.kill("ingest-1")  # mid-document, with its pool child
            # Held by it still after it died: a document it finished between the look and the kill
            # was not interrupted (a busy machine leaves that gap open), and is not asked to be retaken.
            interrupted = held_by("ingest-1")
            world.worker("ingest-1", ("ingest",))  # started again under the same name, as a restart policy would
            ask_people(urls[:1], token)
            for future in futures:
                future.result()
        traffic_seconds = time.monotonic() - started

        assert client.failed == [], client.failed[:5]
        # However loaded the machine, this waits as long as documents keep moving (taken, retried, ready).
        wait_while_progressing(
            lambda: not Document.objects.filter(org=org).exclude(status="ready").exists(),
            documents_progress(Document.objects.filter(org=org)),
            what="every document to be ready",
            details=partial(world.log, "ingest-2"),
        )
        documents = Document.objects.filter(org=org)
        assert documents.count() == SAVES
        assert sorted(documents.values_list("external_id", flat=True)) == sorted(f"note-{i}" for i in range(SAVES))
        assert all(d.attempts >= 2 for d in documents.filter(pk__in=interrupted)), interrupted  # taken up again
        expected = len(chunk(content_of(0)))
        chunk_counts = set(documents.annotate(n=Count("chunks")).values_list("n", flat=True))
        assert chunk_counts == {expected}
        assert Chunk.objects.filter(document__org=org).values("document", "ordinal").distinct().count() == (
            SAVES * expected
        )
        asked = 2 * REQUESTS_TO_PEOPLE
        wait_while_progressing(
            lambda: len(slack.deliveries) >= asked,
            lambda: len(slack.deliveries),
            what="every question to be delivered",
            details=partial(world.log, "dispatch"),
        )
        time.sleep(8)  # the sweeps have run more than once since: nothing may be sent again
        assert len(slack.deliveries) == asked
        assert HumanRequest.objects.filter(org=org).count() == asked
    print(f"\ntopology: {SAVES} saves and {SEARCHES} searches in {traffic_seconds:.1f} s, {client.retried} retried")
