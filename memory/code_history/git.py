"""Read a local git repository's history with the ``git`` command and save each commit as a document.

Only the ``git`` executable is needed. Commits become documents with ``source_kind="git"`` whose
metadata lists the files they touched and the pull requests and tickets their messages mention;
``memory.code_history.why`` answers questions about a file from them.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Any

from brain.core.actors import Actor
from memory.documents.records import GIT, CommitRecord
from memory.documents.saving import add_document

SOURCE_KIND = GIT
GIT_TIMEOUT_SECONDS = 900
MAX_FILES_IN_METADATA = 2000  # a vendored import or a mass rename explains little about one file
MAX_FILES_IN_CONTENT = 300
RECORD, FIELD = "\x1e", "\x1f"
LOG_FORMAT = "%x1e%H%x1f%aN%x1f%aE%x1f%aI%x1f%B%x1f"

_GITHUB_URL = re.compile(r"github\.com/([\w.-]+/[\w.-]+)/(?:pull|issues)/(\d+)", re.IGNORECASE)
_QUALIFIED = re.compile(r"(?<![\w./-])([\w.-]+/[\w.-]+)([#!])(\d+)\b")
_HASH = re.compile(r"(?<![\w/&#])#(\d+)\b")
_BANG = re.compile(r"(?<![\w/!])!(\d+)\b")
_TICKET = re.compile(r"(?<![\w-])([A-Z][A-Z0-9]{1,9})-(\d+)\b")
# Upper-case words followed by a number that are standards or encodings, not tickets.
_NOT_TICKETS = frozenset({"UTF", "SHA", "ISO", "MD", "AES", "RSA", "HTTP", "TLS", "SSL", "UTC", "GMT", "IPV", "COVID"})


class GitHistoryError(Exception):
    """The repository cannot be read: not a git repository, git missing, or git failed."""


@dataclass(frozen=True)
class Commit:
    sha: str
    author_name: str
    author_email: str
    authored_at: datetime
    subject: str
    body: str
    files: list[str] = field(default_factory=list)
    refs: list[str] = field(default_factory=list)
    repo_name: str = ""


# --- reading ------------------------------------------------------------------------------


def read_commits(
    repo_path: str | os.PathLike[str], *, since: date | datetime | str | None = None, max_count: int | None = None
) -> list[Commit]:
    """The commits reachable from HEAD, newest first, with the files each one touched."""
    root = _repository_root(Path(repo_path))
    if _git(root, "rev-parse", "--verify", "--quiet", "HEAD", check=False).returncode != 0:
        return []  # a repository without commits has no history yet
    repo = repo_name(root)
    output = _log(root, _log_options(since, max_count))
    return [commit for record in output.split(RECORD) if (commit := _parse_record(record, repo)) is not None]


def _log_options(since: date | datetime | str | None, max_count: int | None) -> list[str]:
    options = []
    if since is not None:
        options.append(f"--since={since.isoformat() if isinstance(since, date) else since}")
    if max_count is not None:
        if max_count < 1:
            raise GitHistoryError("max_count must be at least 1.")
        options.append(f"--max-count={max_count}")
    return options


def _log(root: Path, options: list[str], *, merges: bool = True) -> str:
    # Merges list what they brought in against their first parent, so "Merge pull request #12"
    # is found by the files it merged; git before 2.31 lacks the option and lists no files.
    diff_merges = ["--diff-merges=first-parent"] if merges else []
    result = _git(
        root,
        "log",
        "-z",
        "--no-color",
        "--name-status",
        "-M",
        *diff_merges,
        f"--format={LOG_FORMAT}",
        *options,
        check=False,
    )
    if result.returncode != 0 and merges and "diff-merges" in result.stderr:
        return _log(root, options, merges=False)
    if result.returncode != 0:
        raise GitHistoryError(f"git log failed in {root}: {result.stderr.strip() or result.returncode}")
    return result.stdout


def _parse_record(record: str, repo: str) -> Commit | None:
    parts = record.split(FIELD, 4)
    if len(parts) < 5:
        return None
    sha, name, email, authored, tail = parts
    message, _, block = tail.rpartition(FIELD)
    subject, _, body = message.strip().partition("\n")
    return Commit(
        sha=sha.strip(),
        author_name=name,
        author_email=email,
        authored_at=datetime.fromisoformat(authored),
        subject=subject.strip(),
        body=body.strip(),
        files=_parse_files(block),
        refs=extract_refs(message),
        repo_name=repo,
    )


def _parse_files(block: str) -> list[str]:
    """``--name-status -z`` tokens: a status, then one path (two for renames and copies)."""
    tokens = block.lstrip("\0").lstrip("\n").split("\0")
    files: list[str] = []
    index = 0
    while index < len(tokens) and tokens[index]:
        status = tokens[index]
        width = 2 if status[:1] in ("R", "C") else 1
        files.extend(p for p in tokens[index + 1 : index + 1 + width] if p and p not in files)
        index += 1 + width
    return files


def extract_refs(message: str) -> list[str]:
    """Pull request, merge request and ticket references in a commit message, in order, once each."""
    found: list[tuple[int, str]] = []
    for match in _GITHUB_URL.finditer(message):
        found.append((match.start(), f"{match.group(1)}#{match.group(2)}"))
    for match in _QUALIFIED.finditer(message):
        found.append((match.start(), f"{match.group(1)}{match.group(2)}{match.group(3)}"))
    for match in _HASH.finditer(message):
        found.append((match.start(), f"#{match.group(1)}"))
    for match in _BANG.finditer(message):
        found.append((match.start(), f"!{match.group(1)}"))
    for match in _TICKET.finditer(message):
        if match.group(1) not in _NOT_TICKETS:
            found.append((match.start(), match.group(0)))
    return list(dict.fromkeys(ref for _, ref in sorted(found)))


# --- repository -----------------------------------------------------------------------------


def _git(root: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    executable = shutil.which("git")
    if executable is None:
        raise GitHistoryError("The git command is not installed or not on PATH; install git to read history.")
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_PAGER": "cat", "LC_ALL": "C"}
    try:
        result = subprocess.run(  # noqa: S603 (no shell; caller values only inside --name=value options)
            [executable, "-C", str(root), "-c", "log.showSignature=false", *args],
            capture_output=True,
            env=env,
            timeout=GIT_TIMEOUT_SECONDS,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise GitHistoryError(f"git {args[0]} took longer than {GIT_TIMEOUT_SECONDS} s in {root}.") from exc
    completed = subprocess.CompletedProcess(
        result.args,
        result.returncode,
        result.stdout.decode("utf-8", errors="replace"),
        result.stderr.decode("utf-8", errors="replace"),
    )
    if check and completed.returncode != 0:
        raise GitHistoryError(f"git {args[0]} failed in {root}: {completed.stderr.strip()}")
    return completed


def _repository_root(path: Path) -> Path:
    if not path.is_dir():
        raise GitHistoryError(f"{path} is not a folder; pass the folder of a git repository.")
    result = _git(path, "rev-parse", "--absolute-git-dir", check=False)
    if result.returncode != 0:
        detail = result.stderr.strip().splitlines()[-1] if result.stderr.strip() else ""
        raise GitHistoryError(f"{path} is not a git repository ({detail or 'git rev-parse failed'}).")
    top = _git(path, "rev-parse", "--show-toplevel", check=False)
    if top.returncode == 0 and top.stdout.strip():
        return Path(top.stdout.strip())
    return Path(result.stdout.strip())  # a bare repository


def repo_name(root: Path) -> str:
    """``owner/name`` from the ``origin`` remote when it is a hosted URL, else the folder name."""
    remote = _git(root, "config", "--get", "remote.origin.url", check=False).stdout.strip()
    from_remote = owner_and_name(remote)
    if from_remote:
        return from_remote
    name = root.name[:-4] if root.name.endswith(".git") and root.name != ".git" else root.name
    return name or "repository"


def owner_and_name(url: str) -> str | None:
    match = re.match(r"^(?:[a-z][a-z0-9+.-]*://[^/]+/|[\w.-]+@[\w.-]+:)(?P<path>.+?)(?:\.git)?/?$", url, re.I)
    if match is None or url.lower().startswith("file://"):
        return None
    segments = [s for s in match.group("path").split("/") if s]
    return "/".join(segments[-2:]) if len(segments) >= 2 else None


# --- saving ---------------------------------------------------------------------------------


def commit_document(commit: Commit) -> dict[str, Any]:
    """The arguments of ``add_document`` for one commit."""
    listed = commit.files[:MAX_FILES_IN_CONTENT]
    more = len(commit.files) - len(listed)
    files_text = "\n".join(listed) + (f"\n… and {more} more" if more > 0 else "")
    message = "\n\n".join(part for part in (commit.subject, commit.body) if part) or f"Commit {commit.sha[:12]}"
    return {
        "title": (commit.subject or f"Commit {commit.sha[:12]}")[:240],
        "content": f"{message}\n\nFiles:\n{files_text}".rstrip(),
        "source_kind": SOURCE_KIND,
        "external_id": f"{commit.repo_name}:{commit.sha}"[:240],
        "occurred_at": commit.authored_at,
        "metadata": CommitRecord(
            sha=commit.sha,
            repository=commit.repo_name,
            author=commit.author_name,
            email=commit.author_email,
            files=commit.files[:MAX_FILES_IN_METADATA],
            refs=commit.refs,
        ).model_dump(mode="json", exclude_unset=True),
    }


def store_commits(*, actor: Actor, commits: Iterable[Commit]) -> tuple[dict[str, int], list[int]]:
    """Save commits as documents; returns the counts and the ids of the documents created."""
    counts = {"commits": 0, "new": 0, "unchanged": 0}
    created: list[int] = []
    for commit in commits:
        counts["commits"] += 1
        saved = add_document(actor=actor, **commit_document(commit))
        if saved.created:
            counts["new"] += 1
            created.append(saved.document.pk)
        else:
            counts["unchanged"] += 1
    return counts, created


def ingest_git(
    *,
    actor: Actor,
    repo_path: str | os.PathLike[str],
    since: date | datetime | str | None = None,
    max_count: int | None = None,
) -> dict[str, int]:
    """Save a repository's commits as documents; known commits are left as they are."""
    counts, _ = store_commits(actor=actor, commits=read_commits(repo_path, since=since, max_count=max_count))
    return counts
