"""Delivery failures: a temporary one keeps the request queued for a retry, a permanent one fails it."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest
from celery.exceptions import Retry

from contacts.models import Contact, HumanRequest
from contacts.services import dispatch_request
from contacts.tasks import MAX_RETRIES, deliver_request_task

pytestmark = pytest.mark.django_db


class Webhook(BaseHTTPRequestHandler):
    """An incoming-webhook endpoint that answers with the status the path asks for."""

    def do_POST(self):  # noqa: N802
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        status = int(self.path.rsplit("/", 1)[1])
        body = b"ok" if status == 200 else b"no_service"
        self.send_response(status)
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
    assert request.status == "queued" and request.attempts == 1 and "503" in request.last_error


def test_a_permanent_failure_is_recorded_and_not_retried(actor, webhook):
    request = queued(actor, f"{webhook}/404")
    assert deliver_request_task.apply(args=[request.pk]).get() == "failed"
    request.refresh_from_db()
    assert request.status == "failed" and request.last_error


def test_retries_end_in_a_recorded_failure(actor, webhook):
    request = queued(actor, f"{webhook}/503")
    result = deliver_request_task.apply(args=[request.pk], retries=MAX_RETRIES)
    assert result.get() == "failed"
    assert HumanRequest.objects.get(pk=request.pk).last_error.startswith("gave up")


def test_success_over_a_webhook(actor, webhook):
    request = queued(actor, f"{webhook}/200")
    assert deliver_request_task.apply(args=[request.pk]).get() == "sent"
    assert HumanRequest.objects.get(pk=request.pk).status == "sent"


def test_a_request_whose_message_was_lost_is_queued_again_by_the_sweep(actor, webhook):
    from datetime import timedelta

    from django.utils import timezone

    from contacts.services import sweep_queued_requests

    request = queued(actor, f"{webhook}/200")
    HumanRequest.objects.filter(pk=request.pk).update(created_at=timezone.now() - timedelta(minutes=11))
    fresh = queued(actor, f"{webhook}/200")
    assert sweep_queued_requests() == 1 and fresh.status == "queued"
