"""The records sources write on documents, declared once: what a commit, a pull request, an issue, a
release, a deployment, an error, a chat message and a mail keep in a document's ``metadata``.

A document of a synced source (``source_kind`` "connector") names its shape by its ``kind``; a
commit read from local git history (``source_kind`` "git") is a commit. ``add_document`` checks
such metadata against its shape (``checked_metadata``) and refuses a wrong one, naming the field;
what it stores is the record in the names declared here. Code that reads records does so through
the readers (``commit_of``, ``repository_of``...) and the filters (``in_repository``, ``touching``
...) below, never by a key of its own.

Every field has a default: a record may say less than its shape holds (an old row, a source that
does not know), never something else. A repository is ``repository``, ``owner/name``; ``repo``,
its name in rows written before, is read as it and moved by migration memory 0021.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import reduce
from operator import or_
from typing import Any, Literal, TypeVar

from django.db.models import Q
from django.db.models.fields.json import KT, KeyTextTransform
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from brain.core.errors import InvalidArgument
from memory.models import Document

CONNECTOR = "connector"  # the source_kind of what a connection brought in (connectors.sync)
GIT = "git"  # the source_kind of a commit read from local git history (memory.code_history.git)


class Record(BaseModel):
    """What every record may hold besides its own fields."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    connection: str = ""  # the name of the connection that brought it in
    # What memory read of the document's structure, kept once it was read (memory.graph.document_facts).
    source: dict[str, Any] | None = None

    @model_validator(mode="before")
    @classmethod
    def _null_is_unsaid(cls, data: Any) -> Any:
        """A field a source sends as null is one it does not know: its default."""
        return {k: v for k, v in data.items() if v is not None} if isinstance(data, dict) else data


class CodeRecord(Record):
    """A record of a repository."""

    repository: str = ""  # owner/name

    @model_validator(mode="before")
    @classmethod
    def _one_name_for_the_repository(cls, data: Any) -> Any:
        if not isinstance(data, dict) or "repo" not in data:
            return data
        data = dict(data)
        old = data.pop("repo")
        if data.setdefault("repository", old) != old:
            raise ValueError(f"repo ({old!r}) and repository ({data['repository']!r}) differ; give repository alone")
        return data


class CommitRecord(CodeRecord):
    kind: Literal["commit"] = "commit"
    sha: str = ""
    branch: str = ""  # the branch it was read from (a synced repository's default branch)
    author: str = ""
    email: str = ""
    login: str = ""  # on the code host
    committed_at: str = ""  # ISO 8601; when it landed (``occurred_at`` is when it was written)
    refs: list[str] = Field(default_factory=list)  # the pull requests and tickets its message names
    files: list[str] = Field(default_factory=list)
    files_cut: bool = False  # more files than the record holds; the content lists them


class Review(BaseModel):
    model_config = ConfigDict(extra="forbid")

    user: str = ""
    state: str = ""
    submitted_at: str = ""


class _Ticket(CodeRecord):
    number: int | None = None
    state: str = ""
    author: str = ""
    labels: list[str] = Field(default_factory=list)
    closed_at: str = ""

    @property
    def ref(self) -> str:
        """``owner/name#N``."""
        return f"{self.repository}#{'' if self.number is None else self.number}"


class IssueRecord(_Ticket):
    kind: Literal["issue"] = "issue"


class PullRequestRecord(_Ticket):
    kind: Literal["pull_request"] = "pull_request"
    files: list[str] = Field(default_factory=list)
    files_cut: bool = False
    merged_at: str = ""
    merge_commit_sha: str = ""
    base: str = ""
    reviews: list[Review] = Field(default_factory=list)
    closes: list[str] = Field(default_factory=list)  # owner/name#N


class ReleaseRecord(CodeRecord):
    kind: Literal["release"] = "release"
    tag: str = ""
    name: str = ""
    target: str = ""
    author: str = ""
    prerelease: bool = False
    published_at: str = ""


class DeploymentRecord(CodeRecord):
    kind: Literal["deployment"] = "deployment"
    sha: str = ""
    ref: str = ""
    environment: str = ""
    state: str = ""
    created_at: str = ""
    state_at: str = ""
    creator: str = ""


class Frame(BaseModel):
    model_config = ConfigDict(extra="forbid")

    file: str = ""
    function: str = ""
    line: int | None = None


class ErrorRecord(Record):
    """An error tracker's issue: grouped errors, with the frames of its first and latest event."""

    kind: Literal["sentry_issue"] = "sentry_issue"
    organisation: str = ""
    project: str = ""
    issue_id: str = ""
    short_id: str = ""
    status: str = ""
    level: str = ""
    culprit: str = ""
    count: str = ""
    user_count: int = 0
    first_seen: str = ""
    last_seen: str = ""
    first_release: str = ""
    last_release: str = ""
    exception: dict[str, str] = Field(default_factory=dict)  # type and value
    frames: list[Frame] = Field(default_factory=list)
    files: list[str] = Field(default_factory=list)
    files_cut: bool = False


class ErrorReleaseRecord(Record):
    kind: Literal["sentry_release"] = "sentry_release"
    organisation: str = ""
    version: str = ""
    projects: list[str] = Field(default_factory=list)
    date_created: str = ""
    date_released: str = ""
    new_issues: int = 0
    last_deploy: dict[str, str | None] = Field(default_factory=dict)  # environment and finished


class MessageRecord(Record):
    """A chat's thread, or its messages of one day outside threads."""

    kind: Literal["thread", "day"] = "thread"
    channel: str = ""
    channel_id: str = ""
    private: bool = False
    participants: list[str] = Field(default_factory=list)
    speakers: list[str] = Field(default_factory=list)
    messages: int = 0
    at: float = 0.0  # its first message, as the chat's timestamp


class MailRecord(Record):
    kind: Literal["mail"] = "mail"
    sender: str = Field("", alias="from")
    to: list[str] = Field(default_factory=list)
    cc: list[str] = Field(default_factory=list)
    subject: str = ""
    folder: str = ""
    uid: int = 0
    message_id: str = ""
    thread: str = ""
    attachments: list[str] = Field(default_factory=list)
    not_read: list[str] = Field(default_factory=list)  # attachments not read, each with why


SHAPES: dict[str, type[Record]] = {
    "commit": CommitRecord,
    "pull_request": PullRequestRecord,
    "issue": IssueRecord,
    "release": ReleaseRecord,
    "deployment": DeploymentRecord,
    "sentry_issue": ErrorRecord,
    "sentry_release": ErrorReleaseRecord,
    "thread": MessageRecord,
    "day": MessageRecord,
    "mail": MailRecord,
}
R = TypeVar("R", bound=Record)


class RecordRefused(InvalidArgument):
    """A source's record is not of its declared shape."""


# --- saving ---------------------------------------------------------------------------------


def shape_of(source_kind: str, metadata: dict[str, Any]) -> type[Record] | None:
    """The declared shape of a document's metadata, or None for a document that holds no record."""
    if source_kind == GIT:
        return CommitRecord
    if source_kind != CONNECTOR or not metadata:
        return None
    kind = metadata.get("kind")
    if kind not in SHAPES:
        known = ", ".join(sorted(SHAPES))
        said = f"is {kind!r}" if "kind" in metadata else "is missing"
        raise RecordRefused(f"The record's field 'kind' {said}; a synced record is one of: {known}.", field="kind")
    return SHAPES[str(kind)]


def checked_metadata(*, source_kind: str, metadata: dict[str, Any] | None) -> dict[str, Any]:
    """The metadata to store: a record checked against its shape and written in its declared names;
    any other metadata as given. RecordRefused names the first wrong field."""
    shape = shape_of(source_kind, metadata or {})
    if shape is None:
        return metadata or {}
    try:
        record = shape.model_validate(metadata or {})
    except ValidationError as exc:
        problem = exc.errors()[0]
        where = ".".join(str(part) for part in problem["loc"])
        kind = (metadata or {}).get("kind", "commit")
        if not where:
            raise RecordRefused(f"The {kind} record is wrong: {problem['msg']}.") from None
        raise RecordRefused(f"The {kind} record's field {where!r} is wrong: {problem['msg']}.", field=where) from None
    return record.model_dump(mode="json", by_alias=True, exclude_unset=True)


# --- reading --------------------------------------------------------------------------------


def read_record(metadata: object, shape: type[R]) -> R:
    """``metadata`` as a ``shape``, whatever a row holds: an unknown key is left out, and a field
    that is not of its shape reads as its default, so a row written before a shape changed still reads."""
    given = dict(metadata) if isinstance(metadata, dict) else {}
    if issubclass(shape, CodeRecord) and "repo" in given:
        given.setdefault("repository", given.pop("repo"))
    names = {info.alias or name for name, info in shape.model_fields.items()}
    given = {k: v for k, v in given.items() if k in names}
    while True:
        try:
            return shape.model_validate(given)
        except ValidationError as exc:
            wrong = {str(e["loc"][0]) for e in exc.errors() if e["loc"]} & set(given)
            if not wrong:
                return shape()
            given = {k: v for k, v in given.items() if k not in wrong}


def commit_of(document: Document) -> CommitRecord:
    return read_record(document.metadata, CommitRecord)


def pull_request_of(document: Document) -> PullRequestRecord:
    return read_record(document.metadata, PullRequestRecord)


def issue_of(document: Document) -> IssueRecord:
    return read_record(document.metadata, IssueRecord)


def deployment_of(document: Document) -> DeploymentRecord:
    return read_record(document.metadata, DeploymentRecord)


def error_of(document: Document) -> ErrorRecord:
    return read_record(document.metadata, ErrorRecord)


def repository_of(document: Document) -> str:
    return read_record(document.metadata, CodeRecord).repository


# --- filters, on the declared keys ----------------------------------------------------------


def key(shape: type[Record], name: str) -> str:
    """The key a field of ``shape`` is stored under; a field no shape declares is a KeyError."""
    info = shape.model_fields[name]
    return info.alias or name


def value(shape: type[Record], name: str) -> KeyTextTransform:
    """A field of the record as text, for ``values`` and ``annotate``."""
    return KT(f"metadata__{key(shape, name)}")


def synced(*kinds: str) -> Q:
    """Documents of a connector holding a record of one of ``kinds``. (``has_key`` first, so that
    excluding them keeps a document without a kind.)"""
    unknown = [kind for kind in kinds if kind not in SHAPES]
    if unknown:
        raise KeyError(f"no record of kind {unknown[0]!r}")
    return Q(source_kind=CONNECTOR, metadata__has_key="kind", metadata__kind__in=list(kinds))


def commits() -> Q:
    """Commits: from local git history, and from synced repositories."""
    return Q(source_kind=GIT) | synced("commit")


def in_repository(repo: str | None) -> Q:
    """Records of ``repo`` (``owner/name``, or its name alone); every document without one."""
    if not repo:
        return Q()
    return Q(metadata__repository__iexact=repo) | Q(metadata__repository__iendswith="/" + repo)


def in_repositories(repos: Iterable[str]) -> Q:
    """Records of exactly one of ``repos`` (``owner/name``, any case); none when there are none."""
    return _any(Q(metadata__repository__iexact=repo) for repo in repos)


_NUMBERED = re.compile(r"([\w.-]+/[\w.-]+)#(\d+)")


def numbered(ref: str) -> Q | None:
    """The issue or pull request ``owner/name#N``; None when ``ref`` is not of that form."""
    found = _NUMBERED.fullmatch(ref)
    if found is None:
        return None
    return Q(metadata__repository__iexact=found.group(1), metadata__number=int(found.group(2)))


def touching(paths: Iterable[str]) -> Q:
    """Records whose ``files`` hold one of ``paths``; none when there are none."""
    return _any(Q(metadata__files__contains=[path]) for path in paths)


def merged_as(shas: Iterable[str]) -> Q:
    return Q(metadata__merge_commit_sha__in=list(shas))


def of_commits(shas: Iterable[str]) -> Q:
    return Q(metadata__sha__in=list(shas))


def in_state(state: str) -> Q:
    return Q(metadata__state=state)


def by_logins(logins: Iterable[str]) -> Q:
    """Records whose ``login`` is one of ``logins``, any case; none when there are none."""
    return _any(Q(metadata__login__iexact=login) for login in logins if login)


def _any(each: Iterable[Q]) -> Q:
    found = list(each)
    return reduce(or_, found) if found else Q(pk__in=[])


def files_sql(alias: str) -> str:
    """SQL for the ``files`` of the records of table ``alias``, always an array."""
    files = f"{alias}.metadata -> '{key(CommitRecord, 'files')}'"
    return f"CASE WHEN jsonb_typeof({files}) = 'array' THEN {files} ELSE '[]' END"
