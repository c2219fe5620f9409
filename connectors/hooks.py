"""Webhooks: a source tells Brain at once that something changed, so a change arrives in seconds;
the scheduled sync stays the safety net for a webhook that never came.

GitHub signs each delivery's body with the connection's secret (``X-Hub-Signature-256``, HMAC
SHA-256) and numbers it (``X-GitHub-Delivery``). A delivery with a bad signature is refused; one
already seen is acknowledged and not acted on again. An issue deleted on GitHub is withdrawn at
once (a listing never shows it); any other change queues a sync of the connection now.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging

from django.core.cache import cache
from django.db import transaction
from django.http import HttpRequest, JsonResponse
from django.utils import timezone
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from connectors.kinds import Item
from connectors.models import Connection
from connectors.sync import withdraw_item

logger = logging.getLogger("brain.connectors")
SEEN_SECONDS = 24 * 3600
MAX_BODY = 5 * 1024 * 1024


def signed(secret: str, body: bytes, signature: str) -> bool:
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
    delivery = request.headers.get("X-GitHub-Delivery", "")[:100]
    if delivery and not cache.add(f"brain:hooks:github:{connection.pk}:{delivery}", 1, SEEN_SECONDS):
        return JsonResponse({"status": "already seen"})
    event = request.headers.get("X-GitHub-Event", "")
    if event == "ping" or connection.paused_at is not None:
        return JsonResponse({"status": "noted"})
    try:
        payload = json.loads(body)
    except ValueError:
        return JsonResponse({"error": "The body is not JSON."}, status=400)
    repo = (payload.get("repository") or {}).get("full_name", "")
    issue = payload.get("issue") or {}
    if event == "issues" and payload.get("action") == "deleted" and repo and issue.get("number"):
        withdraw_item(connection, Item(source_id=f"{repo}#{issue['number']}", version="", gone=True))
        return JsonResponse({"status": "withdrawn"}, status=202)
    _sync_now(connection)
    return JsonResponse({"status": "queued"}, status=202)


def _sync_now(connection: Connection) -> None:
    from connectors.tasks import sync_connection_task

    Connection.objects.filter(pk=connection.pk).update(next_sync_at=timezone.now())
    transaction.on_commit(lambda: sync_connection_task.delay(connection.pk))
