"""A GitHub stand-in on loopback for the calls the connector makes, shaped as GitHub's REST API
documents them: the repository issues listing (state, sort, direction, since, per_page, Link
pagination; pull requests appear there with a ``pull_request`` key), an issue's comments, a pull
request with its files and reviews, the default branch's commits (newest first, since) and one
commit with its files, releases and deployments (newest first) with a deployment's statuses
(newest first), bearer authentication (401 "Bad credentials"), the primary rate limit (403 with
x-ratelimit-remaining 0 and x-ratelimit-reset) and a secondary one (429 with Retry-After).
Listings named in ``forbidden`` answer 403, as GitHub does for a token without that permission.
With ``hold_from_page`` set, a request for that page of the issues listing or a later one waits
until ``release`` is set (``held`` tells it has started waiting), so a test can stop a sync between
pages when it chooses, not when timing allows."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlsplit

from connectors.tests.stand_in import QuietHandler, send_json, serving


@dataclass
class FakeGitHub:
    token: str = "ghp_valid"
    repos: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    comments: dict[tuple[str, int], list[dict[str, Any]]] = field(default_factory=dict)
    requests: list[str] = field(default_factory=list)
    # the next answers to give instead of the real one: (status, headers)
    refusals: list[tuple[int, dict[str, str]]] = field(default_factory=list)
    fail_on_page: int | None = None  # answer 500 once for this page of a listing
    base: str = ""
    private: set[str] = field(default_factory=set)
    posted: list[tuple[str, int, str]] = field(default_factory=list)  # comments made: (repo, number, body)
    searches: list[str] = field(default_factory=list)  # the q of each search
    commits: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # newest first
    pulls: dict[tuple[str, int], dict[str, Any]] = field(default_factory=dict)
    releases: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    deployments: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    statuses: dict[int, list[dict[str, Any]]] = field(default_factory=dict)  # newest first
    forbidden: set[str] = field(default_factory=set)  # "commits", "releases", "deployments"
    hold_from_page: int | None = None  # issues listing pages from this one wait for ``release``
    held: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)

    def add_issue(
        self,
        repo: str,
        number: int,
        *,
        updated: str,
        pull: bool = False,
        comments: int = 0,
        body: str = "",
        title: str = "",
    ) -> dict[str, Any]:
        issue = {
            "number": number,
            "title": title or f"Item {number}",
            "body": body or f"Body of item {number}",
            "state": "open",
            "user": {"login": "octo"},
            "labels": [{"name": "bug"}],
            "comments": comments,
            "created_at": "2026-11-01T10:00:00Z",
            "updated_at": updated,
            "closed_at": None,
            "html_url": f"https://github.example/{repo}/issues/{number}",
        }
        if pull:
            issue["pull_request"] = {"url": f"https://api.github.example/repos/{repo}/pulls/{number}"}
        self.repos.setdefault(repo, [])
        self.repos[repo] = [i for i in self.repos[repo] if i["number"] != number] + [issue]
        return issue

    def add_pull(
        self,
        repo: str,
        number: int,
        *,
        updated: str,
        files: list[str],
        body: str = "",
        merged_sha: str = "",
        reviews: Sequence[tuple[str, str]] = (),
        title: str = "",
    ) -> None:
        self.add_issue(repo, number, updated=updated, pull=True, body=body, title=title)
        self.pulls[(repo, number)] = {
            "files": [{"filename": name, "status": "modified"} for name in files],
            "reviews": [{"id": i + 1, "user": {"login": who}, "state": state, "body": "",
                         "submitted_at": "2026-11-02T12:00:00Z"} for i, (who, state) in enumerate(reviews)],
            "merged_at": "2026-11-02T13:00:00Z" if merged_sha else None,
            "merge_commit_sha": merged_sha or "0" * 40,
        }  # fmt: skip

    def add_commit(
        self,
        repo: str,
        sha: str,
        *,
        date: str,
        files: list[str],
        message: str = "",
        author: str = "Priya Shah",
        login: str = "priya",
    ) -> None:
        self.repos.setdefault(repo, [])
        who = {"name": author, "email": f"{login}@example.com", "date": date}
        commit = {
            "sha": sha,
            "commit": {"message": message or f"Change {sha[:7]}", "author": who, "committer": who},
            "author": {"login": login},
            "html_url": f"https://github.example/{repo}/commit/{sha}",
            "files": [{"filename": name, "status": "modified", "additions": 1, "deletions": 0} for name in files],
        }
        self.commits[repo] = sorted(
            [*self.commits.get(repo, []), commit], key=lambda c: c["commit"]["committer"]["date"], reverse=True
        )

    def add_release(self, repo: str, release_id: int, *, tag: str, created: str, draft: bool = False) -> None:
        self.repos.setdefault(repo, [])
        release = {"id": release_id, "tag_name": tag, "name": f"Version {tag}", "body": f"Notes for {tag}",
                   "draft": draft, "prerelease": False, "created_at": created, "published_at": created,
                   "target_commitish": "main", "author": {"login": "priya"},
                   "html_url": f"https://github.example/{repo}/releases/tag/{tag}"}  # fmt: skip
        self.releases[repo] = sorted(
            [*self.releases.get(repo, []), release], key=lambda r: r["created_at"], reverse=True
        )

    def add_deployment(
        self,
        repo: str,
        deployment_id: int,
        *,
        sha: str,
        created: str,
        environment: str = "production",
        states: Sequence[str] = ("success",),
    ) -> None:
        self.repos.setdefault(repo, [])
        deployment = {"id": deployment_id, "sha": sha, "ref": "main", "task": "deploy", "environment": environment,
                      "description": "", "creator": {"login": "deploybot"}, "created_at": created,
                      "updated_at": created}  # fmt: skip
        self.deployments[repo] = sorted(
            [d for d in self.deployments.get(repo, []) if d["id"] != deployment_id] + [deployment],
            key=lambda d: d["created_at"],
            reverse=True,
        )
        self.statuses[deployment_id] = [
            {
                "id": deployment_id * 100 + i,
                "state": state,
                "created_at": created,
                "description": "",
                "log_url": f"https://ci.example/deploys/{deployment_id}",
                "environment_url": "",
            }
            for i, state in reversed(list(enumerate(states)))
        ]

    def answer(self, handler: BaseHTTPRequestHandler) -> tuple[int, dict[str, str], Any]:
        self.requests.append(handler.path)
        if handler.headers.get("Authorization") != f"Bearer {self.token}":
            return 401, {}, {"message": "Bad credentials", "documentation_url": "https://docs.github.com/rest"}
        if self.refusals:
            status, headers = self.refusals.pop(0)
            return status, headers, {"message": "API rate limit exceeded"}
        parts = urlsplit(handler.path)
        query = {k: v[0] for k, v in parse_qs(parts.query).items()}
        bits = parts.path.strip("/").split("/")
        if len(bits) == 3 and bits[0] == "repos":
            name = f"{bits[1]}/{bits[2]}"
            if name not in self.repos:
                return 404, {}, {"message": "Not Found"}
            return 200, {}, {"full_name": name, "private": name in self.private}
        if len(bits) == 4 and bits[0] == "repos" and bits[3] == "issues":
            return self._listing(f"{bits[1]}/{bits[2]}", query)
        if len(bits) == 6 and bits[0] == "repos" and bits[3] == "issues" and bits[5] == "comments":
            if handler.command == "POST":
                return self._comment(f"{bits[1]}/{bits[2]}", int(bits[4]), handler)
            return 200, {}, self.comments.get((f"{bits[1]}/{bits[2]}", int(bits[4])), [])
        if bits == ["search", "issues"]:
            return self._search(query.get("q", ""), int(query.get("per_page", 30)))
        if len(bits) == 5 and bits[0] == "repos" and bits[3] == "issues" and bits[4].isdigit():
            issue = next((i for i in self.repos.get(f"{bits[1]}/{bits[2]}", []) if i["number"] == int(bits[4])), None)
            return (200, {}, issue) if issue else (404, {}, {"message": "Not Found"})
        if len(bits) >= 4 and bits[0] == "repos":
            return self._history(f"{bits[1]}/{bits[2]}", bits[3:], query)
        return 404, {}, {"message": "Not Found"}

    def _history(self, repo: str, rest: list[str], query: dict[str, str]) -> tuple[int, dict[str, str], Any]:
        if rest[0] in self.forbidden:
            return 403, {}, {"message": "Resource not accessible by personal access token"}
        if rest == ["commits"]:
            since = query.get("since", "")
            listed = [c for c in self.commits.get(repo, []) if c["commit"]["committer"]["date"] >= since]
            return self._paged(repo, "commits", [{k: v for k, v in c.items() if k != "files"} for c in listed], query)
        if len(rest) == 2 and rest[0] == "commits":
            found = [c for c in self.commits.get(repo, []) if c["sha"] == rest[1]]
            return (200, {}, found[0]) if found else (404, {}, {"message": "Not Found"})
        if rest == ["releases"]:
            return self._paged(repo, "releases", self.releases.get(repo, []), query)
        if rest == ["deployments"]:
            return self._paged(repo, "deployments", self.deployments.get(repo, []), query)
        if len(rest) == 3 and rest[0] == "deployments" and rest[2] == "statuses":
            return self._paged(repo, "/".join(rest), self.statuses.get(int(rest[1]), []), query)
        if rest[0] == "pulls" and any(i["number"] == int(rest[1]) and "pull_request" in i for i in self.repos[repo]):
            unmerged: dict[str, Any] = {"files": [], "reviews": [], "merged_at": None, "merge_commit_sha": "0" * 40}
            pull = self.pulls.get((repo, int(rest[1])), unmerged)
            if len(rest) == 2:
                return (
                    200,
                    {},
                    {
                        "number": int(rest[1]),
                        "merged_at": pull["merged_at"],
                        "merged": pull["merged_at"] is not None,
                        "head": {"ref": f"topic-{rest[1]}"},
                        "merge_commit_sha": pull["merge_commit_sha"],
                        "base": {"ref": "main"},
                    },
                )
            return self._paged(repo, "/".join(rest), pull[rest[2]], query)
        return 404, {}, {"message": "Not Found"}

    def _paged(self, repo: str, path: str, items: list[Any], query: dict[str, str]) -> tuple[int, dict[str, str], Any]:
        per_page, page = int(query.get("per_page", 30)), int(query.get("page", 1))
        if self.fail_on_page == page and path in ("commits", "releases", "deployments"):
            self.fail_on_page = None
            return 500, {}, {"message": "Server Error"}
        headers = {}
        if page * per_page < len(items):
            rest = {**query, "page": str(page + 1)}
            link = f"{self.base}/repos/{repo}/{path}?" + "&".join(f"{k}={v}" for k, v in rest.items())
            headers["Link"] = f'<{link}>; rel="next"'
        return 200, headers, items[(page - 1) * per_page : page * per_page]

    def _search(self, q: str, per_page: int) -> tuple[int, dict[str, str], Any]:
        """GitHub's issue search, for the qualifiers Brain sends: is:pr, is:issue, is:open,
        is:closed and repo: (several repo: qualifiers widen the search to each)."""
        self.searches.append(q)
        words, repos, flags = [], [], set()
        for token in q.split():
            if token.startswith("repo:"):
                repos.append(token[5:])
            elif token.startswith("is:"):
                flags.add(token[3:])
            else:
                words.append(token.lower())
        found = []
        for repo in repos:
            for issue in self.repos.get(repo, []):
                text = f"{issue['title']} {issue['body']}".lower()
                pull = "pull_request" in issue
                if ("pr" in flags and not pull) or ("issue" in flags and pull):
                    continue
                if ("open" in flags or "closed" in flags) and issue["state"] not in flags:
                    continue
                if all(word in text for word in words):
                    found.append({**issue, "repository_url": f"{self.base}/repos/{repo}"})
        return 200, {}, {"total_count": len(found), "incomplete_results": False, "items": found[:per_page]}

    def _comment(self, repo: str, number: int, handler: BaseHTTPRequestHandler) -> tuple[int, dict[str, str], Any]:
        length = int(handler.headers.get("Content-Length", 0))
        body = json.loads(handler.rfile.read(length) or b"{}").get("body", "")
        if not any(i["number"] == number for i in self.repos.get(repo, [])):
            return 404, {}, {"message": "Not Found"}
        if not body:
            return 422, {}, {"message": "Validation Failed"}
        self.posted.append((repo, number, body))
        made = len(self.posted)
        return 201, {}, {"id": made, "body": body, "html_url": f"https://github.example/{repo}/issues/{number}#c{made}"}

    def _listing(self, repo: str, query: dict[str, str]) -> tuple[int, dict[str, str], Any]:
        if repo not in self.repos:
            return 404, {}, {"message": "Not Found"}
        items = sorted(self.repos[repo], key=lambda i: (i["updated_at"], i["number"]))
        if since := query.get("since"):
            items = [i for i in items if i["updated_at"] >= since]
        per_page, page = int(query.get("per_page", 30)), int(query.get("page", 1))
        if self.hold_from_page is not None and page >= self.hold_from_page and not self.release.is_set():
            self.held.set()
            self.release.wait()
        if self.fail_on_page == page:
            self.fail_on_page = None
            return 500, {}, {"message": "Server Error"}
        chunk = items[(page - 1) * per_page : page * per_page]
        headers = {}
        if page * per_page < len(items):
            rest = {**query, "page": str(page + 1)}
            link = f"{self.base}/repos/{repo}/issues?" + "&".join(f"{k}={v}" for k, v in rest.items())
            headers["Link"] = f'<{link}>; rel="next"'
        return 200, headers, chunk


@contextmanager
def github_server() -> Iterator[FakeGitHub]:
    fake = FakeGitHub()

    class Handler(QuietHandler):
        def do_GET(self) -> None:  # noqa: N802 (the standard library's name)
            send_json(self, *fake.answer(self))

        do_POST = do_GET  # noqa: N815 (the standard library's name)

    with serving(Handler) as base:
        fake.base = base
        yield fake
