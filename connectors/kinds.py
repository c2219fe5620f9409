"""What a connector is, and the registry of kinds.

A kind reads its source in pages from a cursor: each page carries items (new or changed, or gone
from the source) and the cursor to resume from after it. ``connectors.sync`` saves a page's
items and its cursor in one transaction, so a sync stopped anywhere (a worker killed mid-page)
resumes at the last saved page and brings nothing in twice.

Permissions follow the source: an item of a part of the source only some people read (a private
Slack channel) names that part's ``Audience``; the page that first carries such items also says who
its members are (by email), and ``connectors.sync`` keeps a restricted category of its own, read
by exactly those of them who are members of the organisation.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, ClassVar

from brain.mcp.registry import TOOLS, ToolSpec


@dataclass(frozen=True)
class Item:
    source_id: str  # the source's own id, stable across edits
    version: str  # changes when the item does (an update time, an etag)
    title: str = ""
    content: str = ""
    url: str = ""
    occurred_at: datetime | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    gone: bool = False  # deleted or hidden in the source: withdraw what was brought in
    speaker: str = ""  # who wrote it, when it is one message (a mail)
    # What it belongs to, so its passages are found with the rest: a mail's thread, a chat's channel
    conversation: str = ""
    session: str = ""  # a chat's thread or day within the conversation
    audience: str = ""  # the key of the Audience that reads it; "" for the connection's own category
    # How its text is written, so it is read by the same block readers as an upload: an issue's or
    # pull request's body is markdown, an error's frames are code.
    content_type: str = "text/plain"


@dataclass(frozen=True)
class Audience:
    """A part of the source only its members read (a private channel), and who they are."""

    key: str  # the source's own id for it, stable across renames
    name: str  # in words, for the category it gets ("#design-review")
    emails: frozenset[str]  # its members' addresses, lower case; a member without one reads nothing


@dataclass(frozen=True)
class Page:
    items: list[Item]
    cursor: dict[str, Any]
    audiences: list[Audience] = field(default_factory=list)  # brought up to date before the items


class SourceError(Exception):
    """The source could not be read this time; the sync is tried again later."""

    def __init__(self, message: str, *, retry_at: datetime | None = None) -> None:
        super().__init__(message)
        self.message, self.retry_at = message, retry_at


class CredentialsRefused(SourceError):
    """The source refused the credentials: nothing is retried until someone replaces them."""


class Kind:
    """One kind of source. Subclasses name themselves, say which credentials and options they take,
    check options, and read pages."""

    slug: ClassVar[str]
    label: ClassVar[str]
    credential_fields: ClassVar[dict[str, str]]  # name -> what to paste, in words
    option_fields: ClassVar[dict[str, str]]
    # Credentials that are not secret (a server's name, a username): typed in the open on the page.
    # Every other one is a password field, and none is ever shown again.
    open_fields: ClassVar[frozenset[str]] = frozenset()

    def __init__(
        self,
        *,
        credentials: dict[str, Any],
        options: dict[str, Any],
        restricted: bool = False,
        rechecks: tuple[str, ...] = (),
    ) -> None:
        # ``restricted``: the category it brings knowledge into is limited to some groups. A kind
        # refuses to bring what its source keeps private into a category every member reads.
        # ``rechecks``: parts of the source a webhook said changed (the kind's own keys), to read
        # again whatever the cursor says; they are forgotten once a sync has finished.
        self.credentials, self.options, self.restricted = credentials, options, restricted
        self.rechecks = rechecks

    @classmethod
    def clean_options(cls, raw: dict[str, str]) -> dict[str, Any]:
        """The options as stored; raises ValueError with a sentence for a person."""
        raise NotImplementedError

    @classmethod
    def check(cls, *, credentials: dict[str, str], options: dict[str, Any], restricted: bool) -> None:
        """What can be known wrong before any sync (nothing is sent anywhere): raises ValueError with
        a sentence for a person. ``pages`` checks again, as a category can change after."""

    def pages(self, cursor: dict[str, Any]) -> Iterator[Page]:
        raise NotImplementedError


KINDS: dict[str, type[Kind]] = {}


def register(kind: type[Kind]) -> type[Kind]:
    KINDS[kind.slug] = kind
    return kind


def tools_of(kind: str) -> list[ToolSpec]:
    """The tools a connection of ``kind`` offers (``connectors.mcp_tools``), reading ones first."""
    return sorted((spec for spec in TOOLS.values() if spec.connector == kind), key=lambda s: (s.action, s.name))


def actions_of(kind: str) -> list[str]:
    """Its ACTION tools: each off until an admin grants it on a connection (``connectors.grants``)."""
    return [spec.name for spec in tools_of(kind) if spec.action]
