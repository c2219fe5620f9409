"""Why code is the way it is: the commits, pull requests, tickets and conversations behind a path."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from functools import reduce
from operator import or_
from typing import Any

from django.core.exceptions import EmptyResultSet
from django.db import connections
from django.db.models import Count, F, Func, IntegerField, Q, QuerySet, Value
from django.db.models.fields.json import KT
from django.db.models.functions import Coalesce, Greatest, Substr
from pydantic import BaseModel

from brain.actors import Actor
from brain.errors import InvalidArgument
from brain.ids import format_id
from brain.mcp.limits import clamp
from brain.replicas import read_alias
from memory.access import current, readable
from memory.code_history.git import SOURCE_KIND, owner_and_name
from memory.models import Document

MAX_CANDIDATE_PATHS = 50
MAX_REFS = 20
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


def why_code(
    *, actor: Actor, path: str | None = None, repo: str | None = None, limit: int = 10, as_of: date | None = None
) -> WhyResult:
    """The recorded history of a file (or a repository): commits, related conversations, people."""
    wanted, repo = _arguments(path, repo)
    limit = clamp(limit, 1, 50)
    documents = _git_documents(actor, repo, as_of)
    matched = choose_paths(_candidate_paths(documents, wanted), wanted) if wanted else []
    if wanted:
        touching = [Q(metadata__files__contains=[p]) for p in matched]
        documents = documents.filter(reduce(or_, touching)) if touching else documents.none()
    commits = [_commit(d) for d in documents.order_by(F("occurred_at").desc(nulls_last=True), "-pk")[:limit]]
    refs = list(dict.fromkeys(ref for commit in commits for ref in commit.refs))[:MAX_REFS]
    return WhyResult(
        path=wanted,
        repo=repo,
        matched_paths=matched,
        total_commits=documents.count() if len(commits) == limit else len(commits),
        commits=commits,
        conversations=_mentions(actor, refs, as_of, limit),
        people=_people(documents),
        as_of=as_of,
    )


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


def _known_by(documents: QuerySet[Document], as_of: date | None) -> QuerySet[Document]:
    """Ingested documents, current or as they stood at the end of ``as_of``."""
    return documents.filter(current(as_of), status=Document.Status.READY)


def _git_documents(actor: Actor, repo: str | None, as_of: date | None) -> QuerySet[Document]:
    documents = _known_by(Document.objects.filter(readable(actor), source_kind=SOURCE_KIND), as_of)
    if repo:
        documents = documents.filter(Q(metadata__repo__iexact=repo) | Q(metadata__repo__iendswith="/" + repo))
    return documents


def _candidate_paths(documents: QuerySet[Document], path: str) -> list[str]:
    """Recorded paths equal to ``path``, ending it, or ending with it, on a ``/`` boundary."""
    try:
        sql, params = documents.order_by().values("metadata").query.sql_with_params()
    except EmptyResultSet:  # the actor may read no category at all
        return []
    files = "CASE WHEN jsonb_typeof(d.metadata -> 'files') = 'array' THEN d.metadata -> 'files' ELSE '[]' END"
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
    meta: dict[str, Any] = document.metadata if isinstance(document.metadata, dict) else {}
    return WhyCommit(
        document_id=document.public_id,
        sha=str(meta.get("sha", "")),
        repo=str(meta.get("repo", "")),
        author=str(meta.get("author", "")),
        email=str(meta.get("email", "")),
        date=document.occurred_at.date() if document.occurred_at else None,
        subject=document.title,
        refs=[str(r) for r in meta.get("refs") or []],
    )


def _people(commits: QuerySet[Document]) -> list[WhyPerson]:
    rows = (
        commits.order_by()
        .values(name=KT("metadata__author"), email=KT("metadata__email"))
        .annotate(commits=Count("pk"))
        .order_by("-commits")
    )
    merged: dict[str, WhyPerson] = {}
    for row in rows:
        key = (row["email"] or row["name"] or "").lower()
        known = merged.get(key)
        count = row["commits"] + (known.commits if known else 0)
        merged[key] = WhyPerson(
            name=known.name if known else row["name"] or "", email=row["email"] or "", commits=count
        )
    return sorted(merged.values(), key=lambda p: (-p.commits, p.name))[:MAX_PEOPLE]


def _mentions(actor: Actor, refs: list[str], as_of: date | None, limit: int) -> list[WhyConversation]:
    """Other documents that mention the references, newest first, with the passage around it."""
    if not refs:
        return []
    pattern = ref_pattern(refs)
    found_at = Func(
        F("content"), Value(pattern), 1, 1, 0, Value("i"), function="regexp_instr", output_field=IntegerField()
    )
    rows = (
        _known_by(Document.objects.filter(readable(actor)).exclude(source_kind=SOURCE_KIND), as_of)
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
    mentioned = [ref for ref in refs if re.search(ref_pattern([ref]), text, re.IGNORECASE)]
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
