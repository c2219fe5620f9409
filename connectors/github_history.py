"""What one page of each GitHub listing becomes: issues and pull requests (a pull request with the
files it touched, its merge commit, its reviews and the issues it closes), commits of the default
branch with the files each touched, releases, and deployments with their latest status.

The metadata of each item is a record of ``memory.documents.records`` (its ``kind`` names which),
what ``why_code`` joins on: ``files`` (paths in the repository), ``sha`` and ``merge_commit_sha``,
``closes`` (``owner/name#N``), ``repository``. A path list is cut to fit a document's metadata; the
content keeps the full list where it is longer.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from django.utils.dateparse import parse_datetime

from connectors.kinds import Item
from connectors.listing import Read
from memory.code_history.git import extract_refs

FILES_CHARS = 8000  # of the 20,000 a document's metadata may hold
MAX_FILES_PAGES = 3  # a pull request's files, 100 a page
MAX_REVIEWS = 30
UNFINISHED = ("pending", "queued", "in_progress")
HOLD_AT_MOST = timedelta(days=7)  # a deployment unfinished for longer is taken as abandoned
_CLOSING = re.compile(
    r"\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)\s*:?\s+"
    r"(?:https?://[^\s/]+/([\w.-]+/[\w.-]+)/issues/(\d+)|([\w.-]+/[\w.-]+)?#(\d+))\b",
    re.IGNORECASE,
)

Get = Callable[[str, dict[str, str] | None], Any]


def _when(value: str | None) -> datetime | None:
    return parse_datetime(value) if value else None


def closing_refs(text: str, repo: str) -> list[str]:
    """The issues a pull request's description says it closes ("Fixes #12", "closes acme/web#3",
    "resolves https://github.com/acme/api/issues/4"), as ``owner/name#N``, once each."""
    found = []
    for match in _CLOSING.finditer(text or ""):
        url_repo, url_number, other, number = match.groups()
        found.append(f"{url_repo}#{url_number}" if url_number else f"{other or repo}#{number}")
    return list(dict.fromkeys(found))


def capped(paths: list[str]) -> tuple[list[str], bool]:
    """``paths`` cut to fit the metadata budget, and whether any were left off."""
    kept: list[str] = []
    used = 0
    for path in paths:
        used += len(path) + 4
        if used > FILES_CHARS:
            return kept, True
        kept.append(path)
    return kept, False


def _files_text(paths: list[str], *, markdown: bool = False) -> str:
    shown = paths[:300]
    more = len(paths) - len(shown)
    listed = "\n".join(shown)
    if markdown:  # paths are code: "__init__.py" is no emphasis
        listed = f"```\n{listed}\n```"
    return "Files:\n" + listed + (f"\n… and {more} more" if more > 0 else "")


@dataclass
class History:
    get: Get  # the body of a GitHub answer, errors already turned into the connector's own
    repo: str
    about: dict[str, Any]  # the repository's own record

    # --- issues and pull requests ------------------------------------------------------------

    def issues(self, page: list[dict[str, Any]], since: str | None) -> Read:
        return Read(items=[self._issue(issue) for issue in page], stamps=[i["updated_at"] for i in page])

    def _issue(self, issue: dict[str, Any]) -> Item:
        repo, number = self.repo, issue["number"]
        pull = "pull_request" in issue
        parts = [issue.get("body") or ""]
        if issue.get("comments"):
            for comment in self.get(f"/repos/{repo}/issues/{number}/comments", {"per_page": "100"}):
                who = (comment.get("user") or {}).get("login", "someone")
                parts.append(f"{who} on {comment.get('created_at', '')[:10]}:\n{comment.get('body') or ''}")
        metadata: dict[str, Any] = {
            "repository": repo,
            "number": number,
            "kind": "pull_request" if pull else "issue",
            "state": issue.get("state", ""),
            "author": (issue.get("user") or {}).get("login", ""),
            "labels": [label.get("name", "") for label in issue.get("labels", [])][:20],
            "closed_at": issue.get("closed_at") or "",
        }
        if pull:
            detail, more = self._pull_detail(number, issue.get("body") or "")
            metadata.update(detail)
            parts.extend(more)
        kind = "Pull request" if pull else "Issue"
        return Item(
            source_id=f"{repo}#{number}",
            version=issue["updated_at"],
            title=f"{kind} {repo}#{number}: {issue.get('title', '')}"[:500],
            content="\n\n".join(part for part in parts if part.strip()) or issue.get("title", ""),
            content_type="text/markdown",
            url=issue.get("html_url", ""),
            occurred_at=_when(issue.get("created_at")),
            metadata=metadata,
        )

    def _pull_detail(self, number: int, body: str) -> tuple[dict[str, Any], list[str]]:
        """A pull request's merge, files, reviews and closed issues: metadata, and paragraphs."""
        base = f"/repos/{self.repo}/pulls/{number}"
        pull = self.get(base, None)
        files: list[str] = []
        for page in range(1, MAX_FILES_PAGES + 1):
            batch = self.get(f"{base}/files", {"per_page": "100", "page": str(page)})
            files.extend(entry.get("filename", "") for entry in batch if entry.get("filename"))
            if len(batch) < 100:
                break
        reviews = [
            {
                "user": (r.get("user") or {}).get("login", ""),
                "state": r.get("state", ""),
                "submitted_at": r.get("submitted_at") or "",
            }
            for r in self.get(f"{base}/reviews", {"per_page": "100"})
        ][:MAX_REVIEWS]
        kept, cut = capped(files)
        merged_as = (pull.get("merge_commit_sha") or "") if pull.get("merged_at") else ""
        metadata = {
            "files": kept,
            "files_cut": cut,
            "merged_at": pull.get("merged_at") or "",
            "merge_commit_sha": merged_as,
            "base": (pull.get("base") or {}).get("ref", ""),
            "reviews": reviews,
            "closes": closing_refs(body, self.repo),
        }
        parts = []
        if reviews:
            parts.append(
                "Reviews:\n"
                + "\n".join(
                    f"{r['user']} {r['state'].lower().replace('_', ' ')} on {r['submitted_at'][:10]}" for r in reviews
                )
            )
        if merged_as:
            parts.append(f"Merged as {merged_as} on {metadata['merged_at'][:10]}.")
        if metadata["closes"]:
            parts.append("Closes " + ", ".join(metadata["closes"]) + ".")
        if files:
            parts.append(_files_text(files, markdown=True))
        return metadata, parts

    # --- commits -----------------------------------------------------------------------------

    def commits(self, page: list[dict[str, Any]], since: str | None) -> Read:
        items, stamps = [], []
        for entry in page:
            detail = self.get(f"/repos/{self.repo}/commits/{entry['sha']}", None)
            items.append(self._commit(detail))
            stamps.append(((detail.get("commit") or {}).get("committer") or {}).get("date") or "")
        return Read(items=items, stamps=[s for s in stamps if s])

    def _commit(self, detail: dict[str, Any]) -> Item:
        sha = detail["sha"]
        commit = detail.get("commit") or {}
        author = commit.get("author") or {}
        message = commit.get("message") or ""
        subject = message.split("\n", 1)[0]
        paths = [entry.get("filename", "") for entry in detail.get("files") or [] if entry.get("filename")]
        kept, cut = capped(paths)
        login = (detail.get("author") or {}).get("login", "")
        return Item(
            source_id=f"{self.repo}@{sha}",
            version=sha,  # a commit never changes
            title=f"Commit {self.repo}@{sha[:7]}: {subject}"[:500],
            content=message.strip() + ("\n\n" + _files_text(paths) if paths else ""),
            url=detail.get("html_url", ""),
            occurred_at=_when(author.get("date")),
            metadata={
                "kind": "commit",
                "repository": self.repo,
                "branch": self.about.get("default_branch", ""),
                "sha": sha,
                "author": author.get("name") or login,
                "email": author.get("email", ""),
                "login": login,
                "committed_at": (commit.get("committer") or {}).get("date") or "",
                "refs": extract_refs(message),
                "files": kept,
                "files_cut": cut,
            },
        )

    # --- releases ----------------------------------------------------------------------------

    def releases(self, page: list[dict[str, Any]], since: str | None) -> Read:
        """Newest first; drafts are not releases yet."""
        items: list[Item] = []
        stamps: list[str] = []
        for release in page:
            created = release.get("created_at") or ""
            if since and created < since:
                return Read(items=items, stamps=stamps, done=True)
            stamps.append(created)
            if not release.get("draft"):
                items.append(self._release(release))
        return Read(items=items, stamps=stamps)

    def _release(self, release: dict[str, Any]) -> Item:
        tag, name = release.get("tag_name", ""), release.get("name") or ""
        published = release.get("published_at") or release.get("created_at") or ""
        notes = release.get("body") or ""
        version = hashlib.sha256(f"{tag}\n{name}\n{published}\n{release.get('prerelease')}\n{notes}".encode())
        return Item(
            source_id=f"{self.repo}@release:{release['id']}",
            version=version.hexdigest()[:24],
            title=f"Release {self.repo} {tag}" + (f": {name}" if name and name != tag else ""),
            content=notes or f"Release {tag} of {self.repo}.",
            content_type="text/markdown",
            url=release.get("html_url", ""),
            occurred_at=_when(published),
            metadata={
                "kind": "release",
                "repository": self.repo,
                "tag": tag,
                "name": name,
                "target": release.get("target_commitish", ""),
                "author": (release.get("author") or {}).get("login", ""),
                "prerelease": bool(release.get("prerelease")),
                "published_at": published,
            },
        )

    # --- deployments -------------------------------------------------------------------------

    def deployments(self, page: list[dict[str, Any]], since: str | None) -> Read:
        """Newest first, each with its latest status. One still under way is read again next time
        (``hold``), until it finishes or a week has passed."""
        items: list[Item] = []
        stamps: list[str] = []
        hold: list[str] = []
        for deployment in page:
            created = deployment.get("created_at") or ""
            if since and created < since:
                return Read(items=items, stamps=stamps, hold=hold, done=True)
            statuses = self.get(f"/repos/{self.repo}/deployments/{deployment['id']}/statuses", {"per_page": "1"})
            latest = statuses[0] if statuses else {}
            item = self._deployment(deployment, latest)
            items.append(item)
            stamps.append(created)
            started = _when(created)
            if item.metadata["state"] in UNFINISHED and started and datetime.now(UTC) - started < HOLD_AT_MOST:
                hold.append(created)
        return Read(items=items, stamps=stamps, hold=hold)

    def _deployment(self, deployment: dict[str, Any], latest: dict[str, Any]) -> Item:
        sha, environment = deployment.get("sha", ""), deployment.get("environment", "")
        state = latest.get("state") or "pending"
        link = latest.get("log_url") or latest.get("target_url") or latest.get("environment_url") or ""
        if not link and self.about.get("html_url"):
            link = f"{self.about['html_url']}/deployments"
        creator = (deployment.get("creator") or {}).get("login", "")
        when = latest.get("created_at") or deployment.get("created_at") or ""
        lines = [
            f"Deployment of {self.repo} {deployment.get('ref', '')} ({sha}) to {environment}: {state}.",
            f"Started by {creator or 'someone'} on {(deployment.get('created_at') or '')[:16].replace('T', ' ')}; "
            f"{state} since {when[:16].replace('T', ' ')}.",
        ]
        for text in (deployment.get("description"), latest.get("description")):
            if text:
                lines.append(text)
        return Item(
            source_id=f"{self.repo}@deployment:{deployment['id']}",
            version=f"{latest.get('id', '')}:{state}",
            title=f"Deployment {self.repo}@{sha[:7]} to {environment}: {state}"[:500],
            content="\n".join(lines),
            url=link,
            occurred_at=_when(deployment.get("created_at")),
            metadata={
                "kind": "deployment",
                "repository": self.repo,
                "sha": sha,
                "ref": deployment.get("ref", ""),
                "environment": environment,
                "state": state,
                "created_at": deployment.get("created_at") or "",
                "state_at": when,
                "creator": creator,
            },
        )
