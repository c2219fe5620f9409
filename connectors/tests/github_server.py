"""A GitHub stand-in on loopback for the calls the connector makes, shaped as GitHub's REST API
documents them: the repository issues listing (state, sort, direction, since, per_page, Link
pagination; pull requests appear there with a ``pull_request`` key), an issue's comments, bearer
authentication (401 "Bad credentials"), the primary rate limit (403 with x-ratelimit-remaining 0
and x-ratelimit-reset) and a secondary one (429 with Retry-After)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit


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
    pull_files: dict[tuple[str, int], list[str]] = field(default_factory=dict)
    posted: list[tuple[str, int, str]] = field(default_factory=list)  # comments made: (repo, number, body)
    searches: list[str] = field(default_factory=list)  # the q of each search

    def add_issue(self, repo: str, number: int, *, updated: str, pull: bool = False, comments: int = 0,
                  body: str = "", title: str = "") -> dict[str, Any]:  # fmt: skip
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
        if len(bits) >= 5 and bits[0] == "repos" and bits[3] in ("issues", "pulls") and bits[4].isdigit():
            return self._one(f"{bits[1]}/{bits[2]}", int(bits[4]), bits[3], bits[5:])
        return 404, {}, {"message": "Not Found"}

    def _one(self, repo: str, number: int, kind: str, rest: list[str]) -> tuple[int, dict[str, str], Any]:
        issue = next((i for i in self.repos.get(repo, []) if i["number"] == number), None)
        if issue is None or (kind == "pulls" and "pull_request" not in issue):
            return 404, {}, {"message": "Not Found"}
        if kind == "pulls" and rest == ["files"]:
            return 200, {}, [{"filename": name} for name in self.pull_files.get((repo, number), [])]
        if kind == "pulls":
            return 200, {}, {**issue, "merged": issue["state"] == "closed", "base": {"ref": "main"},
                             "head": {"ref": f"topic-{number}"}}  # fmt: skip
        return (200, {}, issue) if not rest else (404, {}, {"message": "Not Found"})

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

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (the standard library's name)
            status, headers, body = fake.answer(self)
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            for key, value in headers.items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_POST = do_GET  # noqa: N815 (the standard library's name)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    fake.base = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield fake
    finally:
        server.shutdown()
        server.server_close()
