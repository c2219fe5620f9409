"""The rest of a file's story from synced systems: the pull requests that touched it or merged its
commits, the issues those closed, the errors whose stack frames name it, and the deployments that
shipped its commits. Read from documents connectors brought in, through the readers and filters of
their records (``memory.documents.records``), under the same access rule and as-of rule as every
read (``memory.access``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from functools import reduce
from operator import or_

from django.db.models import Q, QuerySet
from django.utils.dateparse import parse_datetime
from pydantic import BaseModel

from brain.core.actors import Actor
from memory.access import current, readable
from memory.documents.records import (
    DeploymentRecord,
    deployment_of,
    error_of,
    in_repositories,
    in_repository,
    in_state,
    issue_of,
    merged_as,
    numbered,
    of_commits,
    pull_request_of,
    touching,
)
from memory.documents.records import synced as synced_as
from memory.models import Document

MAX_ITEMS = 50
MAX_DEPLOYMENTS_READ = 500


def known_by(documents: QuerySet[Document], as_of: date | None) -> QuerySet[Document]:
    """Ingested documents, current or as they stood at the end of ``as_of``."""
    return documents.filter(current(as_of), status=Document.Status.READY)


def known_documents(actor: Actor, as_of: date | None) -> QuerySet[Document]:
    """Ingested documents the actor reads, current or as they stood at the end of ``as_of``."""
    return known_by(Document.objects.filter(readable(actor)), as_of)


def synced(actor: Actor, as_of: date | None, kind: str) -> QuerySet[Document]:
    return known_documents(actor, as_of).filter(synced_as(kind))


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


def pull_requests(
    actor: Actor, as_of: date | None, *, paths: list[str], commits: list[CommitRef], repo: str | None
) -> tuple[list[WhyPullRequest], list[Document]]:
    """Pull requests whose files include the paths, that merged as one of the commits, or that the
    commits' messages name."""
    wanted: list[Q] = [touching([p]) for p in paths]
    if shas := [c.sha for c in commits if c.sha]:
        wanted.append(merged_as(shas))
    named = [q for c in commits for q in map(numbered, qualified(c.refs, c.repo)) if q is not None]
    wanted.extend(named[:MAX_ITEMS])
    if not wanted:
        return [], []
    rows = list(
        synced(actor, as_of, "pull_request")
        .filter(in_repository(repo), reduce(or_, wanted))
        .order_by("-occurred_at", "-pk")[:MAX_ITEMS]
    )
    return [_pull(d) for d in rows], rows


def _pull(document: Document) -> WhyPullRequest:
    pull = pull_request_of(document)
    return WhyPullRequest(
        document_id=document.public_id,
        ref=pull.ref,
        title=document.title.split(": ", 1)[-1],
        state="merged" if pull.merged_at else pull.state,
        author=pull.author,
        opened=document.occurred_at,
        merged=_moment(pull.merged_at),
        merge_commit_sha=pull.merge_commit_sha,
        reviewers=list(dict.fromkeys(r.user for r in pull.reviews if r.user)),
        closes=pull.closes,
        url=document.source_url or None,
    )


def closed_issues(actor: Actor, as_of: date | None, pulls: list[WhyPullRequest]) -> list[WhyIssue]:
    closers: dict[str, list[str]] = {}
    for pull in pulls:
        for ref in pull.closes:
            closers.setdefault(ref.lower(), []).append(pull.ref)
    asked = [q for q in map(numbered, closers) if q is not None]
    if not asked:
        return []
    rows = synced(actor, as_of, "issue").filter(reduce(or_, asked[:MAX_ITEMS])).order_by("-occurred_at", "-pk")
    issues = []
    for document in rows[:MAX_ITEMS]:
        issue = issue_of(document)
        issues.append(
            WhyIssue(
                document_id=document.public_id,
                ref=issue.ref,
                title=document.title.split(": ", 1)[-1],
                state=issue.state,
                opened=document.occurred_at,
                closed_by=closers.get(issue.ref.lower(), []),
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
    rows = synced(actor, as_of, "sentry_issue").filter(touching(frames)).order_by("-occurred_at", "-pk")[:MAX_ITEMS]
    found = []
    for document in rows:
        error = error_of(document)
        named = [
            f"{f.file} in {f.function or '?'}" + (f" line {f.line}" if f.line else "")
            for f in error.frames
            if f.file in frames
        ]
        found.append(
            WhyError(
                document_id=document.public_id,
                short_id=error.short_id,
                title=document.title.split(": ", 1)[-1],
                project=error.project,
                status=error.status,
                count=error.count,
                first_seen=_moment(error.first_seen) or document.occurred_at,
                last_seen=_moment(error.last_seen),
                first_release=error.first_release,
                frames=named or [f for f in frames if f in error.files],
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
        .filter(in_repositories(repos), in_state("success"))
        .filter(Q(occurred_at__gte=earliest) | of_commits(c.sha for c in dated))
        .order_by("occurred_at", "pk")[:MAX_DEPLOYMENTS_READ]
    )
    records = {document.pk: deployment_of(document) for document in rows}
    shipped: dict[int, list[str]] = {}
    for commit in dated:
        first_per_environment: dict[str, Document] = {}
        for document in rows:
            deployment = records[document.pk]
            same_repo = deployment.repository.lower() == commit.repo.lower()
            exact = deployment.sha == commit.sha
            later = document.occurred_at is not None and commit.at is not None and document.occurred_at >= commit.at
            on_branch = not commit.branch or deployment.ref in (commit.branch, f"refs/heads/{commit.branch}")
            if same_repo and (exact or (later and on_branch)):
                first_per_environment.setdefault(deployment.environment, document)
        for document in first_per_environment.values():
            shipped.setdefault(document.pk, []).append(commit.sha)
    by_pk = {d.pk: d for d in rows}
    out = [_deployment(by_pk[pk], records[pk], shas) for pk, shas in shipped.items()]
    return sorted(out, key=lambda d: d.at or datetime.min.replace(tzinfo=UTC), reverse=True)[:MAX_ITEMS]


def _deployment(document: Document, deployment: DeploymentRecord, shas: list[str]) -> WhyDeployment:
    return WhyDeployment(
        document_id=document.public_id,
        repo=deployment.repository,
        environment=deployment.environment,
        state=deployment.state,
        sha=deployment.sha,
        at=document.occurred_at,
        shipped=shas,
        url=document.source_url or None,
    )
