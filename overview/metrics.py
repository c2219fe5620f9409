"""``/metrics`` for Prometheus: the counters every process keeps (``brain.infra.metrics``) and the
figures of the whole installation read from the database at each scrape.

The database's figures are the same whichever web process or machine answers, so they hold however
many processes and machines Brain runs on: the ingestion queue's depth and lag, documents failed,
connections whose last sync failed and how long since each synced, the nightly scans' progress and
messages still in the outbox. Each is one statement on a small table or an index (``bench/metrics``
measures a scrape). A database that does not answer leaves them out and says so in
``brain_database_up``; the counters are still answered.

The page is answered by a middleware placed right after the probes', before host validation and the
HTTPS redirect: Prometheus scrapes a process by its address, over plain HTTP on the machine.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime

from django.db.models import Count, Max, Min, Q
from django.http import HttpRequest, HttpResponse
from django.utils import timezone
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.metrics_core import Metric
from prometheus_client.registry import Collector

from brain.infra.metrics import CONTENT_TYPE, may_scrape, render
from brain.models import OutboxMessage
from connectors.models import Connection
from memory.models import Document
from registers.models import Scan

logger = logging.getLogger("brain.metrics")

PATH = "/metrics"
# The statuses of documents on their way, and the one that gave up; "ready" is most of the table.
UNSETTLED = [Document.Status.QUEUED, Document.Status.WAITING, Document.Status.PROCESSING, Document.Status.FAILED]


def _age(now: datetime, then: datetime | None) -> float:
    return max((now - then).total_seconds(), 0.0) if then is not None else 0.0


def _documents(now: datetime) -> Iterator[Metric]:
    counts = dict(
        Document.objects.filter(status__in=UNSETTLED).values_list("status").annotate(n=Count("id")).order_by()
    )
    depth = GaugeMetricFamily(
        "brain_documents",
        "Documents on their way into memory (queued, waiting, processing) or failed.",
        labels=["status"],
    )
    for status in UNSETTLED:
        depth.add_metric([str(status)], counts.get(status, 0))
    yield depth
    oldest = Document.objects.filter(status=Document.Status.QUEUED).aggregate(at=Min("recorded_at"))["at"]
    yield GaugeMetricFamily(
        "brain_ingestion_lag_seconds",
        "Age of the oldest document waiting in the ingestion queue (0: none waits).",
        value=_age(now, oldest),
    )
    extracting = dict(
        Document.objects.filter(extraction__in=[Document.Extraction.PENDING, Document.Extraction.RUNNING])
        .values_list("extraction")
        .annotate(n=Count("id"))
        .order_by()
    )
    facts = GaugeMetricFamily(
        "brain_extractions", "Ready documents whose facts are still to be learnt, by state.", labels=["state"]
    )
    for state in (Document.Extraction.PENDING, Document.Extraction.RUNNING):
        facts.add_metric([str(state)], extracting.get(state, 0))
    yield facts


def _connections(now: datetime) -> Iterator[Metric]:
    rows = (
        Connection.objects.values_list("kind")
        .annotate(
            total=Count("id"),
            failing=Count("id", filter=~Q(last_error="") | Q(credentials_refused=True)),
            stalest=Min("last_sync_at", filter=Q(paused_at__isnull=True)),
        )
        .order_by()
    )
    total = GaugeMetricFamily("brain_connections", "Connections to other systems, by kind.", labels=["kind"])
    failing = GaugeMetricFamily(
        "brain_connections_failing",
        "Connections whose last sync failed or whose credentials were refused.",
        labels=["kind"],
    )
    stalest = GaugeMetricFamily(
        "brain_connection_sync_age_seconds",
        "Time since the least recently synced of the connections not paused last synced.",
        labels=["kind"],
    )
    for kind, count, failed, oldest in rows:
        total.add_metric([kind], count)
        failing.add_metric([kind], failed)
        stalest.add_metric([kind], _age(now, oldest))
    yield from (total, failing, stalest)


def _scans(now: datetime) -> Iterator[Metric]:
    rows = (
        Scan.objects.values_list("register").annotate(oldest=Min("finished_at"), newest=Max("finished_at")).order_by()
    )
    oldest = GaugeMetricFamily(
        "brain_nightly_scan_age_seconds",
        "Time since the organisation whose nightly scan of a register finished longest ago finished it.",
        labels=["register"],
    )
    newest = GaugeMetricFamily(
        "brain_nightly_scan_last_finished_timestamp_seconds",
        "When the last nightly scan of a register finished, as a Unix time.",
        labels=["register"],
    )
    for register, first, last in rows:
        oldest.add_metric([register], _age(now, first))
        newest.add_metric([register], last.timestamp() if last is not None else 0.0)
    yield from (oldest, newest)


def _outbox(now: datetime) -> Iterator[Metric]:
    waiting = OutboxMessage.objects.aggregate(n=Count("id"), oldest=Min("created_at"))
    yield GaugeMetricFamily(
        "brain_outbox_messages", "Messages for the workers not yet handed to the broker.", value=waiting["n"]
    )
    yield GaugeMetricFamily(
        "brain_outbox_age_seconds",
        "Age of the oldest message not yet handed to the broker (0: none).",
        value=_age(now, waiting["oldest"]),
    )


READERS: list[Callable[[datetime], Iterator[Metric]]] = [_documents, _connections, _scans, _outbox]


class DatabaseFigures(Collector):
    """The installation's state, read at each scrape."""

    def collect(self) -> Iterable[Metric]:
        now = timezone.now()
        figures: list[Metric] = []
        up = 1
        try:
            for read in READERS:
                figures.extend(read(now))
        except Exception:
            logger.warning("could not read the figures of /metrics from the database", exc_info=True)
            figures, up = [], 0
        yield from figures
        yield GaugeMetricFamily("brain_database_up", "Whether the scrape could read the database's figures.", value=up)


class MetricsMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.path != PATH or request.method not in ("GET", "HEAD"):
            return self.get_response(request)
        if not may_scrape(request):
            # The same answer as a page that does not exist: nothing tells a stranger it is here.
            return HttpResponse("Not Found", status=404, content_type="text/plain")
        response = HttpResponse(render([DatabaseFigures()]), content_type=CONTENT_TYPE)
        response["Cache-Control"] = "no-store"
        return response
