"""Seconds from a GitHub webhook to a searchable issue, through Brain's own processes.

    .venv/bin/python -m bench.connector_webhook --rounds 10
    .venv/bin/python -m bench.connector_webhook --rounds 10 --backlog 200

Starts the embedded services if needed, Brain's web app (uvicorn, as ./brainctl run serves it),
one Celery worker on the ``ingest`` and ``nightly`` queues (two children, so a sync and an
ingestion run side by side) and the GitHub stand-in the connector tests use
(``connectors/tests/github_server.py``), which the worker reaches through
``BRAIN_GITHUB_API_URL``. A throwaway organisation gets a GitHub connection to it, synced once
with ``--issues`` issues and left to finish ingesting.

Each round adds an issue carrying a word nobody has written, POSTs a signed ``issues`` webhook
for it to ``/connectors/hooks/github/<id>/`` (``X-Hub-Signature-256`` with the connection's
secret), and polls the passage search every search tool runs (``search_chunks``, as the admin who
added the connection) until that word finds the issue. Reported per round: when the issue was
saved, when it was ready (embedded) and when search found it, each counted from the POST; then
p50 and max of the last.

With ``--backlog N``, N short documents are added to the organisation just before each POST, so
the issue's ingestion queues behind them, as it would after a large import.
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import json
import random
import statistics
import string
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from bench.mcp_calls import ROOT, serve, setup_environment

QUEUES = ("ingest", "nightly")
SAFETY_SECONDS = 120.0  # a round that takes longer is reported as not found


class TimedOut(Exception):
    pass


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--issues", type=int, default=50, help="issues already synced before the rounds")
    parser.add_argument("--port", type=int, default=8766)
    parser.add_argument("--backlog", type=int, default=0, help="documents queued for ingestion before each POST")
    args = parser.parse_args()
    env = setup_environment()
    subprocess.run([sys.executable, "manage.py", "migrate", "-v", "0"], cwd=ROOT, env=env, check=True)
    import django

    django.setup()
    from django.conf import settings

    from connectors.tests.github_server import github_server

    with github_server() as github:
        settings.BRAIN_GITHUB_API_URL = github.base
        for n in range(1, args.issues + 1):
            github.add_issue("acme/api", n, updated=f"2026-11-{1 + n // 24:02d}T{n % 24:02d}:00:00Z")
        actor, connection = _organisation(github.token)
        processes = {**env, "SECRET_KEY": settings.SECRET_KEY, "BRAIN_GITHUB_API_URL": github.base}
        with _worker(processes), serve(args.port, processes) as mcp_url:
            hook = mcp_url.removesuffix("/mcp") + f"/connectors/hooks/github/{connection.pk}/"
            _first_sync(actor, connection)
            print(
                f"rounds={args.rounds}, {args.issues} issues synced before, backlog {args.backlog}; "
                f"worker on {','.join(QUEUES)}, 2 children"
            )
            found = [
                _round(github, actor, connection, hook, number=args.issues + r, round_no=r, backlog=args.backlog)
                for r in range(1, args.rounds + 1)
            ]
    timed = [seconds for seconds in found if seconds is not None]
    if timed:
        print(
            f"webhook to searchable: p50 {statistics.median(timed):.2f} s, max {max(timed):.2f} s, "
            f"{len(found) - len(timed)} not found within {SAFETY_SECONDS:.0f} s"
        )


def _organisation(token: str) -> tuple[Any, Any]:
    from django.contrib.auth.models import User

    from brain.core.services import actor_for_user, add_member, create_organisation
    from brain.models import Category, Membership
    from connectors import sync

    stamp = int(time.time())
    org = create_organisation(slug=f"bench-webhook-{stamp}", name="Bench webhook", plan="unlimited")
    user = User.objects.create_user(f"bench-webhook-{stamp}", f"bench-webhook{stamp}@example.com")
    add_member(org=org, user=user, role=Membership.ADMIN)
    actor = actor_for_user(org=org, user=user, via="command")
    category = Category.objects.get(org=org, slug=Category.DEFAULT_SLUG)
    connection = sync.add_connection(
        actor=actor,
        kind="github",
        name="bench webhook",
        category=category,
        credentials={"token": token},
        options={"repositories": "acme/api"},
    )
    return actor, connection


@contextmanager
def _worker(env: dict[str, str]) -> Iterator[None]:
    """One worker on the queues a webhook's work passes through, answering a ping before it is used."""
    from brain.celery import app
    from launcher.processes import worker_command

    name = f"bench-webhook-{uuid.uuid4().hex[:8]}@%h"
    log = Path(tempfile.gettempdir()) / "bench-connector-webhook-worker.log"
    print(f"worker log: {log}")
    with log.open("w") as out:
        proc = subprocess.Popen(
            worker_command(queues=QUEUES, concurrency=2, name=name),
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        _until(lambda: bool(app.control.broadcast("ping", reply=True, timeout=0.5, limit=1)), "the worker")
        yield
    finally:
        proc.terminate()
        proc.wait(30)


def _until(done: Callable[[], bool], what: str, limit: float = SAFETY_SECONDS) -> None:
    deadline = time.monotonic() + limit
    while not done():
        if time.monotonic() > deadline:
            raise TimedOut(f"gave up waiting for {what} after {limit:.0f} s")
        time.sleep(0.1)


def _documents(connection: Any) -> Any:
    from memory.models import Document

    return Document.objects.filter(org=connection.org, external_id__startswith=f"github:{connection.pk}:")


def _idle(connection: Any) -> bool:
    """No sync holds the connection and nothing of the organisation waits for ingestion."""
    from connectors.models import Connection
    from memory.models import Document

    held = Connection.objects.filter(pk=connection.pk, lease_until__isnull=False).exists()
    return not held and not Document.objects.filter(org=connection.org).exclude(status="ready").exists()


def _first_sync(actor: Any, connection: Any) -> None:
    from connectors import sync
    from memory.search.passages import search_chunks

    outcome = sync.sync_connection(connection.pk)
    if outcome.state != "synced":
        raise SystemExit(f"the first sync failed: {outcome.message}")
    _until(lambda: _idle(connection), "the first sync's issues to be ingested", limit=600)
    search_chunks(actor=actor, query="warm up the query embedder", per_document=True)


def _round(
    github: Any, actor: Any, connection: Any, hook: str, *, number: int, round_no: int, backlog: int
) -> float | None:
    from memory.documents.saving import add_document
    from memory.search.passages import search_chunks

    letters = random.Random(number)
    word = "".join(letters.choice(string.ascii_lowercase) for _ in range(12))
    updated = f"2026-12-01T00:{round_no // 60:02d}:{round_no % 60:02d}Z"
    github.add_issue(
        "acme/api",
        number,
        updated=updated,
        title=f"Checkout total wrong with {word}",
        body=f"The {word} coupon doubles the discount.",
    )
    payload = {"action": "opened", "issue": {"number": number}, "repository": {"full_name": "acme/api"}}
    body = json.dumps(payload).encode()
    signature = "sha256=" + hmac.new(connection.webhook_secret.encode(), body, hashlib.sha256).hexdigest()
    headers = {"Content-Type": "application/json", "X-GitHub-Event": "issues", "X-Hub-Signature-256": signature,
               "X-GitHub-Delivery": str(uuid.uuid4())}  # fmt: skip
    title = f"Issue acme/api#{number}:"
    for n in range(backlog):
        add_document(
            actor=actor,
            title=f"Backlog {round_no}.{n}",
            content=f"Minutes {round_no}.{n}: the team reviewed the roadmap and the hiring plan.",
        )
    posted_at, started = time.time(), time.perf_counter()
    answer = httpx.post(hook, content=body, headers=headers, timeout=30)
    if answer.status_code != 202:
        raise SystemExit(f"the webhook was refused: {answer.status_code} {answer.text}")

    def found() -> bool:
        hits = search_chunks(actor=actor, query=word, top_k=5, per_document=True).hits
        return any(hit.title.startswith(title) for hit in hits)

    seconds: float | None
    try:
        _until(found, f"issue {number} in search")
        seconds = time.perf_counter() - started
    except TimedOut:
        seconds = None
    saved, ready = _stages(connection, number, posted_at)
    shown = f"{seconds:.2f} s" if seconds is not None else "not found"
    print(f"round {round_no:>2}: saved {saved}, ready {ready}, searchable {shown} after the POST")
    _until(lambda: _idle(connection), "the round's work to finish")
    return seconds


def _stages(connection: Any, number: int, posted_at: float) -> tuple[str, str]:
    document = _documents(connection).filter(external_id=f"github:{connection.pk}:acme/api#{number}").first()
    if document is None:
        return "never", "never"
    ready = f"{document.processed_at.timestamp() - posted_at:.2f} s" if document.processed_at else "not yet"
    return f"{document.recorded_at.timestamp() - posted_at:.2f} s", ready


if __name__ == "__main__":
    main()
