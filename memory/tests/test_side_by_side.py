"""A search's arms run side by side on connections of their own, and nothing they return differs
from running them in turn; inside a transaction they stay on the caller's connection."""

from __future__ import annotations

import multiprocessing
import threading
from contextvars import ContextVar
from datetime import UTC, datetime

import pytest
from django.db import connection, transaction

from memory.index import side_by_side
from memory.search import passages
from memory.search.passages import search_chunks
from memory.tests.factories import save
from tests.progress import backends_gone, wait_until

QUESTIONS = [
    "what did Priya say about the BigCo pilot in January 2026?",
    "who owns the kickoff deck",
    "Sam refund policy",
    "when is the board meeting?",
]


def _conversation(actor):
    turns = [
        ("Priya Shah", "The BigCo pilot kicks off on 12 January; I own the kickoff deck.", 9),
        ("Sam Okoro", "Great. Enterprise customers get a full refund within 30 days.", 10),
        ("Priya Shah", "The quarterly board meeting is on the first Monday of April.", 11),
        ("Sam Okoro", "I will send the papers a week before the meeting.", 12),
    ]
    for speaker, text, hour in turns:
        at = datetime(2026, 1, 5, hour, tzinfo=UTC)
        save(actor, speaker, text, speaker=speaker, occurred_at=at, conversation="team")
    save(actor, "Office hours", "The Lisbon office is open from 9 to 6 on weekdays.")


def _answers(actor):
    return [
        [(h.chunk_id, round(h.score, 6), h.ranks) for h in search_chunks(actor=actor, query=q, top_k=5).hits]
        for q in QUESTIONS
    ]


def _threads_of_arms(monkeypatch) -> list[str]:
    """Record the thread every arm runs on."""
    seen: list[str] = []
    for name in ("keyword_candidates", "vector_candidates"):
        real = getattr(passages, name)

        def recording(*args, _real=real, **kwargs):
            seen.append(threading.current_thread().name)
            return _real(*args, **kwargs)

        monkeypatch.setattr(passages, name, recording)
    return seen


@pytest.mark.django_db(transaction=True)
def test_side_by_side_returns_what_running_in_turn_returns(actor, settings, monkeypatch):
    _conversation(actor)
    settings.BRAIN_SEARCH_THREADS = 0
    in_turn = _answers(actor)
    settings.BRAIN_SEARCH_THREADS = 2
    seen = _threads_of_arms(monkeypatch)
    assert side_by_side.may_run_apart()
    assert _answers(actor) == in_turn
    assert any(name.startswith("brain-search") for name in seen)
    assert in_turn[0]
    assert in_turn[1]


@pytest.mark.django_db(transaction=True)
def test_inside_a_transaction_the_arms_stay_on_the_callers_connection_and_see_its_rows(actor, monkeypatch):
    seen = _threads_of_arms(monkeypatch)
    with transaction.atomic():
        save(actor, "Uncommitted", "The Zanzibar launch moves to the second week of June.")
        assert not side_by_side.may_run_apart()
        hits = search_chunks(actor=actor, query="when is the Zanzibar launch", top_k=3).hits
    assert hits
    assert hits[0].title == "Uncommitted"
    assert seen
    assert all(name == threading.current_thread().name for name in seen)


@pytest.mark.django_db(transaction=True)
def test_no_threads_means_in_turn(settings):
    settings.BRAIN_SEARCH_THREADS = 0
    assert not side_by_side.may_run_apart()
    started = side_by_side.start(threading.current_thread, apart=False)
    assert started.result() is threading.current_thread()


@pytest.mark.django_db(transaction=True)
def test_a_task_runs_in_the_callers_context_on_another_connection():
    marker: ContextVar[str] = ContextVar("marker", default="unset")
    marker.set("the caller's")

    def look():
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_backend_pid()")
            return marker.get(), cursor.fetchone()[0]

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        mine = cursor.fetchone()[0]
    seen, theirs = side_by_side.start(look, apart=True).result()
    assert seen == "the caller's"
    assert theirs != mine


@pytest.mark.django_db(transaction=True)
def test_a_failure_in_a_task_reaches_the_caller():
    def fail():
        raise ValueError("the arm failed")

    with pytest.raises(ValueError, match="the arm failed"):
        side_by_side.start(fail, apart=True).result()


@pytest.mark.django_db(transaction=True)
def test_a_task_thread_whose_connection_was_cut_reconnects(actor):
    _conversation(actor)

    def pid():
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_backend_pid()")
            return cursor.fetchone()[0]

    pids = {side_by_side.start(pid, apart=True).result() for _ in range(8)}
    with connection.cursor() as cursor:  # the server drops the search threads' connections
        cursor.execute("SELECT pg_terminate_backend(pid) FROM unnest(%s::int[]) AS pid", [list(pids)])
    # The server ends them when it gets to it: search once they are gone, or it may run on one still alive.
    wait_until(backends_gone(pids), what="the search threads' backends to end")
    for _ in range(4):
        assert search_chunks(actor=actor, query="who owns the kickoff deck", top_k=3).hits


def _answer_in_a_forked_child(queue):
    queue.put(side_by_side.start(lambda: 42, apart=True).result())


@pytest.mark.django_db(transaction=True)
def test_a_forked_process_starts_search_threads_of_its_own():
    side_by_side.start(lambda: 1, apart=True).result()  # the parent has its threads
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_answer_in_a_forked_child, args=(queue,), daemon=True)
    child.start()
    child.join(30)
    if child.is_alive():  # it waited for threads it does not have
        child.kill()
    assert child.exitcode == 0
    assert queue.get(timeout=1) == 42
