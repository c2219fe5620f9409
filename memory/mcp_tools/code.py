"""The why_code tool."""

from __future__ import annotations

from dataclasses import fields
from datetime import date
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from brain.core.actors import Actor
from brain.mcp.limits import Clamped
from brain.mcp.registry import ToolOutput, mcp_tool
from memory.code_history.across import WhyDeployment, WhyError, WhyEvent, WhyIssue, WhyPullRequest
from memory.code_history.why import WhyCommit, WhyConversation, WhyPerson, _bare, why_code


class WhyArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    path: str | None = Field(
        None,
        max_length=1000,
        description="A file path or a stack-trace line, e.g. src/checkout/total.ts:42 or /app/src/checkout/total.ts.",
    )
    repo: str | None = Field(None, max_length=200, description="A repository (acme/shop or its folder name).")
    limit: Annotated[int, Clamped(1, 50)] = Field(10, description="Commits and conversations, 1 to 50 (default 10).")
    as_of: date | None = Field(None, description="Answer from what was recorded by the end of this day (YYYY-MM-DD).")


class WhyOut(ToolOutput):
    path: str | None
    repo: str | None
    matched_paths: list[str]
    total_commits: int
    commits: list[WhyCommit]
    conversations: list[WhyConversation]
    people: list[WhyPerson]
    as_of: date | None = None
    pull_requests: list[WhyPullRequest] = []
    issues: list[WhyIssue] = []
    errors: list[WhyError] = []
    deployments: list[WhyDeployment] = []
    timeline: list[WhyEvent] = []

    def to_text(self) -> str:
        if not (self.commits or self.conversations or self.pull_requests or self.errors):
            return self._nothing()
        parts = [self._commits_text(), *self._synced_text()]
        if self.conversations:
            lines = ["Related conversations (mentioning those pull requests and tickets):"]
            for c in self.conversations:
                lines.append(
                    f"- [{c.document_id}] {c.title} ({c.date}, {', '.join(c.refs) or c.source_kind}): {c.snippet}"
                )
            parts.append("\n".join(lines))
        if self.people:
            parts.append("People: " + ", ".join(_person(p) for p in self.people))
        if len(self.timeline) > 1 and (self.pull_requests or self.errors or self.deployments):
            lines = ["In time, oldest first:"]
            lines.extend(f"- {e.at:%Y-%m-%d %H:%M} {e.kind}: {e.summary}" for e in self.timeline[-30:])
            parts.append("\n".join(lines))
        parts.append("This is what was recorded, not a judgement of whether the code is right.")
        return "\n\n".join(parts)

    def _synced_text(self) -> list[str]:
        parts = []
        if self.pull_requests:
            lines = ["Pull requests:"]
            for p in self.pull_requests:
                merged = f", merged {p.merged:%Y-%m-%d} as {p.merge_commit_sha[:7]}" if p.merged else f", {p.state}"
                reviewed = f"; reviewed by {', '.join(p.reviewers)}" if p.reviewers else ""
                closes = f"; closes {', '.join(p.closes)}" if p.closes else ""
                lines.append(
                    f"- [{p.document_id}] {p.ref} {p.title} (by {p.author}{merged}{reviewed}{closes}) {p.url or ''}"
                )
            parts.append("\n".join(lines))
        if self.issues:
            lines = ["Issues they closed:"]
            lines.extend(
                f"- [{i.document_id}] {i.ref} {i.title} ({i.state}, closed by {', '.join(i.closed_by)}) {i.url or ''}"
                for i in self.issues
            )
            parts.append("\n".join(lines))
        if self.errors:
            lines = ["Errors whose stack traces name this file:"]
            for e in self.errors:
                release = f" in release {e.first_release}" if e.first_release else ""
                seen = f"first seen {e.first_seen:%Y-%m-%d}{release}" if e.first_seen else "first seen unknown"
                last = f", last {e.last_seen:%Y-%m-%d}" if e.last_seen else ""
                lines.append(
                    f"- [{e.document_id}] {e.short_id} {e.title} ({e.status}, {e.count} events, {seen}{last}; "
                    f"at {'; '.join(e.frames[:3])}) {e.url or ''}"
                )
            parts.append("\n".join(lines))
        if self.deployments:
            lines = ["Deployments that shipped these commits:"]
            lines.extend(
                f"- [{d.document_id}] {d.at:%Y-%m-%d %H:%M} {d.repo}@{d.sha[:7]} to {d.environment} ({d.state}; "
                f"ships {', '.join(s[:7] for s in d.shipped)}) {d.url or ''}"
                for d in self.deployments
                if d.at
            )
            parts.append("\n".join(lines))
        return [part.rstrip() for part in parts]

    def _subject_line(self) -> str:
        if self.path is None:
            return f"in {self.repo}"
        where = f"touch {self.path}"
        if len(self.matched_paths) > 1:
            where += f" (files ending with it: {', '.join(self.matched_paths)}; a longer path narrows this)"
        elif self.matched_paths and self.matched_paths != [self.path]:
            where += f" (recorded as {self.matched_paths[0]})"
        return where + (f" in {self.repo}" if self.repo else "")

    def _commits_text(self) -> str:
        shown = len(self.commits)
        count = f"{shown} of {self.total_commits}" if self.total_commits > shown else str(shown)
        lines = [
            f"{count} recorded commit{'s' if self.total_commits != 1 else ''} {self._subject_line()}, newest first:"
        ]
        several_repos = len({c.repo for c in self.commits}) > 1
        for c in self.commits:
            refs = f" ({', '.join(c.refs)})" if c.refs else ""
            repo = f"[{c.repo}] " if several_repos else ""
            lines.append(f"- {c.date or 'undated'} {repo}{c.sha[:7]} {c.author}: {_bare(c.subject, c.refs)}{refs}")
        return "\n".join(lines)

    def _nothing(self) -> str:
        when = f" as of {self.as_of}" if self.as_of else ""
        if self.path is None:
            return (
                f"No recorded commits in {self.repo}{when}; that is an answer too: "
                "its history has not been imported into Brain, or the name is spelled differently."
            )
        return (
            f"No recorded commits, pull requests or conversations touch {self.path}{when}; that is an answer too: "
            "Brain has no history for this file. It may predate the imported history, come from a repository "
            "that was not imported, or be generated. Say so rather than guessing a reason."
        )


@mcp_tool("why_code", title="Explain Why Code Is So", args=WhyArgs, output=WhyOut, idempotent=True)
def why_code_tool(actor: Actor, args: WhyArgs) -> WhyOut:
    """Find out why a file is the way it is from the company's recorded history: the commits that
    touched it (newest first, with date, author, subject and the pull requests and tickets they
    cite), the conversations, meeting notes and tickets that mention those references, and the
    people who made the changes, with how many commits each. Where GitHub or Sentry are synced it
    also gives the pull requests that touched the file (reviewers, merge, the issues they closed),
    the Sentry errors whose stack frames name it (with the release they first appeared in), the
    deployments that shipped its commits, and a timeline of all of it, oldest first, each with its
    link. Use it before changing, deleting or
    "fixing" code that looks odd, when a stack trace points at a file, or to find whom to ask.
    path takes a repository path or a raw stack-trace line (file:line:column, Python's File "...",
    line N, JavaScript's at fn (file:line:col), Windows paths); it is matched by path suffix, so a
    server's absolute path finds the repository file. repo alone lists a repository's latest
    commits, and with path narrows to that repository. limit is 1 to 50 (default 10) for commits
    and for conversations. as_of answers from what was recorded by the end of that day. A short or
    empty answer is an answer: say the file has no recorded history instead of inventing a reason.
    This is what was recorded, not a judgement of whether the code is right."""
    result = why_code(actor=actor, path=args.path, repo=args.repo, limit=args.limit, as_of=args.as_of)
    return WhyOut(**{f.name: getattr(result, f.name) for f in fields(result)})


def _person(p: WhyPerson) -> str:
    done = [(p.commits, "commit"), (p.pull_requests, "pull request"), (p.reviews, "review")]
    counts = ", ".join(f"{n} {what}{'s' if n != 1 else ''}" for n, what in done if n)
    return f"{p.name or p.email or p.login} ({counts})"
