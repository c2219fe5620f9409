"""Sentry: the issues (grouped errors) of chosen projects with their first and latest event, and the
organisation's releases of those projects, over Sentry's web API (``BRAIN_SENTRY_API_URL``, by
default https://sentry.io/api/0/). Sentry's Python package only sends errors; its API is read with
httpx.

An issue keeps its exception (type and value) and the stack frames' files and functions of its
first and latest event, in its text and in its metadata (``files``, repository-style paths), so
``why_code`` finds the errors a file raised. Its time is when it was first seen; when it was last
seen is in its text and metadata. It is brought in again when its status changes, or on the first
sync of a new day it was seen on, not at every occurrence.

Per project the cursor keeps, for each listing, the newest time read (issues by last seen,
releases by creation) and, mid-listing, the next page's address (``connectors.listing``). Sentry
pages with a ``Link`` header whose next link says ``results="true"`` while there is more.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import Any

import httpx
from django.conf import settings
from django.utils.dateparse import parse_datetime

from connectors.github_history import capped
from connectors.kinds import CredentialsRefused, Item, Kind, Page, SourceError, reach_failure, register
from connectors.listing import Read, walk
from memory.code_history.why import normalise_path

SLUG = re.compile(r"^[a-z0-9][a-z0-9_-]{0,49}$")
NEXT_LINK = re.compile(r'<([^>]+)>;\s*rel="next";\s*results="true"')
MAX_FRAMES = 25  # per event, the innermost kept
Get = Callable[[str, dict[str, str] | None], httpx.Response]


def _stamp(value: str | None) -> str:
    """A Sentry time as ``YYYY-MM-DDTHH:MM:SSZ`` in UTC (so stamps order as text); "" when absent."""
    moment = parse_datetime(value) if value else None
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ") if moment else ""


def _when(value: str | None) -> datetime | None:
    return parse_datetime(value) if value else None


def _shown(value: str) -> str:
    return value[:16].replace("T", " ") if value else "unknown"


def frame_path(frame: dict[str, Any]) -> str:
    """A frame's file as a repository-style path: ``~/src/a.js`` and ``app:///src/a.js`` as ``src/a.js``."""
    name = str(frame.get("filename") or frame.get("absPath") or "")
    return normalise_path(name.removeprefix("~/")) if name and not name.startswith("<") else ""


def exception_of(event: dict[str, Any]) -> tuple[dict[str, str], list[dict[str, Any]]]:
    """The reported exception (the last of a chain) and the frames of every exception in the event,
    innermost last, in-app frames only when there are any."""
    values: list[dict[str, Any]] = []
    for entry in event.get("entries") or []:
        if entry.get("type") == "exception":
            values.extend((entry.get("data") or {}).get("values") or [])
    if not values:
        return {}, []
    frames: list[dict[str, Any]] = []
    for value in values:
        frames.extend(((value.get("stacktrace") or {}).get("frames")) or [])
    if any(frame.get("inApp") for frame in frames):
        frames = [frame for frame in frames if frame.get("inApp")]
    kept = [
        {"file": frame_path(frame), "function": str(frame.get("function") or ""), "line": frame.get("lineNo")}
        for frame in frames
    ]
    last = values[-1]
    return {"type": str(last.get("type") or ""), "value": str(last.get("value") or "")[:500]}, kept[-MAX_FRAMES:]


def _release_of(event: dict[str, Any]) -> str:
    release = event.get("release")
    if isinstance(release, dict):
        return str(release.get("version") or "")
    for tag in event.get("tags") or []:
        if tag.get("key") == "release":
            return str(tag.get("value") or "")
    return ""


@register
class Sentry(Kind):
    slug = "sentry"
    label = "Sentry"
    credential_fields = {"token": "An auth token with the org:read, project:read and event:read scopes"}
    option_fields = {"organisation": "The organisation's slug", "projects": "Project slugs, one per line"}
    list_fields = frozenset({"projects"})

    @classmethod
    def clean_options(cls, raw: dict[str, str]) -> dict[str, Any]:
        organisation = raw.get("organisation", "").strip().lower()
        if not SLUG.match(organisation):
            raise ValueError("Give the organisation's slug, as in its Sentry address (sentry.io/organizations/<slug>).")
        names = [line.strip().lower() for line in raw.get("projects", "").replace(",", "\n").splitlines()]
        names = [name for name in names if name]
        if not names:
            raise ValueError("Name at least one project, by its slug.")
        if bad := [name for name in names if not SLUG.match(name)]:
            raise ValueError(f"{bad[0]!r} is not a project slug (lower-case letters, digits, - and _).")
        if len(names) > 50:
            raise ValueError("At most 50 projects in one connection.")
        return {"organisation": organisation, "projects": list(dict.fromkeys(names))}

    def _client(self) -> httpx.Client:
        return httpx.Client(
            base_url=settings.BRAIN_SENTRY_API_URL,
            headers={"Authorization": f"Bearer {self.credentials.get('token', '')}", "User-Agent": "Brain"},
            timeout=30,
        )

    def pages(self, cursor: dict[str, Any]) -> Iterator[Page]:
        org = self.options["organisation"]
        state = {project: dict(cursor.get(project, {})) for project in self.options["projects"]}
        with self._client() as http:
            for project in self.options["projects"]:

                def get(url: str, params: dict[str, str] | None, where: str = project) -> httpx.Response:
                    return self._get(http, url, params, where)

                about = get(f"projects/{org}/{project}/", None).json()
                issues = Issues(get=get, org=org, project=project)
                listings: list[tuple[str, str, dict[str, str], Callable[[Any, str | None], Read]]] = [
                    ("issues", f"projects/{org}/{project}/issues/", {"statsPeriod": ""}, issues.read),
                    ("releases", f"organizations/{org}/releases/", {"project": str(about.get("id", ""))},
                     Releases(org=org).read),
                ]  # fmt: skip
                for key, first, params, read in listings:
                    for items, moved in walk(
                        fetch=lambda url, query: self._fetch(get, url, query),
                        first=first,
                        params=partial(self._params, key, params),
                        read=read,
                        state=dict(state[project].get(key, {})),
                    ):
                        state[project] = {**state[project], key: moved}
                        yield Page(items=items, cursor={**cursor, **state})

    @staticmethod
    def _params(key: str, fixed: dict[str, str], since: str | None) -> dict[str, str]:
        if key == "issues":
            # Sentry's search takes an absolute time without a zone, read as UTC.
            return {**fixed, "query": f"lastSeen:>={since.removesuffix('Z')}" if since else ""}
        return fixed

    @staticmethod
    def _fetch(get: Get, url: str, params: dict[str, str] | None) -> tuple[Any, str | None]:
        answer = get(url, params)
        found = NEXT_LINK.search(answer.headers.get("link", ""))
        return answer.json(), found.group(1) if found else None

    def _get(self, http: httpx.Client, url: str, params: dict[str, str] | None, project: str) -> httpx.Response:
        try:
            answer = http.get(url, params=params)
        except httpx.HTTPError as exc:
            raise SourceError(reach_failure("Sentry", exc)) from exc
        if answer.status_code == 200:
            return answer
        if answer.status_code == 429:
            wait = answer.headers.get("retry-after", "")
            seconds = int(float(wait)) + 1 if wait.replace(".", "", 1).isdigit() else 60
            raise SourceError(
                "Sentry asked Brain to wait (HTTP 429); it goes on then.",
                retry_at=datetime.now(UTC) + timedelta(seconds=seconds),
            )
        if answer.status_code == 401:
            raise CredentialsRefused(
                "Sentry refused the token (401): it was revoked or is wrong. Make a new one and paste it here."
            )
        if answer.status_code in (403, 404):
            raise CredentialsRefused(
                f"Sentry answered {answer.status_code} for {self.options['organisation']}/{project}: the organisation "
                "or project does not exist, or the token may not read it (it needs org:read, project:read and "
                "event:read). Check the slugs, or give the token those scopes."
            )
        raise SourceError(f"Sentry answered HTTP {answer.status_code} for {project}; trying again later.")


class Issues:
    """One page of a project's issues, newest seen first, each with its first and latest event."""

    def __init__(self, *, get: Get, org: str, project: str) -> None:
        self.get, self.org, self.project = get, org, project

    def read(self, page: list[dict[str, Any]], since: str | None) -> Read:
        items: list[Item] = []
        stamps: list[str] = []
        for issue in page:
            seen = _stamp(issue.get("lastSeen"))
            if since and seen and seen < since:
                return Read(items=items, stamps=stamps, done=True)
            items.append(self._item(issue))
            stamps.append(seen)
        return Read(items=items, stamps=[s for s in stamps if s])

    def _event(self, issue_id: str, which: str) -> dict[str, Any]:
        event: dict[str, Any] = self.get(f"issues/{issue_id}/events/{which}/", None).json()
        return event

    def _item(self, issue: dict[str, Any]) -> Item:
        issue_id = str(issue["id"])
        first, latest = self._event(issue_id, "oldest"), self._event(issue_id, "latest")
        events = [("First event", first), ("Latest event", latest)]
        exception, frames = exception_of(latest)
        first_frames = exception_of(first)[1]
        paths = list(dict.fromkeys(f["file"] for f in [*first_frames, *frames] if f["file"]))
        files, cut = capped(paths)
        short_id = str(issue.get("shortId") or issue_id)
        status = str(issue.get("status") or "")
        first_seen, last_seen = _stamp(issue.get("firstSeen")), _stamp(issue.get("lastSeen"))
        first_release, last_release = _release_of(first), _release_of(latest)
        count, users = str(issue.get("count") or "0"), issue.get("userCount") or 0
        lines = [
            str(issue.get("title") or ""),
            f"In {issue.get('culprit') or 'unknown code'} ({self.org}/{self.project}).",
            f"Status: {status}. Seen {count} times by {users} users, first on {_shown(first_seen)}"
            + (f" (release {first_release})" if first_release else "")
            + f", last on {_shown(last_seen)}"
            + (f" (release {last_release})." if last_release else "."),
        ]
        for label, event in events:
            kind, stack = exception_of(event)
            if not kind and not stack:
                continue
            lines.append(f"\n{label} ({_shown(_stamp(event.get('dateCreated')))}):")
            if kind:
                lines.append(f"{kind['type']}: {kind['value']}")
            frames_text = [
                f"  at {f['file'] or '?'} in {f['function'] or '?'}" + (f" line {f['line']}" if f["line"] else "")
                for f in stack
            ]
            if frames_text:  # frames are code: read as such, never as sentences
                lines.extend(["```", *frames_text, "```"])
        return Item(
            source_id=f"{self.org}/{self.project}/issues/{issue_id}",
            version=f"{status}|{last_seen[:10]}",
            title=f"Sentry {short_id}: {issue.get('title') or ''}"[:500],
            content="\n".join(lines),
            content_type="text/markdown",
            url=str(issue.get("permalink") or ""),
            occurred_at=_when(first_seen),
            metadata={
                "kind": "sentry_issue",
                "organisation": self.org,
                "project": self.project,
                "issue_id": issue_id,
                "short_id": short_id,
                "status": status,
                "level": str(issue.get("level") or ""),
                "culprit": str(issue.get("culprit") or "")[:300],
                "count": count,
                "user_count": users,
                "first_seen": first_seen,
                "last_seen": last_seen,
                "first_release": first_release,
                "last_release": last_release,
                "exception": exception,
                "frames": [f for f in frames if f["file"]][-MAX_FRAMES:],
                "files": files,
                "files_cut": cut,
            },
        )


class Releases:
    """One page of the organisation's releases of a project, newest first."""

    def __init__(self, *, org: str) -> None:
        self.org = org

    def read(self, page: list[dict[str, Any]], since: str | None) -> Read:
        items: list[Item] = []
        stamps: list[str] = []
        for release in page:
            created = _stamp(release.get("dateCreated"))
            if since and created and created < since:
                return Read(items=items, stamps=stamps, done=True)
            items.append(self._item(release))
            stamps.append(created)
        return Read(items=items, stamps=[s for s in stamps if s])

    def _item(self, release: dict[str, Any]) -> Item:
        version = str(release.get("version") or "")
        short = str(release.get("shortVersion") or version)
        released = _stamp(release.get("dateReleased")) or _stamp(release.get("dateCreated"))
        deploy = release.get("lastDeploy") or {}
        projects = [p.get("slug", "") for p in release.get("projects") or []]
        created = _stamp(release.get("dateCreated"))
        lines = [
            f"Release {version} of {', '.join(projects) or self.org}, created {_shown(created)}"
            + (f", released {_shown(released)}" if release.get("dateReleased") else "")
            + f"; {release.get('newGroups') or 0} new issues, {release.get('commitCount') or 0} commits.",
        ]
        if deploy:
            lines.append(
                f"Last deployed to {deploy.get('environment', '?')} on {_shown(_stamp(deploy.get('dateFinished')))}."
            )
        web = settings.BRAIN_SENTRY_API_URL.removesuffix("/").removesuffix("/api/0")
        return Item(
            source_id=f"{self.org}/releases/{version}",
            version=f"{released}|{deploy.get('id', '')}|{release.get('newGroups') or 0}",
            title=f"Sentry release {short}"[:500],
            content="\n".join(lines),
            url=f"{web}/organizations/{self.org}/releases/{version}/",
            occurred_at=_when(released),
            metadata={
                "kind": "sentry_release",
                "organisation": self.org,
                "version": version,
                "projects": projects[:20],
                "date_created": _stamp(release.get("dateCreated")),
                "date_released": _stamp(release.get("dateReleased")),
                "new_issues": release.get("newGroups") or 0,
                "last_deploy": {
                    "environment": deploy.get("environment", ""),
                    "finished": _stamp(deploy.get("dateFinished")),
                }
                if deploy
                else {},
            },
        )
