"""A Sentry stand-in on loopback for the calls the connector makes, shaped as Sentry's web API
documents them: a project, a project's issues (newest seen first; ``query`` with
``lastSeen:>=``; cursor pagination in a ``Link`` header whose links say ``results="true"`` or
``"false"``), an issue's oldest and latest event, the organisation's releases of a project
(``?project=<id>``), bearer authentication (401 "Invalid token") and rate limiting (429 with
Retry-After)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from connectors.tests.stand_in import QuietHandler, send_json, serving

PAGE = 100  # Sentry's page size


@dataclass
class FakeSentry:
    token: str = "sntrys_valid"
    org: str = "acme"
    projects: dict[str, int] = field(default_factory=dict)  # slug -> id
    issues: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    events: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)  # (issue id, oldest|latest)
    releases: list[dict[str, Any]] = field(default_factory=list)  # newest first
    requests: list[str] = field(default_factory=list)
    refusals: list[tuple[int, dict[str, str]]] = field(default_factory=list)
    fail_on_cursor: str | None = None  # answer 500 once for this cursor
    base: str = ""

    def add_issue(
        self,
        project: str,
        issue_id: int,
        *,
        last_seen: str,
        first_seen: str = "2026-10-01T09:00:00Z",
        frames: tuple[tuple[str, str], ...] = (),
        status: str = "unresolved",
        release: str = "",
    ) -> None:
        self.projects.setdefault(project, 100 + len(self.projects))
        issue = {
            "id": str(issue_id), "shortId": f"{project.upper()}-{issue_id}", "title": f"ZeroDivisionError {issue_id}",
            "culprit": "checkout.total in compute", "permalink": f"https://acme.sentry.example/issues/{issue_id}/",
            "status": status, "level": "error", "count": "12", "userCount": 3, "firstSeen": first_seen,
            "lastSeen": last_seen, "project": {"slug": project, "id": str(self.projects[project])},
        }  # fmt: skip
        rest = [i for i in self.issues.get(project, []) if i["id"] != str(issue_id)]
        self.issues[project] = sorted([*rest, issue], key=lambda i: i["lastSeen"], reverse=True)
        stack = [
            {"filename": name, "absPath": f"/srv/app/{name}", "function": function, "lineNo": 10 + n, "inApp": True}
            for n, (name, function) in enumerate(frames)
        ]
        stack.insert(0, {"filename": "django/core/handlers/base.py", "function": "get_response", "inApp": False})
        for which, when in (("oldest", first_seen), ("latest", last_seen)):
            self.events[(str(issue_id), which)] = {
                "eventID": f"{which}{issue_id}", "dateCreated": when,
                "release": {"version": release} if release else None,
                "entries": [{"type": "exception", "data": {"values": [
                    {"type": "ZeroDivisionError", "value": "division by zero", "stacktrace": {"frames": stack}},
                ]}}],
            }  # fmt: skip

    def add_release(self, version: str, *, created: str, projects: list[str]) -> None:
        release = {"version": version, "shortVersion": version[:12], "dateCreated": created, "dateReleased": created,
                   "newGroups": 1, "commitCount": 2, "lastDeploy": {"id": "7", "environment": "production",
                   "dateFinished": created}, "projects": [{"slug": p} for p in projects]}  # fmt: skip
        self.releases = sorted([*self.releases, release], key=lambda r: r["dateCreated"], reverse=True)

    def answer(self, handler: BaseHTTPRequestHandler) -> tuple[int, dict[str, str], Any]:
        self.requests.append(handler.path)
        if handler.headers.get("Authorization") != f"Bearer {self.token}":
            return 401, {}, {"detail": "Invalid token"}
        if self.refusals:
            status, headers = self.refusals.pop(0)
            return status, headers, {"detail": "You are attempting to use this endpoint too frequently."}
        parts = urlsplit(handler.path)
        query = {k: v[0] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
        bits = parts.path.strip("/").split("/")[2:]  # after api/0
        if len(bits) == 3 and bits[0] == "projects" and bits[1] == self.org and bits[2] in self.projects:
            return 200, {}, {"id": str(self.projects[bits[2]]), "slug": bits[2]}
        if len(bits) == 4 and bits[0] == "projects" and bits[3] == "issues" and bits[2] in self.projects:
            listed = self.issues.get(bits[2], [])
            if found := re.fullmatch(r"lastSeen:>=(\S+)", query.get("query", "")):
                listed = [i for i in listed if i["lastSeen"].removesuffix("Z") >= found.group(1)]
            return self._paged(parts.path, listed, query)
        if len(bits) == 4 and bits[0] == "issues" and bits[2] == "events" and (bits[1], bits[3]) in self.events:
            return 200, {}, self.events[(bits[1], bits[3])]
        if bits == ["organizations", self.org, "releases"]:
            wanted = {slug for slug, pk in self.projects.items() if str(pk) == query.get("project")}
            listed = [r for r in self.releases if wanted & {p["slug"] for p in r["projects"]}]
            return self._paged(parts.path, listed, query)
        return 404, {}, {"detail": "The requested resource does not exist"}

    def _paged(self, path: str, items: list[Any], query: dict[str, str]) -> tuple[int, dict[str, str], Any]:
        cursor = query.get("cursor", "0:0:0")
        if self.fail_on_cursor == cursor:
            self.fail_on_cursor = None
            return 500, {}, {"detail": "Internal Error"}
        offset = int(cursor.split(":")[1])
        more = offset + PAGE < len(items)

        def link(at: int, rel: str, results: bool) -> str:
            value = f"0:{at}:{1 if rel == 'previous' else 0}"
            return (
                f'<{self.base}{path}?{urlencode({**query, "cursor": value})}>; rel="{rel}"; '
                f'results="{str(results).lower()}"; cursor="{value}"'
            )

        headers = {
            "Link": f"{link(max(offset - PAGE, 0), 'previous', offset > 0)}, {link(offset + PAGE, 'next', more)}"
        }
        return 200, headers, items[offset : offset + PAGE]


@contextmanager
def sentry_server() -> Iterator[FakeSentry]:
    fake = FakeSentry()

    class Handler(QuietHandler):
        def do_GET(self) -> None:  # noqa: N802 (the standard library's name)
            send_json(self, *fake.answer(self))

    with serving(Handler) as base:
        fake.base = base
        yield fake
