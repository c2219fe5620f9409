"""Uploaded files, read into documents by a worker under a budget.

The Add knowledge page keeps each file as sent (``save_upload``) and answers at once; a worker
reads it in a process of its own (memory.upload.sandboxed) with ``BRAIN_UPLOAD_READ_SECONDS`` of
processor time, and saves each document it found through ``add_document``. A file that passes
the budget (time, memory, pages, characters, documents: memory.limits) is marked failed
with the reason, which the page shows. Reading claims the row first, like ingestion, so it is
safe to run twice, and a sweep sends again what a lost message or a dead worker left behind.
"""

from __future__ import annotations

import json
import logging
import signal
import subprocess
import sys
import tempfile
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.db.models import Count, F, Max, Min, Q
from django.utils import timezone

from brain.core.actors import Actor
from brain.core.errors import DomainError, InvalidArgument, NotFound, PermissionDenied
from brain.core.services import actor_for_user
from brain.infra.queueing import send_on_commit
from memory.documents.lanes import BULK_QUEUE, LANES, SHORT_QUEUE, SKIPPED, take_turn
from memory.documents.saving import Saved, add_document, resolve_category
from memory.extraction import ParsedDocument, ParseError
from memory.limits import MAX_TITLE_CHARS
from memory.models import Scope, Upload
from memory.upload.sandboxed import decode, safe_name, unreadable_kind

logger = logging.getLogger("brain.ingest")
Status = Upload.Status
READ_TASK = "memory.tasks.read_upload_task"
ROOT = Path(__file__).resolve().parent.parent.parent
QUICK_BYTES = 256 * 1024  # a text file this small is read in the short lane; others in the bulk lane


def save_upload(*, actor: Actor, name: str, data: bytes, category: str, scope: str) -> Upload:
    """Keep one file as sent and queue its reading; ParseError when it can be refused at once."""
    if not actor.can_write:
        raise PermissionDenied("Saving knowledge needs a token with the write scope.")
    if (why := unreadable_kind(name)) is not None:
        raise ParseError(why)
    if not data.strip():
        raise ParseError("there is no text in it.")
    with transaction.atomic():
        upload = Upload.objects.create(
            org=actor.org,
            owner=actor.user,
            name=safe_name(name),
            data=data,
            size=len(data),
            category=resolve_category(actor=actor, slug=category or None),
            scope=scope if scope in Scope.values else Scope.SHARED,
        )
        send_on_commit(READ_TASK, upload.pk, what="upload", queue=lane_of(upload))
    upload.data = b""  # the row keeps the file; a page of twenty files need not hold them all meanwhile
    return upload


def get_upload(*, actor: Actor, upload_id: int) -> Upload:
    """One of the member's own uploaded files in this organisation; anyone else's is not found."""
    upload = Upload.objects.select_related("category").filter(pk=upload_id, org=actor.org, owner=actor.user).first()
    if upload is None:
        raise NotFound("No such upload.")
    return upload


def visible_uploads(*, actor: Actor, ids: list[int]) -> dict[int, Upload]:
    uploads = Upload.objects.select_related("category").filter(pk__in=ids, org=actor.org, owner=actor.user)
    return {upload.pk: upload for upload in uploads.defer("data")}


def retry_upload(*, actor: Actor, upload_id: int) -> Upload:
    """Read again a file whose reading failed (a limit since raised, a worker that was gone)."""
    upload = get_upload(actor=actor, upload_id=upload_id)
    if upload.status != Status.FAILED or upload.document_ids:
        raise InvalidArgument(f"Only a file that could not be read can be read again; this one is {upload.status}.")
    with transaction.atomic():
        Upload.objects.filter(pk=upload.pk).update(status=Status.QUEUED, error="", claim="", attempts=0)
        send_on_commit(READ_TASK, upload.pk, what="upload", queue=lane_of(upload))
    upload.refresh_from_db()
    return upload


def lane_of(upload: Upload) -> str:
    """A PDF, or a file past ``QUICK_BYTES``, may take its whole budget to read: the bulk lane."""
    quick = upload.size <= QUICK_BYTES and not upload.name.lower().endswith(".pdf")
    return SHORT_QUEUE if quick else BULK_QUEUE


def read_next(*, upload_id: int, lane: str = "", task_id: str | None = None) -> str:
    """What one reading message does (memory.documents.lanes.take_turn): its own file when only it
    may take it (its worker died past the lease), else the lane's next file by turns between
    organisations, as documents take turns: one organisation's twenty PDFs delay another's by one
    file. ``lane`` is the queue it came from, for a file deleted since."""
    own = Upload.objects.filter(pk=upload_id).only("status", "size", "name").first()
    lane = lane_of(own) if own is not None else lane
    if lane not in LANES:
        return SKIPPED

    def read(chosen: int) -> str:
        return read_upload(upload_id=chosen, task_id=task_id)

    return take_turn(
        recover=None if own is None or own.status == Status.QUEUED else lambda: read(upload_id),
        pick=lambda: next_upload(lane=lane),
        run=read,
        pass_on=lambda: send_on_commit(READ_TASK, upload_id, what="upload", queue=lane),
    )


def next_upload(*, lane: str) -> int | None:
    """The queued file of the lane to read next: from the organisation with the fewest files of
    the lane being read now, then the one served least recently, then the one waiting longest."""
    quick = Q(size__lte=QUICK_BYTES) & ~Q(name__iendswith=".pdf")
    in_lane = Upload.objects.filter(quick if lane == SHORT_QUEUE else ~quick)
    oldest = dict(
        in_lane.filter(status=Status.QUEUED).values("org_id").annotate(first=Min("pk")).values_list("org_id", "first")
    )
    if not oldest:
        return None
    orgs = Upload.objects.filter(org_id__in=oldest).values("org_id")
    busy = dict(
        in_lane.filter(org_id__in=oldest, status=Status.PROCESSING)
        .values("org_id")
        .annotate(n=Count("pk"))
        .values_list("org_id", "n")
    )
    served = dict(orgs.annotate(last=Max("claimed_at")).values_list("org_id", "last"))
    never = datetime.min.replace(tzinfo=UTC)
    org = min(oldest, key=lambda o: (busy.get(o, 0), served.get(o) or never, oldest[o]))
    return oldest[org]


def read_upload(*, upload_id: int, task_id: str | None = None) -> str:
    """Read one uploaded file into documents; returns what happened. Safe to run twice."""
    upload = _claim(upload_id, f"{task_id or 'direct'}:{uuid.uuid4().hex[:8]}")
    if upload is None:
        return SKIPPED
    try:
        documents = read_within_budget(upload.name, bytes(upload.data), seconds=settings.BRAIN_UPLOAD_READ_SECONDS)
        actor = actor_for_user(org=upload.org, user=upload.owner, via="web")
    except (ParseError, NotFound) as exc:
        reason = str(exc) if isinstance(exc, ParseError) else "its sender is no longer a member of the organisation."
        # The file is kept, so it can be read again (Retry) once the cause is gone or a limit raised.
        Upload.objects.filter(pk=upload.pk).update(status=Status.FAILED, error=reason, claim="")
        return "failed"
    saved, refused = _save_all(actor, upload, documents)
    error = f"{len(refused)} of its {len(documents)} documents were not added: {refused[0]}" if refused else ""
    Upload.objects.filter(pk=upload.pk).update(
        status=Status.READY if saved else Status.FAILED,
        error=error,
        claim="",
        data=b"",  # read: the documents hold what it said
        document_ids=[s.document.pk for s in saved],
    )
    return "ready" if saved else "failed"


def _claim(upload_id: int, claim: str) -> Upload | None:
    lease = timezone.now() - timedelta(seconds=settings.BRAIN_INGEST_LEASE_SECONDS)
    stale = Q(status=Status.PROCESSING, claimed_at__lt=lease)
    claimed = Upload.objects.filter(Q(status=Status.QUEUED) | stale, pk=upload_id).update(
        status=Status.PROCESSING, claim=claim, claimed_at=timezone.now(), attempts=F("attempts") + 1
    )
    if not claimed:
        return None
    return Upload.objects.select_related("org", "owner", "category").get(pk=upload_id)


def read_within_budget(name: str, data: bytes, *, seconds: int) -> list[ParsedDocument]:
    """The documents in one file, read in a process of its own that the kernel stops once it has
    used ``seconds`` of processor time; ParseError with the reason when the file passes a limit."""
    with tempfile.TemporaryDirectory(prefix="brain-upload-") as tmp:
        folder, out = Path(tmp) / "upload", Path(tmp) / "read.json"
        folder.mkdir()
        (folder / name).write_bytes(data)
        command = [sys.executable, "-m", "memory.upload.sandboxed", str(folder), name, str(out), str(seconds)]
        try:
            # Wall time as well, for a reader that waits instead of working; twice the processor
            # time and the start-up, so a busy machine does not end a fair reading early.
            done = subprocess.run(command, cwd=ROOT, capture_output=True, timeout=2 * seconds + 30, check=False)  # noqa: S603 (our own interpreter and module)
        except subprocess.TimeoutExpired:
            raise ParseError(_too_slow(seconds)) from None
        if done.returncode == -signal.SIGXCPU or done.returncode == -signal.SIGKILL:
            raise ParseError(_too_slow(seconds))
        if done.returncode != 0 or not out.exists():
            logger.error("reading %s stopped (exit %s): %s", name, done.returncode, done.stderr[-2000:])
            raise ParseError(f"the reader stopped unexpectedly (exit {done.returncode}).")
        result = json.loads(out.read_text())
    if "error" in result:
        raise ParseError(result["error"])
    return [decode(document) for document in result["documents"]]


def _too_slow(seconds: int) -> str:
    return f"reading it took more than {seconds} seconds of processor time, the most one file may take; split the file."


def _save_all(actor: Actor, upload: Upload, documents: list[ParsedDocument]) -> tuple[list[Saved], list[str]]:
    saved: list[Saved] = []
    refused: list[str] = []
    for parsed in documents:
        try:
            saved.append(_save(actor, upload, parsed))
        except DomainError as exc:
            refused.append(f"{parsed.title}: {exc.message}")
    return saved, refused


def _save(actor: Actor, upload: Upload, parsed: ParsedDocument) -> Saved:
    # The reader names a document after its file (or its message or channel and day). Under the
    # member's own prefix, the same file sent again by them is unchanged or its next version, and a
    # colleague's file of the same name stays a document of its own.
    return add_document(
        actor=actor,
        title=parsed.title,
        content=parsed.content,
        content_type=parsed.content_type,
        source_kind=parsed.source_kind,
        source_url=parsed.source_url,
        external_id=f"web:{actor.user.pk}:{parsed.external_id}"[:MAX_TITLE_CHARS],
        metadata=parsed.metadata,
        category=upload.category.slug,
        scope=upload.scope,
        occurred_at=parsed.occurred_at,
        speaker=parsed.speaker,
        conversation=parsed.conversation,
        session=parsed.session,
    )


def sweep_stuck_uploads(*, queued_grace_seconds: int) -> int:
    """Send again the reading of files whose message was lost or whose worker died; a file whose
    reading ended with the worker gone ``BRAIN_INGEST_MAX_ATTEMPTS`` times is failed. Returns how many."""
    now = timezone.now()
    stale = Q(status=Status.PROCESSING, claimed_at__lt=now - timedelta(seconds=settings.BRAIN_INGEST_LEASE_SECONDS))
    Upload.objects.filter(stale, attempts__gte=settings.BRAIN_INGEST_MAX_ATTEMPTS).update(
        status=Status.FAILED, claim="", error="reading it stopped the worker every time it was tried."
    )
    lost = Q(status=Status.QUEUED, created_at__lt=now - timedelta(seconds=queued_grace_seconds))
    uploads = list(Upload.objects.filter(stale | lost).only("pk", "name", "size")[:1000])
    with transaction.atomic():
        for upload in uploads:
            send_on_commit(READ_TASK, upload.pk, what="upload", queue=lane_of(upload))
    return len(uploads)
