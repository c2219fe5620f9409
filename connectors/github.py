"""GitHub: the issues and pull requests of chosen repositories, with their comments, over GitHub's
REST API (``BRAIN_GITHUB_API_URL``, by default https://api.github.com). GitHub publishes no
Python client of its own; the calls used are few and plain, so they are made with httpx.

The cursor keeps, per repository, the update time to ask from (``since``) and, in the middle of a
listing, the next page's address, so a sync stopped between pages goes on from there.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
from django.conf import settings
from django.utils.dateparse import parse_datetime

from connectors.kinds import CredentialsRefused, Item, Kind, Page, SourceError, register

REPOSITORY = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
PER_PAGE = 50
NEXT_LINK = re.compile(r'<([^>]+)>;\s*rel="next"')


def _when(value: str | None) -> datetime | None:
    return parse_datetime(value) if value else None


@register
class GitHub(Kind):
    slug = "github"
    label = "GitHub"
    credential_fields = {"token": "A fine-grained personal access token with read access to issues and pull requests"}
    option_fields = {"repositories": "Repositories, one per line, as owner/name"}

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
                self._check_audience(http, repo)
                here = state[repo]
                url = here.get("next") or f"/repos/{repo}/issues"
                params = None if here.get("next") else self._listing(here.get("since"))
                while url:
                    answer = self._get(http, url, params, repo)
                    issues = answer.json()
                    items = [self._item(http, repo, issue) for issue in issues]
                    newest = max((i["updated_at"] for i in issues), default=here.get("newest"))
                    found = NEXT_LINK.search(answer.headers.get("link", ""))
                    url, params = (found.group(1), None) if found else (None, None)
                    if url:
                        here.update(next=url, newest=newest)
                    else:
                        here = {"since": newest or here.get("since")}
                    state[repo] = here
                    yield Page(items=items, cursor={**cursor, **state})

    def _check_audience(self, http: httpx.Client, repo: str) -> None:
        """A private repository's issues are for its people: never into a category every member reads."""
        if self.restricted:
            return
        if self._get(http, f"/repos/{repo}", None, repo).json().get("private", True):
            raise CredentialsRefused(
                f"{repo} is private on GitHub, but this connection brings it into a category every member "
                "reads. Add it again into a restricted category whose groups are the repository's people."
            )

    @staticmethod
    def _listing(since: str | None) -> dict[str, str]:
        params = {"state": "all", "sort": "updated", "direction": "asc", "per_page": str(PER_PAGE)}
        if since:
            params["since"] = since
        return params

    def _get(self, http: httpx.Client, url: str, params: dict[str, str] | None, repo: str) -> httpx.Response:
        try:
            answer = http.get(url, params=params)
        except httpx.HTTPError as exc:
            raise SourceError(f"GitHub could not be reached ({exc.__class__.__name__}); trying again later.") from exc
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
        if answer.status_code in (403, 404):
            raise CredentialsRefused(
                f"GitHub answered {answer.status_code} for {repo}: the repository does not exist or the token may "
                "not read its issues and pull requests. Check the name, or give the token that access."
            )
        raise SourceError(f"GitHub answered HTTP {answer.status_code} for {repo}; trying again later.")

    def _item(self, http: httpx.Client, repo: str, issue: dict[str, Any]) -> Item:
        number = issue["number"]
        pull = "pull_request" in issue
        author = (issue.get("user") or {}).get("login", "")
        parts = [issue.get("body") or ""]
        if issue.get("comments"):
            comments = self._get(http, f"/repos/{repo}/issues/{number}/comments", {"per_page": "100"}, repo).json()
            for comment in comments:
                who = (comment.get("user") or {}).get("login", "someone")
                parts.append(f"{who} on {comment.get('created_at', '')[:10]}:\n{comment.get('body') or ''}")
        kind = "Pull request" if pull else "Issue"
        return Item(
            source_id=f"{repo}#{number}",
            version=issue["updated_at"],
            title=f"{kind} {repo}#{number}: {issue.get('title', '')}"[:500],
            content="\n\n".join(part for part in parts if part.strip()) or issue.get("title", ""),
            url=issue.get("html_url", ""),
            occurred_at=_when(issue.get("created_at")),
            metadata={
                "repository": repo,
                "number": number,
                "kind": "pull_request" if pull else "issue",
                "state": issue.get("state", ""),
                "author": author,
                "labels": [label.get("name", "") for label in issue.get("labels", [])][:20],
                "closed_at": issue.get("closed_at") or "",
            },
        )


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
