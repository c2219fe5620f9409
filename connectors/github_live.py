"""GitHub asked live on a person's behalf: the ``github_*`` tools (``connectors.mcp_tools``).

What a tool may reach follows what the caller reads in Brain: only the repositories of GitHub
connections whose category the caller reads, each asked with its own connection's token. A
repository outside them is answered as unknown, whether it is connected or not. Searches name
those repositories themselves: a query may not widen itself with ``repo:``, ``org:`` or
``user:``, and every hit is checked against them again before it is returned.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import httpx

from brain.core.actors import Actor
from brain.core.errors import InvalidArgument, NotFound, PermissionDenied, Unavailable
from connectors.github import GitHub
from connectors.models import Connection
from connectors.sealing import CredentialsUnreadable, unseal
from memory.access import readable_category_ids

TIMEOUT = 15.0
BODY_MAX = 20_000
COMMENTS_MAX = 50
# Qualifiers that choose where GitHub looks: Brain chooses that, from what the caller reads.
WIDENING = re.compile(r"(?i)(?<![\w.-])-?(repo|org|user|owner)\s*:")


@dataclass(frozen=True)
class Reach:
    """The GitHub connections a caller may use, and the repositories each covers."""

    connections: list[Connection]

    def repositories(self) -> list[str]:
        return sorted({repo for c in self.connections for repo in c.options.get("repositories", [])}, key=str.lower)

    def connection_for(self, repository: str, *, granted: str | None = None) -> Connection:
        wanted = repository.strip().lower()
        for connection in self.connections:
            if granted is not None and granted not in connection.granted_tools:
                continue
            if wanted in (repo.lower() for repo in connection.options.get("repositories", [])):
                return connection
        if granted is not None and any(
            wanted in (r.lower() for r in c.options.get("repositories", [])) for c in self.connections
        ):
            raise PermissionDenied(
                f"No admin has granted {granted} on the connection that covers {repository}; tell the user an "
                "admin can grant it on the Connectors page."
            )
        raise NotFound(
            f"No connected GitHub repository named {repository!r} that you can read. The ones you can reach are: "
            f"{', '.join(self.repositories()) or 'none'}."
        )


def reach_of(actor: Actor) -> Reach:
    readable = readable_category_ids(actor=actor)
    rows = Connection.objects.filter(org=actor.org, kind="github", category_id__in=readable).order_by("name")
    return Reach(list(rows))


def client(connection: Connection) -> httpx.Client:
    try:
        credentials = unseal(connection.sealed_credentials)
    except CredentialsUnreadable:
        raise Unavailable(
            f"The GitHub connection {connection.name!r} has credentials this server cannot read; an admin must "
            "paste its token again on the Connectors page. Carry on without GitHub."
        ) from None
    http = GitHub(credentials=credentials, options=connection.options)._client()
    http.timeout = httpx.Timeout(TIMEOUT)
    return http


def call(connection: Connection, method: str, url: str, **kwargs: Any) -> Any:
    """One request with the connection's token; GitHub's refusals become refusals a model can act on."""
    with client(connection) as http:
        try:
            answer = http.request(method, url, **kwargs)
        except httpx.HTTPError as exc:
            raise Unavailable(f"GitHub could not be reached ({exc.__class__.__name__}); try again later.") from exc
    if answer.status_code in (200, 201):
        return answer.json()
    limited = answer.status_code == 429 or answer.headers.get("x-ratelimit-remaining") == "0"
    if limited or answer.status_code >= 500:
        wait = answer.headers.get("retry-after", "")
        after = f" GitHub asks to wait {wait} s." if wait.isdigit() else ""
        raise Unavailable(f"GitHub is busy or limiting this connection (HTTP {answer.status_code}).{after}")
    if answer.status_code == 401:
        raise PermissionDenied(
            f"GitHub refused the token of the connection {connection.name!r}; an admin must replace it on the "
            "Connectors page. Carry on without GitHub."
        )
    if answer.status_code == 403:
        raise PermissionDenied(
            f"GitHub refused this with the token of the connection {connection.name!r} (403): the token lacks the "
            "permission. Tell the user; an admin can give the token that access."
        )
    if answer.status_code == 404:
        raise NotFound("GitHub has no such issue or pull request in that repository.")
    if answer.status_code == 422:
        raise InvalidArgument(f"GitHub refused the request: {_message(answer)}")
    raise Unavailable(f"GitHub answered HTTP {answer.status_code}; try again later.")


def _message(answer: httpx.Response) -> str:
    try:
        return str(answer.json().get("message", ""))[:300] or "no reason given"
    except ValueError:
        return "no reason given"


def search(actor: Actor, *, query: str, pulls: bool, repository: str | None, state: str, limit: int) -> dict[str, Any]:
    if WIDENING.search(query):
        raise InvalidArgument(
            "query may not choose repositories, owners or organisations (repo:, org:, user:); name one "
            "repository in the repository argument instead."
        )
    reach = reach_of(actor)
    if repository is not None:
        chosen = {reach.connection_for(repository).pk: [repository.strip()]}
    else:
        chosen = {c.pk: list(c.options.get("repositories", [])) for c in reach.connections}
    connections = {c.pk: c for c in reach.connections}
    allowed = {repo.lower() for repos in chosen.values() for repo in repos}
    hits: list[dict[str, Any]] = []
    total = 0
    for pk, repos in chosen.items():
        if not repos:
            continue
        qualifiers = [f"is:{'pr' if pulls else 'issue'}", *(f"repo:{repo}" for repo in repos)]
        if state != "any":
            qualifiers.append(f"is:{state}")
        found = call(
            connections[pk],
            "GET",
            "/search/issues",
            params={"q": " ".join([query, *qualifiers]), "per_page": str(limit)},
        )
        total += int(found.get("total_count", 0))
        for item in found.get("items", []):
            repo = _repository_of(item)
            if repo.lower() in allowed:  # checked again: only what the caller reaches leaves here
                hits.append(_summary(item, repo))
    hits.sort(key=lambda hit: hit["updated_at"], reverse=True)
    return {"results": hits[:limit], "total": total, "repositories": sorted({r for rs in chosen.values() for r in rs})}


def _repository_of(item: dict[str, Any]) -> str:
    url = str(item.get("repository_url", ""))
    return "/".join(url.rstrip("/").split("/")[-2:]) if "/repos/" in url else ""


def _summary(item: dict[str, Any], repo: str) -> dict[str, Any]:
    return {
        "repository": repo,
        "number": int(item.get("number", 0)),
        "title": str(item.get("title", "")),
        "state": str(item.get("state", "")),
        "author": str((item.get("user") or {}).get("login", "")),
        "url": str(item.get("html_url", "")),
        "created_at": str(item.get("created_at", "")),
        "updated_at": str(item.get("updated_at", "")),
        "labels": [str(label.get("name", "")) for label in item.get("labels", [])][:20],
        "comments": int(item.get("comments", 0)),
        "excerpt": str(item.get("body") or "")[:500],
    }


def get_issue(actor: Actor, *, repository: str, number: int) -> dict[str, Any]:
    connection = reach_of(actor).connection_for(repository)
    repo = _canonical(connection, repository)
    issue = call(connection, "GET", f"/repos/{repo}/issues/{number}")
    detail = {**_summary(issue, repo), "body": str(issue.get("body") or "")[:BODY_MAX], "kind": "issue"}
    if "pull_request" in issue:
        pull = call(connection, "GET", f"/repos/{repo}/pulls/{number}")
        files = call(connection, "GET", f"/repos/{repo}/pulls/{number}/files", params={"per_page": "100"})
        detail.update(
            kind="pull_request",
            merged=bool(pull.get("merged")),
            base=str((pull.get("base") or {}).get("ref", "")),
            head=str((pull.get("head") or {}).get("ref", "")),
            files=[str(f.get("filename", "")) for f in files][:100],
        )
    comments: list[dict[str, Any]] = []
    if issue.get("comments"):
        raw = call(connection, "GET", f"/repos/{repo}/issues/{number}/comments", params={"per_page": str(COMMENTS_MAX)})
        comments = [
            {
                "author": str((c.get("user") or {}).get("login", "")),
                "created_at": str(c.get("created_at", "")),
                "body": str(c.get("body") or "")[:4000],
                "url": str(c.get("html_url", "")),
            }
            for c in raw
        ][:COMMENTS_MAX]
    detail["comment_list"] = comments
    return detail


def comment(actor: Actor, *, tool: str, repository: str, number: int, body: str) -> dict[str, Any]:
    connection = reach_of(actor).connection_for(repository, granted=tool)
    repo = _canonical(connection, repository)
    made = call(connection, "POST", f"/repos/{repo}/issues/{number}/comments", json={"body": body})
    return {"repository": repo, "number": number, "url": str(made.get("html_url", "")), "id": int(made.get("id", 0))}


def _canonical(connection: Connection, repository: str) -> str:
    """The repository as the connection names it (GitHub's names are case-insensitive)."""
    wanted = repository.strip().lower()
    return next(repo for repo in connection.options.get("repositories", []) if repo.lower() == wanted)
