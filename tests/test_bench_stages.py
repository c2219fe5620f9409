"""bench.stages: how bench.profile folds a sampled stack into a stage of the call."""

from __future__ import annotations

from bench.stages import ACTOR, FRAMING, HOPS, IDLE, RECORD, SERIALISE, TOKEN, TOOL, classify, parse_collapsed

SITE = "/venv/lib/python3.11/site-packages"
WORKER = [
    ("/usr/lib/python3.11/threading.py", "Thread._bootstrap"),
    ("/usr/lib/python3.11/concurrent/futures/thread.py", "_worker"),
    (f"{SITE}/asgiref/sync.py", "SyncToAsync.thread_handler"),
    ("/app/brain/mcp/server.py", "in_worker_thread.<locals>.wrapped"),
]


def test_a_stage_owns_everything_it_calls_down_to_the_driver() -> None:
    verify = ("/app/brain/mcp/auth.py", "_verify")
    verifier = [*WORKER[:3], verify, ("/app/brain/core/services.py", "authenticate_token")]
    assert classify([*verifier, (f"{SITE}/psycopg/cursor.py", "Cursor.execute")]) == TOKEN
    assert classify([*WORKER[:3], ("/app/brain/mcp/auth.py", "_verify")]) == ACTOR


def test_the_outermost_stage_wins_over_what_it_calls() -> None:
    run = [*WORKER, ("/app/brain/mcp/server.py", "run_tool"), ("/app/brain/mcp/invoke.py", "execute")]
    assert classify([*run, ("/app/brain/mcp/meter.py", "record_call"), ("/app/brain/core/selectors.py", "x")]) == RECORD
    charge = ("/app/brain/mcp/meter.py", "_charge")
    assert classify([*run, ("/app/brain/infra/replicas.py", "run_read"), charge]) == TOOL
    assert classify(run[:-1]) == SERIALISE


def test_the_memorys_own_threads_are_the_tool_and_waiting_threads_are_idle() -> None:
    arm = [*WORKER[:2], ("/app/memory/search/arms.py", "keyword_arm")]
    assert classify(arm) == TOOL
    assert classify(WORKER[:2]) == IDLE
    loop = [(f"{SITE}/uvicorn/main.py", "run"), ("/usr/lib/python3.11/asyncio/base_events.py", "_run_once")]
    assert classify([*loop, ("/usr/lib/python3.11/selectors.py", "EpollSelector.select")]) == IDLE
    assert classify([*loop, (f"{SITE}/starlette/routing.py", "Router.app")]) == FRAMING
    assert classify(WORKER) == HOPS


def test_it_reads_py_spys_collapsed_lines() -> None:
    line = "thread (0x1): MainThread;_run_once (/a/asyncio/base_events.py:1922);select (/a/selectors.py:468) 17\n"
    frames, count = parse_collapsed(line) or ([], 0)
    assert count == 17
    assert frames == [("/a/asyncio/base_events.py", "_run_once"), ("/a/selectors.py", "select")]
