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

import re
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
    # How the page asks for each field (``form_fields``): a number, a list one per line, one of a
    # few values (value -> words), a yes or no. Any other field is one line of text.
    number_fields: ClassVar[frozenset[str]] = frozenset()
    list_fields: ClassVar[frozenset[str]] = frozenset()
    choice_fields: ClassVar[dict[str, tuple[tuple[str, str], ...]]] = {}
    flag_fields: ClassVar[frozenset[str]] = frozenset()

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
    def form_fields(cls) -> list[FormField]:
        """Each credential and option as the page asks for it, credentials first."""
        fields = [
            FormField(f"credential_{name}", label, _control(cls, name, secret=name not in cls.open_fields))
            for name, label in cls.credential_fields.items()
        ]
        fields += [
            FormField(f"option_{name}", label, _control(cls, name, secret=False), cls.choice_fields.get(name, ()))
            for name, label in cls.option_fields.items()
        ]
        return fields

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


@dataclass(frozen=True)
class FormField:
    """One field of a kind's form: its form name, what to type in words, and its control:
    ``password`` (a secret, never shown again), ``text`` (one line), ``number``, ``lines`` (a list,
    one per line), ``choice`` (one of ``choices``, value and words) or ``flag`` (a checkbox)."""

    name: str
    label: str
    control: str
    choices: tuple[tuple[str, str], ...] = ()


def _control(kind: type[Kind], name: str, *, secret: bool) -> str:
    if name in kind.choice_fields:
        return "choice"
    if name in kind.flag_fields:
        return "flag"
    if name in kind.list_fields:
        return "lines"
    if name in kind.number_fields:
        return "number"
    return "password" if secret else "text"


# What a failed connection to a source means, by the HTTP client's error class, in words a person
# can act on. The source's name goes in front; a sync tries again by itself either way.
REACH_FAILURES = {
    "ConnectError": "could not be reached from this Brain's server: check that the server can reach the "
    "internet (its DNS, a firewall or a proxy) and that the source is up",
    "ConnectTimeout": "did not answer the connection in time: it may be down or slow, or a firewall may be "
    "holding the connection",
    "ReadTimeout": "took too long to answer: it may be busy",
    "WriteTimeout": "took too long to take the request: the connection is slow",
    "PoolTimeout": "could not be asked: this Brain had too many requests waiting",
    "RemoteProtocolError": "closed the connection in the middle of its answer",
    "ProxyError": "could not be reached through the proxy this server uses: check the proxy settings",
    "UnsupportedProtocol": "has an address Brain cannot use: check that it starts with https://",
}
REACH_FAILED = "could not be reached just now"
_OLD_REACH = re.compile(r"^(?P<source>[\w .-]+?) could not be reached \((?P<error>\w+)\); trying again later\.$")


def reach_failure(source: str, error: BaseException | str) -> str:
    """Why ``source`` (GitHub, Slack, Sentry) could not be read, in words, never the error's class name."""
    name = error if isinstance(error, str) else type(error).__name__
    return f"{source} {REACH_FAILURES.get(name, REACH_FAILED)}. Brain tries again by itself."


def error_in_words(error: str) -> str:
    """A connection's last error as the page shows it: one saved in the older form, with the HTTP
    client's class name in brackets ("GitHub could not be reached (ConnectError); ..."), in words."""
    match = _OLD_REACH.match(error.strip())
    return reach_failure(match["source"], match["error"]) if match else error


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
