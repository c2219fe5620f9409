"""Delivery failures: a temporary one keeps the request queued for a retry, a permanent one fails it."""

from __future__ import annotations

import threading
from collections import Counter
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest
from celery.exceptions import Retry
from django.utils import timezone

from contacts.models import Contact, HumanRequest
from contacts.services import (
    MAX_RETRIES,
    MAX_RETRY_AFTER,
    RetryLater,
    deliver_request,
    dispatch_request,
    retry_delay,
    sweep_queued_requests,
)
from contacts.tasks import deliver_request_task

pytestmark = pytest.mark.django_db


class Webhook(BaseHTTPRequestHandler):
    """An incoming-webhook endpoint that answers with the status the path asks for."""

    hits: Counter[str] = Counter()

    def do_POST(self):  # noqa: N802
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        Webhook.hits[self.path] += 1
        status = int(self.path.rsplit("/", 1)[1])
        body = b"ok" if status == 200 else b"no_service"
        self.send_response(status)
        if status == 429:  # a rate limit that asks for a wait longer than the first backoff
            self.send_header("Retry-After", "120")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def webhook():
    server = HTTPServer(("127.0.0.1", 0), Webhook)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}/services/T0/B0"
    server.shutdown()


def queued(actor, url):
    contact = Contact.objects.create(org=actor.org, name="Sam Slack", topics="x", slack=url, channels=["slack"])
    return dispatch_request(actor=actor, question="Where is the runbook?", contact_id=contact.pk)


def test_a_temporary_failure_keeps_the_request_queued_and_retries(actor, webhook):
    request = queued(actor, f"{webhook}/503")
    with pytest.raises(Retry):
        deliver_request_task.apply(args=[request.pk], throw=True)
    request.refresh_from_db()
    assert request.status == "queued"
    assert request.attempts == 1
    assert "503" in request.last_error


def test_a_permanent_failure_is_recorded_and_not_retried(actor, webhook):
    request = queued(actor, f"{webhook}/404")
    assert deliver_request_task.apply(args=[request.pk]).get() == "failed"
    request.refresh_from_db()
    assert request.status == "failed"
    assert request.last_error


def test_retries_end_in_a_recorded_failure(actor, webhook):
    request = queued(actor, f"{webhook}/503")
    HumanRequest.objects.filter(pk=request.pk).update(attempts=MAX_RETRIES)
    result = deliver_request_task.apply(args=[request.pk])
    assert result.get() == "failed"
    assert HumanRequest.objects.get(pk=request.pk).last_error.startswith("gave up after 7 attempts")


def test_a_request_waiting_for_its_retry_is_neither_tried_early_nor_swept(actor, webhook):
    request = queued(actor, f"{webhook}/503")
    with pytest.raises(RetryLater) as later:
        deliver_request(request_id=request.pk)
    assert later.value.seconds == 30
    assert deliver_request(request_id=request.pk) == "skipped"  # a second message for it, before it is due
    assert sweep_queued_requests(grace_seconds=0) == 0
    HumanRequest.objects.filter(pk=request.pk).update(next_attempt_at=timezone.now() - timedelta(seconds=1))
    assert sweep_queued_requests(grace_seconds=0) == 1  # its retry is overdue: that message was lost


def test_a_failing_request_is_tried_once_and_retried_six_times_however_often_sweeps_run(actor, webhook):
    path = "/services/T0/B0/503"
    request = queued(actor, f"{webhook}/503")
    Webhook.hits[path] = 0
    outcomes = []
    for _ in range(4 * (MAX_RETRIES + 1)):  # each round: a sweep, the retry, a duplicate message, time passes
        sweep_queued_requests(grace_seconds=0)
        for _ in range(2):
            try:
                outcomes.append(deliver_request(request_id=request.pk))
            except RetryLater:
                outcomes.append("retry")
        HumanRequest.objects.filter(pk=request.pk, status="queued").update(next_attempt_at=timezone.now())
    request.refresh_from_db()
    assert Webhook.hits[path] == 1 + MAX_RETRIES == request.attempts
    assert outcomes.count("retry") == MAX_RETRIES
    assert outcomes.count("failed") == 1
    assert request.status == "failed"
    assert request.last_error.startswith("gave up after 7 attempts")


def test_a_request_whose_worker_died_mid_send_is_sent_again_after_the_send_lease(actor, webhook):
    request = queued(actor, f"{webhook}/200")
    past = timezone.now() - timedelta(seconds=1)
    HumanRequest.objects.filter(pk=request.pk).update(status="sending", attempts=1, next_attempt_at=past)
    assert sweep_queued_requests(grace_seconds=0) == 1
    assert deliver_request(request_id=request.pk) == "sent"
    assert HumanRequest.objects.get(pk=request.pk).attempts == 2


def test_success_over_a_webhook(actor, webhook):
    request = queued(actor, f"{webhook}/200")
    assert deliver_request_task.apply(args=[request.pk]).get() == "sent"
    assert HumanRequest.objects.get(pk=request.pk).status == "sent"


def test_a_request_whose_message_was_lost_is_queued_again_by_the_sweep(actor, webhook, settings):
    request = queued(actor, f"{webhook}/200")
    old = timezone.now() - timedelta(seconds=settings.BRAIN_QUEUED_GRACE_SECONDS + 1)
    HumanRequest.objects.filter(pk=request.pk).update(created_at=old)
    fresh = queued(actor, f"{webhook}/200")
    assert sweep_queued_requests() == 1
    assert fresh.status == "queued"


def test_a_rate_limited_request_is_not_tried_again_before_the_providers_retry_after(actor, webhook):
    request = queued(actor, f"{webhook}/429")
    before = timezone.now()
    with pytest.raises(RetryLater) as later:
        deliver_request(request_id=request.pk)
    request.refresh_from_db()
    assert later.value.seconds == 120
    assert request.status == "queued"
    assert request.next_attempt_at >= before + timedelta(seconds=120)
    HumanRequest.objects.filter(pk=request.pk).update(next_attempt_at=timezone.now() + timedelta(seconds=60))
    assert deliver_request(request_id=request.pk) == "skipped"  # past the backoff, not yet past Retry-After


def test_the_delivery_task_retries_no_sooner_than_the_providers_retry_after(actor, webhook):
    request = queued(actor, f"{webhook}/429")
    with pytest.raises(Retry) as retry:
        deliver_request_task.apply(args=[request.pk], throw=True)
    assert retry.value.when == 120


def test_a_retry_after_shorter_than_the_backoff_keeps_the_backoff_and_an_absurd_one_is_capped():
    assert retry_delay(3, retry_after=5) == 120
    assert retry_delay(1, retry_after=45.2) == 46
    assert retry_delay(1, retry_after=1e12) == MAX_RETRY_AFTER
