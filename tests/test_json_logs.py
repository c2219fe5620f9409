"""JSON log lines (BRAIN_LOG_FORMAT=json): their fields, the request id they carry, Celery's headers
that carry it into a task, and the launcher still seeing the processes start. No database."""

from __future__ import annotations

import io
import json
import logging
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

from brain.infra import logs
from launcher import processes, ready

ROOT = Path(__file__).resolve().parent.parent


def logged(message: str, *args: object, exc: BaseException | None = None) -> dict[str, object]:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logs.JsonFormatter())
    handler.addFilter(logs.RequestContext())
    logger = logging.getLogger("brain.test_json_logs")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        if exc is None:
            logger.warning(message, *args)
        else:
            try:
                raise exc
            except BaseException:
                logger.exception(message, *args)
    finally:
        logger.removeHandler(handler)
    lines = stream.getvalue().splitlines()
    assert len(lines) == 1, lines  # one object per line, however many lines the message has
    return dict(json.loads(lines[0]))


def test_a_line_has_its_time_level_logger_message_request_id_and_organisation():
    with logs.bound(request_id="req-1", org="acme"):
        line = logged("saved %s\nand more", "a document")
    assert line["level"] == "WARNING"
    assert line["logger"] == "brain.test_json_logs"
    assert line["message"] == "saved a document\nand more"
    assert (line["request_id"], line["org"]) == ("req-1", "acme")
    assert str(line["time"]).endswith("+00:00")
    assert "exception" not in line


def test_an_exception_is_one_field_of_the_same_line():
    line = logged("it broke", exc=ValueError("bad value"))
    assert "ValueError: bad value" in str(line["exception"])
    assert "Traceback" in str(line["exception"])
    assert line["request_id"] == ""


def test_the_ids_are_set_back_when_the_block_ends():
    with logs.bound(request_id="outer"), logs.bound(org="acme"):
        assert (logs.REQUEST_ID.get(), logs.ORG.get()) == ("outer", "acme")
    assert (logs.REQUEST_ID.get(), logs.ORG.get()) == ("", "")


def test_a_callers_request_id_is_kept_only_when_it_is_sensible():
    assert logs.request_id_from("0f8c2a-Trace_1.2:3") == "0f8c2a-Trace_1.2:3"
    for hostile in [None, "", "a b", "x" * 129, 'a"}\n{"level": "ERROR"', "é"]:
        made = logs.request_id_from(hostile)
        assert made != hostile
        assert len(made) == 32


def test_a_task_published_in_a_request_carries_its_id_and_the_worker_sets_it_while_it_runs():
    headers: dict[str, object] = {}
    with logs.bound(request_id="req-9", org="acme"):
        logs._published(headers=headers)
    assert headers == {"brain_request_id": "req-9", "brain_org": "acme"}
    task = SimpleNamespace(request=SimpleNamespace(brain_request_id="req-9", brain_org="acme"))
    logs._task_started(task_id="t1", task=task)
    assert (logs.REQUEST_ID.get(), logs.ORG.get()) == ("req-9", "acme")
    logs._task_ended(task_id="t1")
    assert (logs.REQUEST_ID.get(), logs.ORG.get()) == ("", "")
    logs._task_started(task_id="t2", task=SimpleNamespace(request=SimpleNamespace()))
    assert len(logs.REQUEST_ID.get()) == 32  # a task queued by no request gets an id of its own
    logs._task_ended(task_id="t2")


def test_the_launcher_sees_json_lines_say_the_processes_started():
    startup = ready.StartUp(ready.ready_lines(["web", "worker", "beat"]))
    say = {
        "time": "2026-12-07T10:00:00.000+00:00",
        "level": "INFO",
        "logger": "celery.worker.consumer.consumer",
        "request_id": "",
        "org": "",
    }
    startup.saw("worker", json.dumps({**say, "message": "brain@host ready."}) + "\n")
    startup.saw("beat", json.dumps({**say, "message": "beat: Starting..."}) + "\n")
    startup.saw("beat", "{not json at all\n")
    assert startup.all_started()


def test_celery_is_quiet_only_when_every_line_must_be_json(monkeypatch):
    monkeypatch.setenv("BRAIN_LOG_FORMAT", "json")
    assert "--quiet" in processes.worker_command()
    assert "--quiet" in processes.beat_command()
    monkeypatch.setenv("BRAIN_LOG_FORMAT", "plain")
    assert "--quiet" not in processes.worker_command()


def test_an_unknown_log_format_is_refused_at_start():
    env = {
        "BRAIN_LOG_FORMAT": "xml",
        "SECRET_KEY": "x",
        "BRAIN_TESTING": "1",
        "PATH": "/usr/bin:/bin",
        "DATABASE_URL": "postgres://x@localhost/y",
        "DJANGO_SETTINGS_MODULE": "brain.settings",
    }
    done = subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert done.returncode != 0
    assert "BRAIN_LOG_FORMAT must be plain or json; got 'xml'" in done.stderr
