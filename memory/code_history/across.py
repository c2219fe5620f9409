"""The rest of a file's story from synced systems: the pull requests that touched it or merged its
commits, the issues those closed, the errors whose stack frames name it, and the deployments that
shipped its commits. Read from documents connectors brought in, by what their metadata records
(``kind``, ``files``, ``sha``, ``merge_commit_sha``, ``closes``, ``repository``), under the same
access rule and as-of rule as every read (``memory.access``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from functools import reduce
from operator import or_
from typing import Any

from django.db.models import Q, QuerySet
from django.utils.dateparse import parse_datetime
from pydantic import BaseModel

from brain.actors import Actor
from memory.access import current, readable
from memory.models import Document

CONNECTOR = "connector"
MAX_ITEMS = 50
MAX_DEPLOYMENTS_READ = 500


def known_by(documents: QuerySet[Document], as_of: date | None) -> QuerySet[Document]:
    """Ingested documents, current or as they stood at the end of ``as_of``."""
    return documents.filter(current(as_of), status=Document.Status.READY)


def known_documents(actor: Actor, as_of: date | None) -> QuerySet[Document]:
    """Ingested documents the actor reads, current or as they stood at the end of ``as_of``."""
    return known_by(Document.objects.filter(readable(actor)), as_of)


def synced(actor: Actor, as_of: date | None, kind: str) -> QuerySet[Document]:
    return known_documents(actor, as_of).filter(source_kind=CONNECTOR, metadata__kind=kind)


def in_repo(repo: str | None) -> Q:
    if not repo:
        return Q()
    return Q(metadata__repository__iexact=repo) | Q(metadata__repository__iendswith="/" + repo)


def _meta(document: Document) -> dict[str, Any]:
    return document.metadata if isinstance(document.metadata, dict) else {}


def _moment(value: object) -> datetime | None:
    return parse_datetime(value) if isinstance(value, str) and value else None


class WhyPullRequest(BaseModel):
    document_id: str
    ref: str
    title: str
    state: str
    author: str
    opened: datetime | None
    merged: datetime | None
    merge_commit_sha: str
    reviewers: list[str]
    closes: list[str]
    url: str | None


class WhyIssue(BaseModel):
    document_id: str
    ref: str
    title: str
    state: str
    opened: datetime | None
    closed_by: list[str]
    url: str | None


class WhyError(BaseModel):
    document_id: str
    short_id: str
    title: str
    project: str
    status: str
    count: str
    first_seen: datetime | None
    last_seen: datetime | None
    first_release: str
    frames: list[str]  # the frames that name the file: "path in function line N"
    url: str | None


class WhyDeployment(BaseModel):
    document_id: str
    repo: str
    environment: str
    state: str
    sha: str
    at: datetime | None
    shipped: list[str]  # the commits it shipped, of those listed
    url: str | None


class WhyEvent(BaseModel):
    at: datetime
    kind: str  # commit, pull_request, merge, review, issue, error, deployment, conversation
    summary: str
    url: str | None
    document_id: str


@dataclass
class CommitRef:
    sha: str
    repo: str
    at: datetime | None
    branch: str = ""
    refs: list[str] = field(default_factory=list)


def qualified(refs: Iterable[str], repo: str) -> list[str]:
    """``#12`` in a commit of acme/api is ``acme/api#12``; refs already qualified stay."""
    out = []
    for ref in refs:
        if ref.startswith("#") and "/" in repo:
            out.append(f"{repo}{ref}")
        elif re.fullmatch(r"[\w.-]+/[\w.-]+#\d+", ref):
            out.append(ref)
    return out


def _number_ref(ref: str) -> Q | None:
    found = re.fullmatch(r"([\w.-]+/[\w.-]+)#(\d+)", ref)
    if found is None:
        return None
    return Q(metadata__repository__iexact=found.group(1), metadata__number=int(found.group(2)))


def pull_requests(
    actor: Actor, as_of: date | None, *, paths: list[str], commits: list[CommitRef], repo: str | None
) -> tuple[list[WhyPullRequest], list[Document]]:
    """Pull requests whose files include the paths, that merged as one of the commits, or that the
    commits' messages name."""
    wanted: list[Q] = [Q(metadata__files__contains=[p]) for p in paths]
    if shas := [c.sha for c in commits if c.sha]:
        wanted.append(Q(metadata__merge_commit_sha__in=shas))
    named = [q for c in commits for q in map(_number_ref, qualified(c.refs, c.repo)) if q is not None]
    wanted.extend(named[:MAX_ITEMS])
    if not wanted:
        return [], []
    rows = list(
        synced(actor, as_of, "pull_request")
        .filter(in_repo(repo), reduce(or_, wanted))
        .order_by("-occurred_at", "-pk")[:MAX_ITEMS]
    )
    return [_pull(d) for d in rows], rows


def _pull(document: Document) -> WhyPullRequest:
    meta = _meta(document)
    reviewers = [str(r.get("user", "")) for r in meta.get("reviews") or [] if isinstance(r, dict)]
    return WhyPullRequest(
        document_id=document.public_id,
        ref=f"{meta.get('repository', '')}#{meta.get('number', '')}",
        title=document.title.split(": ", 1)[-1],
        state="merged" if meta.get("merged_at") else str(meta.get("state", "")),
        author=str(meta.get("author", "")),
        opened=document.occurred_at,
        merged=_moment(meta.get("merged_at")),
        merge_commit_sha=str(meta.get("merge_commit_sha", "")),
        reviewers=list(dict.fromkeys(r for r in reviewers if r)),
        closes=[str(ref) for ref in meta.get("closes") or []],
        url=document.source_url or None,
    )


def closed_issues(actor: Actor, as_of: date | None, pulls: list[WhyPullRequest]) -> list[WhyIssue]:
    closers: dict[str, list[str]] = {}
    for pull in pulls:
        for ref in pull.closes:
            closers.setdefault(ref.lower(), []).append(pull.ref)
    asked = [q for q in map(_number_ref, closers) if q is not None]
    if not asked:
        return []
    rows = synced(actor, as_of, "issue").filter(reduce(or_, asked[:MAX_ITEMS])).order_by("-occurred_at", "-pk")
    issues = []
    for document in rows[:MAX_ITEMS]:
        meta = _meta(document)
        ref = f"{meta.get('repository', '')}#{meta.get('number', '')}"
        issues.append(
            WhyIssue(
                document_id=document.public_id,
                ref=ref,
                title=document.title.split(": ", 1)[-1],
                state=str(meta.get("state", "")),
                opened=document.occurred_at,
                closed_by=closers.get(ref.lower(), []),
                url=document.source_url or None,
            )
        )
    return issues


def _compatible(frame: str, paths: list[str]) -> bool:
    """A frame's file is one of ``paths``: the same, longer by leading folders (a server's
    absolute path), or a shorter tail of at least two segments."""
    return any(frame == p or frame.endswith("/" + p) or ("/" in frame and p.endswith("/" + frame)) for p in paths)


def errors(actor: Actor, as_of: date | None, *, paths: list[str], candidates: list[str]) -> list[WhyError]:
    """Sentry issues whose stack frames name one of ``paths``; ``candidates`` are the frame paths
    recorded near them (``why._candidate_paths`` over these documents)."""
    frames = [c for c in candidates if _compatible(c, paths)]
    if not frames:
        return []
    rows = (
        synced(actor, as_of, "sentry_issue")
        .filter(reduce(or_, [Q(metadata__files__contains=[f]) for f in frames]))
        .order_by("-occurred_at", "-pk")[:MAX_ITEMS]
    )
    found = []
    for document in rows:
        meta = _meta(document)
        named = [
            f"{f.get('file')} in {f.get('function') or '?'}" + (f" line {f['line']}" if f.get("line") else "")
            for f in meta.get("frames") or []
            if isinstance(f, dict) and f.get("file") in frames
        ]
        found.append(
            WhyError(
                document_id=document.public_id,
                short_id=str(meta.get("short_id", "")),
                title=document.title.split(": ", 1)[-1],
                project=str(meta.get("project", "")),
                status=str(meta.get("status", "")),
                count=str(meta.get("count", "")),
                first_seen=_moment(meta.get("first_seen")) or document.occurred_at,
                last_seen=_moment(meta.get("last_seen")),
                first_release=str(meta.get("first_release", "")),
                frames=named or [f for f in frames if f in (meta.get("files") or [])],
                url=document.source_url or None,
            )
        )
    return found


def deployments(actor: Actor, as_of: date | None, commits: list[CommitRef]) -> list[WhyDeployment]:
    """For each commit, the first successful deployment to each environment of its repository that
    shipped it: one of that very commit, or one of its branch made after it landed (a deployment
    ships what its branch held then). Newest first."""
    dated = [c for c in commits if c.repo and c.at]
    if not dated:
        return []
    earliest = min(c.at for c in dated if c.at)
    repos = {c.repo.lower() for c in dated}
    rows = list(
        synced(actor, as_of, "deployment")
        .filter(reduce(or_, [Q(metadata__repository__iexact=r) for r in repos]), metadata__state="success")
        .filter(Q(occurred_at__gte=earliest) | Q(metadata__sha__in=[c.sha for c in dated]))
        .order_by("occurred_at", "pk")[:MAX_DEPLOYMENTS_READ]
    )
    shipped: dict[int, list[str]] = {}
    for commit in dated:
        first_per_environment: dict[str, Document] = {}
        for document in rows:
            meta = _meta(document)
            same_repo = str(meta.get("repository", "")).lower() == commit.repo.lower()
            exact = meta.get("sha") == commit.sha
            later = document.occurred_at is not None and commit.at is not None and document.occurred_at >= commit.at
            on_branch = not commit.branch or meta.get("ref") in (commit.branch, f"refs/heads/{commit.branch}")
            if same_repo and (exact or (later and on_branch)):
                first_per_environment.setdefault(str(meta.get("environment", "")), document)
        for document in first_per_environment.values():
            shipped.setdefault(document.pk, []).append(commit.sha)
    by_pk = {d.pk: d for d in rows}
    out = [_deployment(by_pk[pk], shas) for pk, shas in shipped.items()]
    return sorted(out, key=lambda d: d.at or datetime.min.replace(tzinfo=UTC), reverse=True)[:MAX_ITEMS]


def _deployment(document: Document, shas: list[str]) -> WhyDeployment:
    meta = _meta(document)
    return WhyDeployment(
        document_id=document.public_id,
        repo=str(meta.get("repository", "")),
        environment=str(meta.get("environment", "")),
        state=str(meta.get("state", "")),
        sha=str(meta.get("sha", "")),
        at=document.occurred_at,
        shipped=shas,
        url=document.source_url or None,
    )
