"""Webhooks: a source tells Brain at once that something changed, so a change arrives in seconds;
the scheduled sync stays the safety net for a webhook that never came.

GitHub signs each delivery's body with the connection's secret (``X-Hub-Signature-256``, HMAC
SHA-256; the secret is sealed at rest like credentials). Slack's Events API signs
``v0:timestamp:body`` with the app's signing secret (``X-Slack-Signature``, checked by
``slack_sdk``'s verifier), and a request whose ``X-Slack-Request-Timestamp`` is more than five
minutes off is refused as stale.

Then, in this order: a signed body that is not the JSON object its source sends, with the keys
Brain reads of the right types, is a 400 naming what is wrong (``connectors.hook_bodies``). A body
accepted before (its SHA-256, kept per connection for ``BRAIN_WEBHOOK_REPLAY_DAYS`` in the
database) is a replay: answered 200 ``already seen`` and not acted on. Not 409: the sources retry
a delivery that got no 2xx, so a genuine retry of a delivery already acted on would be sent again
and again and shown as failed; a replay by anyone else gains nothing from a 200. Headers the
signature does not cover (``X-GitHub-Delivery``) play no part. The hash is recorded in the
transaction that acts on the delivery, so one that fails is not remembered and its retry is acted
on, and two copies arriving at once wait for each other on the unique index.

An issue deleted on GitHub is withdrawn at once (a listing never shows it); any other change
queues a sync of the connection now. The URL check Slack makes when the request URL is saved
(``url_verification``) is answered with its challenge. A message edited, replied to or deleted
asks the next sync to read its thread or day again (``Recheck``), since a listing from the cursor
would not; a deleted message's thread or day is withdrawn at once and comes back without it at
that sync.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import time
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.http import HttpRequest, JsonResponse
from django.utils import timezone
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST
from slack_sdk.signature import SignatureVerifier

from brain.infra.queueing import send_on_commit
from connectors import slack
from connectors.hook_bodies import BadBody, github_payload, slack_payload
from connectors.kinds import Item
from connectors.models import Connection, Recheck, WebhookDelivery
from connectors.sealing import CredentialsUnreadable, unseal
from connectors.sync import withdraw_item

logger = logging.getLogger("brain.connectors")
MAX_BODY = 5 * 1024 * 1024
SLACK_STALE_SECONDS = 5 * 60


def signed(secret: str, body: bytes, signature: str) -> bool:
    if not secret:
        return False  # a secret no key opens: nothing verifies, least of all a body signed with ""
    expected = "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, signature)


@csrf_exempt
@require_POST
def github_hook(request: HttpRequest, connection_id: int) -> JsonResponse:
    connection = Connection.objects.filter(pk=connection_id, kind="github").select_related("org").first()
    body = request.body[: MAX_BODY + 1]
    signature = request.headers.get("X-Hub-Signature-256", "")
    if connection is None or len(body) > MAX_BODY or not signed(connection.webhook_secret, body, signature):
        return JsonResponse({"error": "The signature does not match this connection's webhook secret."}, status=401)
    event = request.headers.get("X-GitHub-Event", "")
    try:
        payload = github_payload(event, body)
    except BadBody as exc:
        return JsonResponse({"error": exc.message}, status=400)
    with transaction.atomic():
        if not first_delivery(connection, body):
            return JsonResponse({"status": "already seen"})
        if event == "ping" or connection.paused_at is not None:
            return JsonResponse({"status": "noted"})
        if event == "issues" and payload["action"] == "deleted":
            source_id = f"{payload['repository']['full_name']}#{payload['issue']['number']}"
            withdraw_item(connection, Item(source_id=source_id, version="", gone=True))
            return JsonResponse({"status": "withdrawn"}, status=202)
        _sync_now(connection)
    return JsonResponse({"status": "queued"}, status=202)


@csrf_exempt
@require_POST
def slack_hook(request: HttpRequest, connection_id: int) -> JsonResponse:
    connection = Connection.objects.filter(pk=connection_id, kind="slack").select_related("org").first()
    body = request.body[: MAX_BODY + 1]
    stamp = request.headers.get("X-Slack-Request-Timestamp", "")
    if not stamp.isdigit() or abs(time.time() - int(stamp)) > SLACK_STALE_SECONDS:
        return JsonResponse({"error": "The request timestamp is missing or older than five minutes."}, status=401)
    if connection is None or len(body) > MAX_BODY or not _slack_signed(connection, body, request):
        return JsonResponse({"error": "The signature does not match this connection's signing secret."}, status=401)
    try:
        payload = slack_payload(body)
    except BadBody as exc:
        return JsonResponse({"error": exc.message}, status=400)
    with transaction.atomic():
        if not first_delivery(connection, body):
            return JsonResponse({"status": "already seen"})
        if payload["type"] == "url_verification":
            return JsonResponse({"challenge": payload["challenge"]})
        event = payload.get("event") or {}
        if payload["type"] != "event_callback" or event.get("type") != "message" or connection.paused_at:
            return JsonResponse({"status": "noted"})
        status = "queued"
        gone, keys = _slack_changes(event)
        if gone and withdraw_item(connection, Item(source_id=slack.source_id_of(gone), version="", gone=True)):
            status = "withdrawn"
        for key in keys:
            Recheck.objects.get_or_create(connection=connection, key=key[:200])
        _sync_now(connection)
    return JsonResponse({"status": status}, status=202)


def first_delivery(connection: Connection, body: bytes) -> bool:
    """Record the hash of an accepted body; False when the same body was accepted within
    ``BRAIN_WEBHOOK_REPLAY_DAYS`` (a replay). Called inside the transaction that acts on it."""
    now = timezone.now()
    cutoff = now - timedelta(days=settings.BRAIN_WEBHOOK_REPLAY_DAYS)
    WebhookDelivery.objects.filter(connection=connection, received_at__lt=cutoff).delete()
    digest = hashlib.sha256(body).hexdigest()
    _row, created = WebhookDelivery.objects.get_or_create(
        connection=connection, digest=digest, defaults={"received_at": now}
    )
    return created


def _slack_signed(connection: Connection, body: bytes, request: HttpRequest) -> bool:
    try:
        secret = str(unseal(connection.sealed_credentials).get("signing_secret", ""))
    except CredentialsUnreadable:
        return False
    if not secret.strip():
        return False
    signature = request.headers.get("X-Slack-Signature", "")
    stamp = request.headers.get("X-Slack-Request-Timestamp", "")
    return SignatureVerifier(secret).is_valid(body=body, timestamp=stamp, signature=signature)


def _slack_changes(event: dict[str, object]) -> tuple[str, list[str]]:
    """From a message event: the recheck key of what to withdraw now ("" for nothing) and what the
    next sync reads again. A new message needs neither (the listing brings it), a reply, an edit or
    a deletion both or the second: a listing from the cursor does not see them."""
    channel = str(event.get("channel", ""))
    subtype = str(event.get("subtype", ""))
    message = event.get("previous_message") if subtype == "message_deleted" else event.get("message", event)
    message = message if isinstance(message, dict) else {}
    ts = str(message.get("ts") or event.get("deleted_ts") or "")
    thread = str(message.get("thread_ts") or "")
    if not channel or not ts:
        return "", []
    if thread:
        key = slack.thread_key(channel, thread)
    elif subtype in ("message_changed", "message_deleted"):
        key = slack.day_key(channel, ts)
    else:
        return "", []
    return (key if subtype == "message_deleted" else ""), [key]


def _sync_now(connection: Connection) -> None:
    Connection.objects.filter(pk=connection.pk).update(next_sync_at=timezone.now())
    send_on_commit("connectors.tasks.sync_connection_task", connection.pk, what="connection sync")
