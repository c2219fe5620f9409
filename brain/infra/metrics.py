"""Brain's own counters for Prometheus, counted where the work happens, and ``/metrics`` rendered.

Two kinds of figures reach a scrape (docs/operations.md, "Metrics and logs"):

- counters and histograms of what each process did (calls per tool and outcome with their
  latency, refusals, credits charged, Celery task durations, retries and failures), kept by
  prometheus_client. With ``PROMETHEUS_MULTIPROC_DIR`` set for every process of a machine (the web
  processes, the workers, beat), each process writes its figures to files there and a scrape of
  any web process on that machine adds them all up; without it a scrape sees only the process
  that answers it;
- figures read from the database when the scrape comes (queue depth and lag, documents failed,
  connector syncs failing, nightly scans), the same whichever machine answers. Those are read by
  ``overview.metrics``, which reads every app's tables and answers ``/metrics``.

Who may read ``/metrics`` is decided by ``may_scrape``: a client on this machine that came through
no proxy, or one that sends ``Authorization: Bearer <BRAIN_METRICS_TOKEN>``.
"""

from __future__ import annotations

import hmac
import ipaddress
import logging
import os
import time
from collections.abc import Iterable
from typing import Any

from django.conf import settings
from django.http import HttpRequest
from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.registry import Collector

logger = logging.getLogger("brain.metrics")

MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

# Calls answer in milliseconds to tens of seconds (an answer card, a slow model behind it).
CALL_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)
# Tasks run from milliseconds (a sweep with nothing to do) to many minutes (a sync, an index build).
TASK_BUCKETS = (0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900, 3600)

CALLS = Counter(
    "brain_tool_calls",
    "Metered calls (tools, prompts, REST endpoints, pages) by name and outcome.",
    ["tool", "outcome"],
)
CALL_SECONDS = Histogram(
    "brain_tool_call_seconds",
    "How long metered calls took, by name and outcome.",
    ["tool", "outcome"],
    buckets=CALL_BUCKETS,
)
REFUSALS = Counter("brain_refusals", "Calls refused or denied, by name and the refusal's code.", ["tool", "code"])
CREDITS = Counter("brain_credits_charged", "Credits charged for calls that succeeded, by name.", ["tool"])
TASK_SECONDS = Histogram(
    "brain_celery_task_seconds",
    "How long Celery tasks ran, by task and how they ended.",
    ["task", "state"],
    buckets=TASK_BUCKETS,
)
TASK_RETRIES = Counter("brain_celery_task_retries", "Celery tasks that asked to be retried, by task.", ["task"])
TASK_FAILURES = Counter("brain_celery_task_failures", "Celery tasks that raised, by task.", ["task"])


def count_call(*, tool: str, outcome: str, code: str, seconds: float, credits: int) -> None:
    """Count one metered call (``brain.mcp.meter.record_call``). Never raises: a figure lost is
    better than a good answer turned into an error."""
    try:
        CALLS.labels(tool=tool, outcome=outcome).inc()
        CALL_SECONDS.labels(tool=tool, outcome=outcome).observe(seconds)
        if outcome in ("refused", "denied"):
            REFUSALS.labels(tool=tool, code=code or outcome).inc()
        if credits:
            CREDITS.labels(tool=tool).inc(credits)
    except Exception:
        logger.exception("could not count the call to %s", tool)


# --- Celery tasks: timed between task_prerun and task_postrun in the process that runs them ------
_started: dict[str, float] = {}


def task_started(task_id: str | None = None, **_: Any) -> None:
    if task_id:
        _started[task_id] = time.perf_counter()


def task_ended(task_id: str | None = None, task: Any = None, state: str | None = None, **_: Any) -> None:
    began = _started.pop(task_id or "", None)
    if began is None or task is None:
        return
    TASK_SECONDS.labels(task=task.name, state=(state or "unknown").lower()).observe(time.perf_counter() - began)


def task_retried(request: Any = None, sender: Any = None, **_: Any) -> None:
    name = getattr(sender, "name", None) or getattr(request, "task", None) or "unknown"
    TASK_RETRIES.labels(task=name).inc()


def task_failed(sender: Any = None, **_: Any) -> None:
    TASK_FAILURES.labels(task=getattr(sender, "name", "unknown")).inc()


def connect_task_signals() -> None:
    """Time and count every task this process runs (called from ``brain.celery``)."""
    from celery import signals

    signals.task_prerun.connect(task_started, weak=False)
    signals.task_postrun.connect(task_ended, weak=False)
    signals.task_retry.connect(task_retried, weak=False)
    signals.task_failure.connect(task_failed, weak=False)


# --- The scrape ---------------------------------------------------------------------------------
def registry(extra: Iterable[Collector] = (), *, multiproc_dir: str | None = None) -> CollectorRegistry:
    """What a scrape reads: every process's files when ``multiproc_dir`` (or the environment) names
    them, else this process's own figures; and the ``extra`` collectors."""
    path = multiproc_dir if multiproc_dir is not None else os.environ.get(MULTIPROC_ENV, "")
    scraped = CollectorRegistry(auto_describe=False)
    if path:
        MultiProcessCollector(scraped, path=path)
    else:
        scraped.register(_Own())
    for collector in extra:
        scraped.register(collector)
    return scraped


class _Own(Collector):
    """This process's counters, without the interpreter's and platform's default collectors twice."""

    def collect(self) -> Iterable[Any]:
        for metric in (CALLS, CALL_SECONDS, REFUSALS, CREDITS, TASK_SECONDS, TASK_RETRIES, TASK_FAILURES):
            yield from metric.collect()


def render(extra: Iterable[Collector] = (), *, multiproc_dir: str | None = None) -> bytes:
    """The text a scrape of ``/metrics`` gets."""
    return generate_latest(registry(extra, multiproc_dir=multiproc_dir))


# --- Who may scrape -------------------------------------------------------------------------------
# Headers a proxy adds: a request that carries one came through a proxy, wherever it connected from.
FORWARDING_HEADERS = ("HTTP_X_FORWARDED_FOR", "HTTP_FORWARDED", "HTTP_X_REAL_IP", "HTTP_X_FORWARDED_HOST")


def _loopback(address: str) -> bool:
    try:
        return ipaddress.ip_address(address.strip("[]")).is_loopback
    except ValueError:
        return False


def may_scrape(request: HttpRequest) -> bool:
    """Whether ``request`` may read ``/metrics``.

    With the token set, a request bearing it may, from anywhere (compared in constant time). Without
    it, a request may only when it connected from a loopback address and carries no proxy's header:
    nginx on the same machine connects from loopback too, but on behalf of someone else, and says
    so in ``X-Forwarded-For``; a request relayed by a proxy that hides that is the operator's to
    keep off ``/metrics``. The address is the connection's own (``REMOTE_ADDR``), never a header."""
    token: str = settings.BRAIN_METRICS_TOKEN
    sent = request.META.get("HTTP_AUTHORIZATION", "")
    if token and sent:
        scheme, _, value = sent.partition(" ")
        return scheme.lower() == "bearer" and hmac.compare_digest(value.strip().encode(), token.encode())
    if any(request.META.get(name) for name in FORWARDING_HEADERS):
        return False
    return _loopback(str(request.META.get("REMOTE_ADDR") or ""))
