"""Why code is the way it is: the commits, pull requests, tickets and conversations behind a path.

Commits come from local git history (``ingest_git``) and from synced repositories (a connector's
``commit`` items), one entry per commit where both hold it. The pull requests, closed issues,
errors and deployments around them come from ``memory.code_history.across``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time
from typing import Any

from django.core.exceptions import EmptyResultSet
from django.db import connections
from django.db.models import Count, F, Func, IntegerField, Q, QuerySet, Value
from django.db.models.functions import Coalesce, Greatest, Substr
from django.utils.dateparse import parse_datetime
from pydantic import BaseModel

from brain.core.actors import Actor
from brain.core.errors import InvalidArgument
from brain.infra.ids import format_id, parse_numeric_id
from brain.infra.replicas import read_alias
from brain.mcp.limits import clamp
from memory.access import readable
from memory.code_history.across import (
    CommitRef,
    WhyDeployment,
    WhyError,
    WhyEvent,
    WhyIssue,
    WhyPullRequest,
    closed_issues,
    deployments,
    errors,
    known_by,
    pull_requests,
    synced,
)
from memory.code_history.git import SOURCE_KIND, owner_and_name
from memory.documents.records import (
    CONNECTOR,
    CommitRecord,
    by_logins,
    commit_of,
    commits,
    files_sql,
    in_repository,
    touching,
    value,
)
from memory.documents.records import synced as synced_as
from memory.models import Document

MAX_CANDIDATE_PATHS = 50
MAX_REFS = 20
MAX_MENTIONED = 40  # references, pull requests, issues and commits looked for in conversations
MAX_PEOPLE = 10
SNIPPET_CHARS = 240
_SQUASH_SUFFIX = re.compile(r"\s*\((#\d+)\)$")  # "Fix rounding (#12)": the listed refs say it already
_PYTHON_FRAME = re.compile(r'File "([^"]+)"')
_DOTNET_FRAME = re.compile(r"\sin\s+(\S.*?):line \d+\s*$")
_PAREN_FRAME = re.compile(r"\((.+)\)\s*$")
_AT_FRAME = re.compile(r"^at\s+")
_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]+:/+", re.IGNORECASE)
_DRIVE = re.compile(r"^[A-Za-z]:(?=/)")
_TRAILERS = (
    re.compile(r"\s+\+0x[0-9a-f]+$", re.IGNORECASE),  # Go: "main.go:42 +0x1d"
    re.compile(r"#L\d+(?:-L\d+)?$"),  # a link to lines
    re.compile(r"\?[^/]*$"),  # a bundler's "?v=123"
    re.compile(r"(?::\d+){1,2}(?::in\b.*)?:?$"),  # ":42", ":42:7", Ruby's ":42:in `save'"
)


def normalise_path(value: str) -> str:
    """A repository-relative path from a path or a stack-trace line; "" when there is none."""
    text = value.strip().replace("\\", "/")
    frame = _PYTHON_FRAME.search(text) or _DOTNET_FRAME.search(text) or _PAREN_FRAME.search(text)
    if frame is not None:
        text = frame.group(1).strip()
    text = _AT_FRAME.sub("", text).strip().strip("'\"`")
    for trailer in _TRAILERS:
        text = trailer.sub("", text)
    text = _DRIVE.sub("", _SCHEME.sub("/", text))
    segments = [s for s in text.split("/") if s not in ("", ".")]
    while segments and segments[0] == "..":
        segments.pop(0)
    return "/".join(segments)


def choose_paths(candidates: list[str], path: str) -> list[str]:
    """The recorded paths meant by ``path``: itself, else the longest recorded path it ends
    with (an absolute path from a server), else every recorded path ending with it."""
    if path in candidates:
        return [path]
    inside = [c for c in candidates if path.endswith("/" + c)]
    if inside:
        return [max(inside, key=len)]
    return sorted(c for c in candidates if c.endswith("/" + path))


_SHA = re.compile(r"[0-9a-f]{40}")
_LEFT, _RIGHT = "(^|[^A-Za-z0-9_])", "($|[^A-Za-z0-9_])"
_SPECIAL = re.compile(r"([.^$*+?()\[\]{}|\\])")


def _spellings(ref: str) -> list[str]:
    """The ways people write a reference: "#12" is also "PR 12" or a link ending in pull/12."""
    qualified = re.fullmatch(r"(.+/.+)([#!])(\d+)", ref)
    if qualified:
        repo, mark, number = qualified.groups()
        web = ["pull", "issues"] if mark == "#" else ["-/merge_requests"]
        return [ref] + [f"{repo}/{kind}/{number}" for kind in web]
    if ref.startswith("#"):
        number = ref[1:]
        return [ref, f"PR {number}", f"pull/{number}"]
    if ref.startswith("!"):
        number = ref[1:]
        return [ref, f"MR {number}", f"merge_requests/{number}"]
    if _SHA.fullmatch(ref):  # a commit: its full or its short sha
        return [ref, ref[:7]]
    return [ref]


def ref_pattern(refs: list[str]) -> str:
    """One case-insensitive pattern, valid for Python and Postgres, matching any of ``refs``."""
    spellings = [_SPECIAL.sub(r"\\\1", s) for ref in refs for s in _spellings(ref)]
    return _LEFT + "(" + "|".join(spellings) + ")" + _RIGHT


class WhyCommit(BaseModel):
    document_id: str
    sha: str
    repo: str
    author: str
    email: str
    date: date | None
    subject: str
    refs: list[str]
    url: str | None = None  # the commit on its host, for a synced repository
    source: str = "git"  # "git" (local history) or "connector" (a synced repository)


class WhyConversation(BaseModel):
    document_id: str
    title: str
    source_kind: str
    date: date
    refs: list[str]
    snippet: str
    external_url: str | None


class WhyPerson(BaseModel):
    name: str
    email: str
    commits: int
    login: str = ""  # on the code host, where known
    pull_requests: int = 0  # pull requests among those listed that they opened
    reviews: int = 0  # reviews they gave on them


@dataclass(frozen=True)
class WhyResult:
    path: str | None
    repo: str | None
    matched_paths: list[str]
    total_commits: int
    commits: list[WhyCommit]
    conversations: list[WhyConversation]
    people: list[WhyPerson]
    as_of: date | None
    pull_requests: list[WhyPullRequest] = field(default_factory=list)
    issues: list[WhyIssue] = field(default_factory=list)
    errors: list[WhyError] = field(default_factory=list)
    deployments: list[WhyDeployment] = field(default_factory=list)
    timeline: list[WhyEvent] = field(default_factory=list)


def why_code(
    *, actor: Actor, path: str | None = None, repo: str | None = None, limit: int = 10, as_of: date | None = None
) -> WhyResult:
    """The recorded history of a file (or a repository): commits, the pull requests, issues,
    errors and deployments around them, related conversations, people, and all of it in time."""
    wanted, repo = _arguments(path, repo)
    limit = clamp(limit, 1, 50)
    documents = _git_documents(actor, repo, as_of)
    matched = choose_paths(_candidate_paths(_code_documents(actor, repo, as_of), wanted), wanted) if wanted else []
    if wanted:
        documents = documents.filter(touching(matched))
    commits = _distinct_commits(documents, limit)
    refs = list(dict.fromkeys(ref for commit, _, _ in commits for ref in commit.refs))[:MAX_REFS]
    marks = [CommitRef(sha=c.sha, repo=c.repo, at=at, branch=branch, refs=c.refs) for c, at, branch in commits]
    paths = matched or ([wanted] if wanted else [])
    pulls, pull_documents = pull_requests(actor, as_of, paths=matched, commits=marks, repo=repo)
    issues = closed_issues(actor, as_of, pulls)
    sentry = _sentry_documents(actor, as_of)
    raised = errors(actor, as_of, paths=paths, candidates=_candidate_paths(sentry, wanted) if wanted else [])
    shipped = deployments(actor, as_of, marks)
    listed = [c for c, _, _ in commits]
    mentioned = [*refs, *(p.ref for p in pulls), *(i.ref for i in issues), *(c.sha for c in listed)]
    listed_ids = [*(i.document_id for i in issues), *(e.document_id for e in raised), *(d.document_id for d in shipped)]
    shown = {d.pk for d in pull_documents} | {_pk(document_id) for document_id in listed_ids}
    conversations = _mentions(actor, list(dict.fromkeys(mentioned))[:MAX_MENTIONED], as_of, limit, shown)
    return WhyResult(
        path=wanted,
        repo=repo,
        matched_paths=matched,
        total_commits=_count_commits(documents) if len(listed) == limit else len(listed),
        commits=listed,
        conversations=conversations,
        people=_people(documents, pulls, actor, as_of),
        as_of=as_of,
        pull_requests=pulls,
        issues=issues,
        errors=raised,
        deployments=shipped,
        timeline=_timeline(listed, pulls, issues, raised, shipped, conversations),
    )


def _pk(public_id: str) -> int:
    return parse_numeric_id(public_id, "doc") or 0


def _arguments(path: str | None, repo: str | None) -> tuple[str | None, str | None]:
    if path and path.strip():
        wanted = normalise_path(path)
        if not wanted:
            raise InvalidArgument(f"{path!r} does not name a file; pass a path such as src/checkout/total.ts.")
    else:
        wanted = None
    repo = (repo or "").strip().removesuffix(".git").strip("/") or None
    if repo is not None:
        repo = owner_and_name(repo) or repo
    if wanted is None and repo is None:
        raise InvalidArgument(
            "Pass path (a file path or a stack-trace line such as src/checkout/total.ts:42), "
            "or repo (a repository such as acme/shop) for its recent commits, or both."
        )
    return wanted, repo


# Records of what happened to code, not conversations about it: they have sections of their own.
_SYNCED_RECORDS = synced_as("commit", "deployment", "release", "sentry_release")


def _git_documents(actor: Actor, repo: str | None, as_of: date | None) -> QuerySet[Document]:
    """Commits: from local git history, and from synced repositories."""
    return known_by(Document.objects.filter(readable(actor)).filter(commits()), as_of).filter(in_repository(repo))


def _code_documents(actor: Actor, repo: str | None, as_of: date | None) -> QuerySet[Document]:
    """Commits and synced pull requests: the documents whose ``files`` name repository paths."""
    code = commits() | synced_as("pull_request")
    return known_by(Document.objects.filter(readable(actor)).filter(code), as_of).filter(in_repository(repo))


def _sentry_documents(actor: Actor, as_of: date | None) -> QuerySet[Document]:
    return synced(actor, as_of, "sentry_issue")


def _distinct_commits(documents: QuerySet[Document], limit: int) -> list[tuple[WhyCommit, Any, str]]:
    """The newest commits, once each where local history and a synced repository both hold one
    (the synced one, which links to its host), with when each landed and on which branch."""
    ordered = documents.order_by(F("occurred_at").desc(nulls_last=True), "source_kind", "-pk")
    found: list[tuple[WhyCommit, Any, str]] = []
    seen: set[str] = set()
    for document in ordered[: limit * 3]:
        commit = _commit(document)
        if commit.sha and commit.sha in seen:
            continue
        seen.add(commit.sha)
        record = commit_of(document)
        landed = parse_datetime(record.committed_at) or document.occurred_at
        found.append((commit, landed, record.branch))
        if len(found) == limit:
            break
    return found


def _count_commits(documents: QuerySet[Document]) -> int:
    return documents.order_by().annotate(commit=value(CommitRecord, "sha")).values("commit").distinct().count()


def _candidate_paths(documents: QuerySet[Document], path: str) -> list[str]:
    """Recorded paths equal to ``path``, ending it, or ending with it, on a ``/`` boundary."""
    try:
        sql, params = documents.order_by().values("metadata").query.sql_with_params()
    except EmptyResultSet:  # the actor may read no category at all
        return []
    files = files_sql("d")
    # The inner statement is the ORM's own compiled SQL (its values in ``params``); the rest is fixed.
    query = (
        f"SELECT DISTINCT f.path FROM ({sql}) d, jsonb_array_elements_text({files}) f(path) "  # noqa: S608
        "WHERE f.path = %s OR right(%s, length(f.path) + 1) = '/' || f.path "
        "OR right(f.path, length(%s) + 1) = '/' || %s ORDER BY f.path LIMIT %s"
    )
    with connections[read_alias()].cursor() as cursor:
        cursor.execute(query, [*params, path, path, path, path, MAX_CANDIDATE_PATHS])
        return [row[0] for row in cursor.fetchall()]


def _commit(document: Document) -> WhyCommit:
    record = commit_of(document)
    return WhyCommit(
        document_id=document.public_id,
        sha=record.sha,
        repo=record.repository,
        author=record.author,
        email=record.email,
        date=document.occurred_at.date() if document.occurred_at else None,
        subject=document.title.split(": ", 1)[-1] if document.source_kind == CONNECTOR else document.title,
        refs=record.refs,
        url=document.source_url or None,
        source=document.source_kind,
    )


def _people(
    commits: QuerySet[Document], pulls: list[WhyPullRequest], actor: Actor, as_of: date | None
) -> list[WhyPerson]:
    """Who made the changes (commits counted once each), opened the pull requests and reviewed
    them; a code host's login is joined to a name where a synced commit records both."""
    rows = (
        commits.order_by()
        .values(
            name=value(CommitRecord, "author"), email=value(CommitRecord, "email"), login=value(CommitRecord, "login")
        )
        .annotate(commits=Count(value(CommitRecord, "sha"), distinct=True))
        .order_by("-commits")
    )
    merged: dict[str, WhyPerson] = {}
    by_login: dict[str, str] = {}
    for row in rows:
        key = (row["email"] or row["name"] or "").lower()
        known = merged.get(key)
        login = row["login"] or (known.login if known else "")
        count = row["commits"] + (known.commits if known else 0)
        merged[key] = WhyPerson(
            name=known.name if known else row["name"] or "", email=row["email"] or "", commits=count, login=login
        )
        if login:
            by_login[login.lower()] = key
    if pulls:
        by_login |= _logins(actor, as_of, {p.author for p in pulls} | {r for p in pulls for r in p.reviewers})
    for pull in pulls:
        for login, opened in [(pull.author, 1), *((r, 0) for r in pull.reviewers)]:
            if not login:
                continue
            key = by_login.get(login.lower(), "@" + login.lower())
            person = merged.get(key) or WhyPerson(name=login, email="", commits=0, login=login)
            person.login = person.login or login
            person.pull_requests += opened
            person.reviews += 1 - opened
            merged[key] = person
    ranked = sorted(merged.values(), key=lambda p: (-(p.commits + p.pull_requests + p.reviews), -p.commits, p.name))
    return ranked[:MAX_PEOPLE]


def _logins(actor: Actor, as_of: date | None, logins: set[str]) -> dict[str, str]:
    """People's keys (email, else name) by their login, from synced commits that record both."""
    rows = (
        synced(actor, as_of, "commit")
        .filter(by_logins(logins))
        .order_by()
        .values_list(value(CommitRecord, "login"), value(CommitRecord, "email"), value(CommitRecord, "author"))
        .distinct()
    )
    return {login.lower(): (email or name or "").lower() for login, email, name in rows[:200] if login}


def _mentions(actor: Actor, refs: list[str], as_of: date | None, limit: int, shown: set[int]) -> list[WhyConversation]:
    """Other documents that mention the references (``#12``, ``acme/api#12`` or its link, a
    commit's sha), newest first, with the passage around it: any chat, notes, tickets, synced
    messages; not commits, deployments or releases, nor what the answer lists already."""
    if not refs:
        return []
    pattern = ref_pattern(refs)
    found_at = Func(
        F("content"), Value(pattern), 1, 1, 0, Value("i"), function="regexp_instr", output_field=IntegerField()
    )
    rows = (
        known_by(Document.objects.filter(readable(actor)).exclude(source_kind=SOURCE_KIND), as_of)
        .exclude(_SYNCED_RECORDS)
        .exclude(pk__in=shown)
        .filter(Q(content__iregex=pattern) | Q(title__iregex=pattern))
        .annotate(at=found_at)
        .annotate(
            when=Coalesce("occurred_at", "recorded_at"),
            passage=Substr("content", Greatest(F("at") - SNIPPET_CHARS // 2, 1), SNIPPET_CHARS + 60),
        )
        .order_by("-when", "-pk")
        .values("pk", "title", "source_kind", "source_url", "when", "passage", "at")[:limit]
    )
    return [_mention(row, refs) for row in rows]


def _mention(row: dict[str, Any], refs: list[str]) -> WhyConversation:
    text = f"{row['title']}\n{row['passage']}"
    mentioned = [
        ref[:7] if _SHA.fullmatch(ref) else ref for ref in refs if re.search(ref_pattern([ref]), text, re.IGNORECASE)
    ]
    return WhyConversation(
        document_id=format_id("doc", row["pk"]),
        title=row["title"],
        source_kind=row["source_kind"],
        external_url=row["source_url"] or None,
        date=row["when"].date(),
        refs=mentioned,
        snippet=_snippet(row["passage"], trimmed=row["at"] > SNIPPET_CHARS // 2),
    )


def _snippet(passage: str, *, trimmed: bool) -> str:
    text = " ".join(passage.split())
    if trimmed and " " in text:
        text = "…" + text.split(" ", 1)[1]
    if len(text) > SNIPPET_CHARS:
        text = text[:SNIPPET_CHARS].rsplit(" ", 1)[0] + "…"
    return text


def _bare(subject: str, refs: list[str]) -> str:
    """The subject without a trailing "(#12)" when the listed references already carry it."""
    match = _SQUASH_SUFFIX.search(subject)
    return subject[: match.start()] if match and match.group(1) in refs else subject


def _timeline(
    commits: list[WhyCommit],
    pulls: list[WhyPullRequest],
    issues: list[WhyIssue],
    raised: list[WhyError],
    shipped: list[WhyDeployment],
    conversations: list[WhyConversation],
) -> list[WhyEvent]:
    """Everything above as one story, oldest first, each with its link in the source."""
    events: list[WhyEvent] = []

    def add(at: datetime | date | None, kind: str, summary: str, url: str | None, document_id: str) -> None:
        if at is None:
            return
        moment = at if isinstance(at, datetime) else datetime.combine(at, time.min, tzinfo=UTC)
        events.append(WhyEvent(at=moment, kind=kind, summary=summary, url=url, document_id=document_id))

    for issue in issues:
        add(issue.opened, "issue", f"{issue.ref} opened: {issue.title}", issue.url, issue.document_id)
    for pull in pulls:
        add(
            pull.opened, "pull_request", f"{pull.ref} opened by {pull.author}: {pull.title}", pull.url, pull.document_id
        )
        add(pull.merged, "merge", f"{pull.ref} merged as {pull.merge_commit_sha[:7]}", pull.url, pull.document_id)
    for commit in commits:
        summary = f"{commit.sha[:7]} {commit.author}: {_bare(commit.subject, commit.refs)}"
        add(commit.date, "commit", summary, commit.url, commit.document_id)
    for deployment in shipped:
        add(
            deployment.at,
            "deployment",
            f"{deployment.repo}@{deployment.sha[:7]} deployed to {deployment.environment} ({deployment.state})",
            deployment.url,
            deployment.document_id,
        )
    for error in raised:
        release = f" in release {error.first_release}" if error.first_release else ""
        add(
            error.first_seen,
            "error",
            f"{error.short_id} first seen{release}: {error.title}",
            error.url,
            error.document_id,
        )
    for conversation in conversations:
        add(conversation.date, "conversation", conversation.title, conversation.external_url, conversation.document_id)
    return sorted(events, key=lambda e: e.at)
