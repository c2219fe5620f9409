"""The why_code tool."""

from __future__ import annotations

from dataclasses import fields
from datetime import date
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from brain.actors import Actor
from brain.mcp.limits import Clamped
from brain.mcp.registry import ToolOutput, mcp_tool
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

    def to_text(self) -> str:
        if not self.commits and not self.conversations:
            return self._nothing()
        parts = [self._commits_text()]
        if self.conversations:
            lines = ["Related conversations (mentioning those pull requests and tickets):"]
            for c in self.conversations:
                lines.append(
                    f"- [{c.document_id}] {c.title} ({c.date}, {', '.join(c.refs) or c.source_kind}): {c.snippet}"
                )
            parts.append("\n".join(lines))
        if self.people:
            who = ", ".join(
                f"{p.name or p.email} ({p.commits} commit{'s' if p.commits != 1 else ''})" for p in self.people
            )
            parts.append(f"People: {who}")
        parts.append("This is what was recorded, not a judgement of whether the code is right.")
        return "\n\n".join(parts)

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
    people who made the changes, with how many commits each. Use it before changing, deleting or
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
