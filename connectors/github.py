"""GitHub: the issues and pull requests of chosen repositories with their comments, and the history
of their code (commits of the default branch, releases, deployments), over GitHub's REST API
(``BRAIN_GITHUB_API_URL``, by default https://api.github.com). GitHub publishes no Python client of
its own; the calls used are few and plain, so they are made with httpx.

The cursor keeps, per repository, the update time to ask issues from (``since``) and, in the middle
of the issues listing, the next page's address, so a sync stopped between pages goes on from
there; each of the other listings keeps the same under its own name (``commits``, ``releases``,
``deployments``; see ``connectors.listing``). A token that may not read one of those (a 403 or
404) skips that listing and notes it in the cursor, so a token made for issues alone keeps
working.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
from django.conf import settings

from connectors.github_history import History
from connectors.kinds import CredentialsRefused, Kind, Page, SourceError, reach_failure, register
from connectors.listing import Read, walk

logger = logging.getLogger("brain.connectors")
REPOSITORY = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
PER_PAGE = 50
NEXT_LINK = re.compile(r'<([^>]+)>;\s*rel="next"')
ISSUE_STATE = ("since", "next", "newest", "hold")
OTHER_LISTINGS = ("commits", "releases", "deployments")


class Unreadable(Exception):
    """The token may not read this listing (GitHub answered 403 or 404)."""


@register
class GitHub(Kind):
    slug = "github"
    label = "GitHub"
    credential_fields = {
        "token": "A fine-grained personal access token with read access to issues, pull requests, contents "
        "and deployments"
    }
    option_fields = {"repositories": "Repositories, one per line, as owner/name"}
    list_fields = frozenset({"repositories"})

    @classmethod
    def clean_options(cls, raw: dict[str, str]) -> dict[str, Any]:
        names = [line.strip() for line in raw.get("repositories", "").replace(",", "\n").splitlines() if line.strip()]
        if not names:
            raise ValueError("Name at least one repository, as owner/name.")
        if bad := [name for name in names if not REPOSITORY.match(name)]:
            raise ValueError(f"{bad[0]!r} is not a repository name; write it as owner/name.")
        if len(names) > 50:
            raise ValueError("At most 50 repositories in one connection.")
        return {"repositories": list(dict.fromkeys(names))}

    def _client(self) -> httpx.Client:
        return httpx.Client(
            base_url=settings.BRAIN_GITHUB_API_URL,
            headers={
                "Authorization": f"Bearer {self.credentials.get('token', '')}",
                "Accept": "application/vnd.github+json",
                "X-GitHub-Api-Version": "2022-11-28",
                "User-Agent": "Brain",
            },
            timeout=30,
        )

    def pages(self, cursor: dict[str, Any]) -> Iterator[Page]:
        state = {repo: dict(cursor.get(repo, {})) for repo in self.options["repositories"]}
        with self._client() as http:
            for repo in self.options["repositories"]:
                about = self._repository(http, repo)
                history = History(get=self._reader(http, repo), repo=repo, about=about)
                for key in ("issues", *OTHER_LISTINGS):
                    for kept in self._listing(http, repo, key, history, state[repo]):
                        state[repo] = kept
                        yield Page(items=kept.pop("_items"), cursor={**cursor, **state})

    def _listing(
        self, http: httpx.Client, repo: str, key: str, history: History, here: dict[str, Any]
    ) -> Iterator[dict[str, Any]]:
        """The repository's cursor entry after each page of one listing (its items under ``_items``).
        The issues listing keeps its place at the top of the entry, as cursors saved before the
        other listings existed do; each other listing keeps its own under its name."""
        if key == "issues":
            mine = {k: here[k] for k in ISSUE_STATE if k in here}
        else:
            mine = {k: v for k, v in here.get(key, {}).items() if k != "unreadable"}
        reader: Callable[[Any, str | None], Read] = getattr(history, key)
        try:
            for items, moved in walk(
                fetch=lambda url, params: self._fetch(http, url, params, repo, optional=key != "issues"),
                first=f"/repos/{repo}/{key}",
                params=lambda since: self._params(key, since),
                read=reader,
                state=mine,
            ):
                if key == "issues":
                    here = {k: v for k, v in here.items() if k in OTHER_LISTINGS} | moved
                else:
                    here = {**here, key: moved}
                yield {**here, "_items": items}
        except Unreadable as exc:
            logger.info("GitHub %s of %s not read: %s", key, repo, exc)
            yield {**here, key: {**mine, "unreadable": str(exc)}, "_items": []}

    def _reader(self, http: httpx.Client, repo: str) -> Callable[[str, dict[str, str] | None], Any]:
        def get(url: str, params: dict[str, str] | None) -> Any:
            return self._get(http, url, params, repo).json()

        return get

    def _fetch(
        self, http: httpx.Client, url: str, params: dict[str, str] | None, repo: str, *, optional: bool
    ) -> tuple[Any, str | None]:
        answer = self._get(http, url, params, repo, optional=optional)
        found = NEXT_LINK.search(answer.headers.get("link", ""))
        return answer.json(), found.group(1) if found else None

    def _repository(self, http: httpx.Client, repo: str) -> dict[str, Any]:
        """The repository's own record. A private repository's issues are for its people: never into
        a category every member reads."""
        about: dict[str, Any] = self._get(http, f"/repos/{repo}", None, repo).json()
        if not self.restricted and about.get("private", True):
            raise CredentialsRefused(
                f"{repo} is private on GitHub, but this connection brings it into a category every member "
                "reads. Add it again into a restricted category whose groups are the repository's people."
            )
        return about

    @staticmethod
    def _params(key: str, since: str | None) -> dict[str, str]:
        params = {"per_page": str(PER_PAGE)}
        if key == "issues":
            params.update(state="all", sort="updated", direction="asc")
        if since and key in ("issues", "commits"):
            params["since"] = since
        return params

    def _get(
        self, http: httpx.Client, url: str, params: dict[str, str] | None, repo: str, *, optional: bool = False
    ) -> httpx.Response:
        try:
            answer = http.get(url, params=params)
        except httpx.HTTPError as exc:
            raise SourceError(reach_failure("GitHub", exc)) from exc
        if answer.status_code == 200:
            return answer
        wait = _wait(answer)
        if wait is not None:
            raise SourceError(
                f"GitHub asked Brain to wait (HTTP {answer.status_code}); it goes on then.", retry_at=wait
            )
        if answer.status_code == 401:
            raise CredentialsRefused(
                "GitHub refused the token (401): it was revoked or has expired. Make a new one and paste it here."
            )
        if answer.status_code in (403, 404) and optional:
            raise Unreadable(f"HTTP {answer.status_code}")
        if answer.status_code in (403, 404):
            raise CredentialsRefused(
                f"GitHub answered {answer.status_code} for {repo}: the repository does not exist or the token may "
                "not read its issues and pull requests. Check the name, or give the token that access."
            )
        raise SourceError(f"GitHub answered HTTP {answer.status_code} for {repo}; trying again later.")


def _wait(answer: httpx.Response) -> datetime | None:
    """When GitHub asks to come back (a secondary limit's Retry-After, or the primary limit's reset)."""
    now = datetime.now(UTC)
    if answer.status_code in (403, 429) and answer.headers.get("retry-after", "").isdigit():
        return now + timedelta(seconds=int(answer.headers["retry-after"]))
    if answer.status_code in (403, 429) and answer.headers.get("x-ratelimit-remaining") == "0":
        reset = answer.headers.get("x-ratelimit-reset", "")
        if reset.isdigit():
            return datetime.fromtimestamp(int(reset), UTC)
        return now + timedelta(minutes=1)
    return None
