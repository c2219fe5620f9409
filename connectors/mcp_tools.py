"""The connectors' own tools, named ``<kind>_<tool>``: offered only where the organisation has a
connection of that kind, and for ACTION tools only where an admin granted them
(``connectors.grants``). They ask the source live, with what the caller reads in Brain deciding
what they may reach (``connectors.github_live``)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from brain.core.actors import Actor
from brain.mcp.limits import Clamped
from brain.mcp.registry import ToolOutput, mcp_tool
from connectors import github_live, slack_live

REPOSITORY = Field(
    None, max_length=200, description="One connected repository as owner/name; every one you can read when left out."
)


class GitHubSearchArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    query: str = Field(min_length=1, max_length=256, description="Words to find in titles, bodies and comments.")
    repository: str | None = REPOSITORY
    state: Literal["open", "closed", "any"] = Field("any", description="Only open, only closed, or any (any).")
    limit: Annotated[int, Clamped(1, 30)] = Field(10, description="How many to return, 1 to 30 (10).")


class GitHubHit(BaseModel):
    repository: str
    number: int
    title: str
    state: str
    author: str
    url: str
    created_at: str
    updated_at: str
    labels: list[str]
    comments: int
    excerpt: str = Field(description="The start of the body.")


class GitHubSearchOut(ToolOutput):
    results: list[GitHubHit]
    total: int = Field(description="How many GitHub found in all, before the limit.")
    repositories: list[str] = Field(description="The repositories searched: the connected ones you can read.")

    def to_text(self) -> str:
        where = ", ".join(self.repositories) or "no repository you can read"
        if not self.results:
            return f"Nothing found on GitHub in {where}."
        lines = [f"{len(self.results)} of {self.total} found on GitHub in {where}, newest activity first:"]
        for hit in self.results:
            labels = f" [{', '.join(hit.labels)}]" if hit.labels else ""
            lines.append(
                f"- {hit.repository}#{hit.number} {hit.title} ({hit.state}, by {hit.author}, updated "
                f"{hit.updated_at[:10]}, {hit.comments} comments){labels} {hit.url}"
            )
            if hit.excerpt.strip():
                lines.append(f"  {' '.join(hit.excerpt.split())[:300]}")
        return "\n".join(lines)


def _search(actor: Actor, args: GitHubSearchArgs, *, pulls: bool) -> GitHubSearchOut:
    found = github_live.search(
        actor, query=args.query, pulls=pulls, repository=args.repository, state=args.state, limit=args.limit
    )
    return GitHubSearchOut.model_validate(found)


@mcp_tool(
    "github_search_pull_requests",
    title="Search GitHub pull requests",
    args=GitHubSearchArgs,
    output=GitHubSearchOut,
    connector="github",
    open_world=True,
)
def github_search_pull_requests(actor: Actor, args: GitHubSearchArgs) -> GitHubSearchOut:
    """Search pull requests in the organisation's connected GitHub repositories, live, newest activity
    first. Only repositories whose connection files into a category you can read are searched. Use it
    for work in progress or review threads that may not be in Brain yet; fetch one with
    github_get_issue."""
    return _search(actor, args, pulls=True)


@mcp_tool(
    "github_search_issues",
    title="Search GitHub issues",
    args=GitHubSearchArgs,
    output=GitHubSearchOut,
    connector="github",
    open_world=True,
)
def github_search_issues(actor: Actor, args: GitHubSearchArgs) -> GitHubSearchOut:
    """Search issues (the tracker) in the organisation's connected GitHub repositories, live, newest
    activity first. Only repositories whose connection files into a category you can read are
    searched. Fetch one, with its comments, with github_get_issue."""
    return _search(actor, args, pulls=False)


class GitHubIssueArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    repository: str = Field(min_length=3, max_length=200, description="The connected repository, as owner/name.")
    number: int = Field(ge=1, le=10_000_000, description="The issue or pull request number.")


class GitHubComment(BaseModel):
    author: str
    created_at: str
    body: str
    url: str


class GitHubIssueOut(ToolOutput):
    repository: str
    number: int
    kind: Literal["issue", "pull_request"]
    title: str
    state: str
    author: str
    url: str
    created_at: str
    updated_at: str
    labels: list[str]
    comments: int
    excerpt: str
    body: str
    comment_list: list[GitHubComment] = Field(description="The first 50 comments, oldest first.")
    merged: bool | None = None
    base: str | None = None
    head: str | None = None
    files: list[str] | None = Field(None, description="For a pull request: the files it changes (first 100).")

    def to_text(self) -> str:
        what = "Pull request" if self.kind == "pull_request" else "Issue"
        state = f"{self.state}, merged" if self.merged else self.state
        lines = [
            f"{what} {self.repository}#{self.number}: {self.title} ({state}) {self.url}",
            f"Opened by {self.author} on {self.created_at[:10]}; updated {self.updated_at[:10]}.",
        ]
        if self.labels:
            lines.append(f"Labels: {', '.join(self.labels)}")
        if self.kind == "pull_request":
            lines.append(f"From {self.head} into {self.base}; files: {', '.join(self.files or []) or 'none'}")
        lines += ["", self.body.strip() or "(no description)"]
        for comment in self.comment_list:
            lines += ["", f"{comment.author} on {comment.created_at[:10]}:", comment.body.strip()]
        return "\n".join(lines)


@mcp_tool(
    "github_get_issue",
    title="Read a GitHub issue or pull request",
    args=GitHubIssueArgs,
    output=GitHubIssueOut,
    connector="github",
    open_world=True,
)
def github_get_issue(actor: Actor, args: GitHubIssueArgs) -> GitHubIssueOut:
    """Read one issue or pull request of a connected GitHub repository, live: its body, its first 50
    comments, and for a pull request whether it merged and the files it changes."""
    found = github_live.get_issue(actor, repository=args.repository, number=args.number)
    return GitHubIssueOut.model_validate(found)


class GitHubCommentArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    repository: str = Field(min_length=3, max_length=200, description="The connected repository, as owner/name.")
    number: int = Field(ge=1, le=10_000_000, description="The issue or pull request number.")
    body: str = Field(min_length=1, max_length=10_000, description="The comment, in Markdown, exactly as approved.")


class GitHubCommentOut(ToolOutput):
    repository: str
    number: int
    url: str = Field(description="The new comment on GitHub.")
    id: int

    def to_text(self) -> str:
        return f"Commented on {self.repository}#{self.number}: {self.url}"


@mcp_tool(
    "github_comment",
    title="Comment on GitHub",
    args=GitHubCommentArgs,
    output=GitHubCommentOut,
    scope="write",
    connector="github",
    open_world=True,
)
def github_comment(actor: Actor, args: GitHubCommentArgs) -> GitHubCommentOut:
    """ACTION: posts a comment on an issue or pull request of a connected GitHub repository, where
    everyone who can see it there will read it. Call it only when the user asked for exactly this
    comment on exactly this issue and approved its words. The comment is posted with the
    connection's GitHub account and ends with a line naming the person who sent it."""
    sender = actor.user.get_full_name() or actor.user.get_username()
    body = f"{args.body}\n\n<sub>Sent through Brain by {sender}.</sub>"
    made = github_live.comment(actor, tool="github_comment", repository=args.repository, number=args.number, body=body)
    return GitHubCommentOut.model_validate(made)


class NoArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SlackChannel(BaseModel):
    name: str
    id: str
    private: bool
    connection: str


class SlackChannelsOut(ToolOutput):
    channels: list[SlackChannel]

    def to_text(self) -> str:
        if not self.channels:
            return "No Slack channel of a connection here is one you can read."
        lines = ["Slack channels you can reach:"]
        lines += [
            f"- #{c.name} ({c.id}{', private' if c.private else ''}; connection {c.connection})" for c in self.channels
        ]
        return "\n".join(lines)


@mcp_tool(
    "slack_list_channels",
    title="List Slack channels",
    args=NoArgs,
    output=SlackChannelsOut,
    connector="slack",
    open_world=True,
)
def slack_list_channels(actor: Actor, args: NoArgs) -> SlackChannelsOut:
    """List the Slack channels of the organisation's connections that you can reach: public channels
    of connections whose category you read, and private channels you are a member of. What was said
    in them is in Brain's own search."""
    reached = slack_live.reach_of(actor)
    return SlackChannelsOut(
        channels=[
            SlackChannel(name=r.channel.name, id=r.channel.id, private=r.channel.private, connection=r.connection.name)
            for r in reached
        ]
    )


class SlackReadArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    channel: str = Field(min_length=1, max_length=100, description="The channel, by name (#ops) or id (C0123ABCD).")
    thread_ts: str = Field(
        "", pattern=r"^(\d{1,12}\.\d{1,8})?$", description="A thread's first message's ts, to read that thread."
    )
    limit: Annotated[int, Clamped(1, 100)] = Field(30, description="How many messages, 1 to 100 (30).")


class SlackMessage(BaseModel):
    who: str
    at: str = Field(description="When it was said (ISO 8601, UTC).")
    text: str
    ts: str = Field(description="Its id in the channel; a thread's first message's ts reads that thread.")
    replies: int = Field(description="How many replies it has in its thread.")


class SlackReadOut(ToolOutput):
    channel: str
    thread_ts: str
    messages: list[SlackMessage]

    def to_text(self) -> str:
        where = f"the thread {self.thread_ts} of #{self.channel}" if self.thread_ts else f"#{self.channel}"
        if not self.messages:
            return f"Nothing said in {where}."
        lines = [f"{len(self.messages)} messages in {where}, oldest first:"]
        for m in self.messages:
            thread = f" [{m.replies} replies: thread_ts {m.ts}]" if m.replies else ""
            lines.append(f"- {m.who} ({m.at[:16].replace('T', ' ')}): {m.text}{thread}")
        return "\n".join(lines)


@mcp_tool(
    "slack_read_channel",
    title="Read a Slack channel",
    args=SlackReadArgs,
    output=SlackReadOut,
    connector="slack",
    open_world=True,
)
def slack_read_channel(actor: Actor, args: SlackReadArgs) -> SlackReadOut:
    """Read the latest messages of a Slack channel you can reach, live, or one thread of it with
    thread_ts. For what was said further back, Brain's own search covers the synced channels."""
    reached, said = slack_live.read(actor, channel=args.channel, limit=args.limit, thread_ts=args.thread_ts)
    return SlackReadOut(
        channel=reached.channel.name, thread_ts=args.thread_ts, messages=[SlackMessage.model_validate(m) for m in said]
    )


class SlackPostArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    channel: str = Field(min_length=1, max_length=100, description="The channel, by name (#ops) or id (C0123ABCD).")
    text: str = Field(min_length=1, max_length=4000, description="The message, exactly as the user approved it.")
    thread_ts: str = Field(
        "", pattern=r"^(\d{1,12}\.\d{1,8})?$", description="To reply in a thread: its first message's ts; else empty."
    )


class SlackPostOut(ToolOutput):
    channel: str
    channel_id: str
    ts: str = Field(description="The new message's ts (its id in the channel).")

    def to_text(self) -> str:
        return f"Posted in #{self.channel} (message {self.ts})."


@mcp_tool(
    "slack_post_message",
    title="Post in Slack",
    args=SlackPostArgs,
    output=SlackPostOut,
    scope="write",
    connector="slack",
    open_world=True,
)
def slack_post_message(actor: Actor, args: SlackPostArgs) -> SlackPostOut:
    """ACTION: posts a message in a Slack channel (or a thread of it) that you can reach, where
    everyone in the channel will read it. Call it only when the user asked for exactly this message
    in exactly this channel and approved its words. It is posted as the connection's Slack app and
    ends with a line naming the person who sent it."""
    sender = actor.user.get_full_name() or actor.user.get_username()
    text = f"{args.text}\n_Sent through Brain by {sender}._"
    reached, ts = slack_live.post(
        actor, tool="slack_post_message", channel=args.channel, text=text, thread_ts=args.thread_ts
    )
    return SlackPostOut(channel=reached.channel.name, channel_id=reached.channel.id, ts=ts)
