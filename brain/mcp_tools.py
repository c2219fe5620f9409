"""Core MCP tools: init, health, get_profile, activities, issue reports and feedback."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

import brain
from brain.core import services
from brain.core.actors import Actor
from brain.core.selectors import enabled_features, get_profile
from brain.infra.health import run_checks
from brain.mcp.limits import Cut
from brain.mcp.registry import TOOLS, ToolOutput, mcp_tool, visible_tools
from brain.mcp.skills import SkillSummary, usable_skills
from usage.selectors import get_usage
from usage.shapes import UsageOut


class NoArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")


# --- init ---------------------------------------------------------------------------------

# Each rule applies only when the caller can see the tool it names.
RULES: list[tuple[str | None, str]] = [
    (
        None,
        "Brain returns evidence, not answers: write the answer yourself from what it returns, cite "
        "the page titles you used, and say plainly when the evidence does not answer the question "
        "instead of guessing.",
    ),
    (
        "ask_company_memory",
        "For any question about the company, call ask_company_memory first. Keep its "
        "activity_id and pass it to every follow-up call made for the same question.",
    ),
    (
        "search_company_memory",
        "Use search_company_memory only as a fallback, to look for candidates "
        "ask_company_memory did not surface; then fetch the few that matter with retrieve_company_memory.",
    ),
    (
        "add_company_knowledge",
        "Save knowledge with add_company_knowledge only when the user asks, confirms "
        "or approves it. Save durable company facts; never chat, drafts, guesses or sensitive personal "
        "data unless the user says it is company memory. Do not show ids or backend details to the user.",
    ),
    ("skills_get", "Load a skill with skills_get when its description fits the task at hand."),
    (
        "request_human_info",
        "To ask a person, call request_human_info with dispatch=false first and name "
        "only the contact it returns; dispatch after the user confirms, unless the user asked to be "
        "contacted themselves. Tell the user it runs in the background and can take minutes.",
    ),
    (
        "report_issue",
        "Report a confirmed failure once with report_issue and tell the user in one line; "
        "it needs no permission. Wrong company facts are not issues: tell the user to contact an admin.",
    ),
    (
        "send_feedback",
        "Send at most one send_feedback at the end of a task, when something could be better but nothing failed.",
    ),
    (None, "If a report or feedback cannot be saved, carry on with the user's task and do not retry."),
]

# For a caller that sees a connector's ACTION tool (brain.mcp.registry.ACTION).
ACTION_RULE = (
    "A tool whose description starts with ACTION: changes something outside Brain that other people "
    "see. Call it only when the user asked for exactly that change, and show them the exact words "
    "before it goes out; never call one on your own initiative."
)

COLLECTING_NOTICE = (
    "Company Memory is still collecting its initial knowledge and is not ready to answer questions. "
    "Tell the user so, and suggest asking again once an admin has built the memory."
)


class InitOut(ToolOutput):
    ready: bool = Field(description="False while the memory is still collecting its initial knowledge.")
    notice: str | None = Field(None, description="Shown instead of the rules while the memory is not ready.")
    organisation: str
    rules: list[str] = Field(default_factory=list)
    skills: list[SkillSummary] = Field(default_factory=list)
    total_count: int = Field(0, description="How many skills the caller may use.")

    def to_text(self) -> str:
        if not self.ready:
            return f"NOTICE: {self.notice}"
        lines = [f"Brain for {self.organisation}. Rules:"]
        lines += [f"- {rule}" for rule in self.rules]
        lines.append(f"Skills ({self.total_count}):")
        lines += [f"- {s.slug}: {s.name}" + (f" - {s.description}" if s.description else "") for s in self.skills]
        if not self.skills:
            lines.append("- none yet")
        return "\n".join(lines)


@mcp_tool("init", title="Initialize Company Brain", args=NoArgs, output=InitOut, idempotent=True, billing="free")
def init_tool(actor: Actor, args: NoArgs) -> InitOut:
    """Call this first in every conversation. Returns the rules for using Brain and the list of
    skills (reusable instructions) you may load with skills_get, with total_count. While the
    organisation's memory is still being built it returns a notice instead: then tell the user the
    memory is not ready yet rather than answering from it."""
    if actor.org.memory_built_at is None:
        return InitOut(ready=False, notice=COLLECTING_NOTICE, organisation=actor.org.name)
    visible = {spec.name for spec in visible_tools(scopes=actor.scopes, features=enabled_features(actor=actor))}
    rules = [text for tool, text in RULES if tool is None or (tool in visible and tool in TOOLS)]
    if any(TOOLS[name].action for name in visible):
        rules.insert(len(rules) - 1, ACTION_RULE)
    skills = usable_skills(actor)
    return InitOut(ready=True, organisation=actor.org.name, rules=rules, skills=skills, total_count=len(skills))


# --- health -------------------------------------------------------------------------------


class ComponentOut(BaseModel):
    name: str
    ok: bool
    detail: str = Field(description="Versions and the reason for a failure for operators; otherwise only up or down.")
    ms: float


class HealthOut(ToolOutput):
    status: Literal["ok", "degraded"]
    version: str
    components: list[ComponentOut]

    def to_text(self) -> str:
        parts = [f"{c.name} {'ok' if c.ok else 'DOWN'} ({c.detail})" for c in self.components]
        return f"Brain {self.version}: {self.status}. " + "; ".join(parts)


UP, DOWN = "reachable", "not answering; an operator can see why with 'manage.py check_health'"


@mcp_tool("health", title="Check Company Brain Health", args=NoArgs, output=HealthOut, idempotent=True, billing="free")
def health_tool(actor: Actor, args: NoArgs) -> HealthOut:
    """Check whether Brain and the parts it depends on (database, queue, model) are reachable.
    Use it when other Brain tools fail or seem stuck, before reporting an issue. Says which part
    is down; the versions of the parts and why one failed are shown only to Brain's operators."""
    results = run_checks()
    operator = actor.user.is_superuser  # component versions and failure texts help an attacker, not a member
    return HealthOut(
        status="ok" if all(r.ok for r in results) else "degraded",
        version=brain.__version__,
        components=[
            ComponentOut(name=r.name, ok=r.ok, detail=r.detail if operator else UP if r.ok else DOWN, ms=r.ms)
            for r in results
        ],
    )


# --- get_profile --------------------------------------------------------------------------


class ProfileOut(ToolOutput):
    profile_id: str = Field(description="Opaque and stable for this user in this organisation.")
    email: str
    name: str
    organisation: str
    usage: UsageOut = Field(description="The organisation's plan and this month's use of it.")

    def to_text(self) -> str:
        return f"{self.name} <{self.email}> in {self.organisation} (profile {self.profile_id})\n{self.usage.to_text()}"


@mcp_tool("get_profile", title="Get Signed-in Profile", args=NoArgs, output=ProfileOut, idempotent=True, billing="free")
def get_profile_tool(actor: Actor, args: NoArgs) -> ProfileOut:
    """Return the account this connection is signed in with: an opaque profile id and the email
    address, and the organisation's plan and usage this month (reads, free reads and credits
    left, when they renew). Use it to label the connected account or when the user asks about
    usage; it says nothing about company knowledge. Never billed."""
    profile = get_profile(actor=actor)
    return ProfileOut(
        profile_id=profile.profile_id,
        email=profile.email,
        name=profile.name,
        organisation=profile.organisation,
        usage=UsageOut.of(get_usage(org=actor.org)),
    )


# --- start_company_memory_activity --------------------------------------------------------


class StartActivityArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    label: Annotated[str, Cut(200)] = Field("", description="A short label for the question (cut at 200).")
    conversation_id: Annotated[str, Cut(200)] = Field("", description="Your conversation's id, if you have one.")
    user_question_hash: Annotated[str, Cut(128)] = Field("", description="A hash of the user's question.")


class ActivityOut(ToolOutput):
    activity_id: str
    created_at: datetime

    def to_text(self) -> str:
        return f"activity_id: {self.activity_id}"


@mcp_tool(
    "start_company_memory_activity",
    title="Start Company Memory Activity",
    args=StartActivityArgs,
    output=ActivityOut,
    billing="free",
)
def start_activity_tool(actor: Actor, args: StartActivityArgs) -> ActivityOut:
    """Create an activity id that groups the calls made to answer one question. Rarely needed:
    ask_company_memory creates one for you. Use it only when you start with another tool and want
    the later calls counted as one question. Changes no knowledge; each call makes a new record."""
    activity = services.start_activity(actor=actor, **args.model_dump())
    return ActivityOut(activity_id=activity.public_id, created_at=activity.created_at)


# --- report_issue and send_feedback -------------------------------------------------------


class ReportIssueArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    category: Literal["missing_information", "wrong_answer", "tool_error", "access_problem"] = Field(
        description=(
            "missing_information: the user says something exists and Brain did not return it. "
            "wrong_answer: an answer contradicts its own evidence. tool_error: a tool failed. "
            "access_problem: reading what the user may see went wrong (not results merely hidden)."
        )
    )
    observed: Annotated[str, Cut(2000)] = Field(min_length=1, description="What happened (cut at 2,000).")
    expected: Annotated[str, Cut(2000)] = Field(min_length=1, description="What should have happened (cut at 2,000).")
    activity_id: Annotated[str, Cut(80)] | None = Field(None, description="The activity this concerns.")
    tool_name: Annotated[str, Cut(80)] = Field("", description="The tool that misbehaved.")
    user_request: Annotated[str, Cut(500)] = Field("", description="What the user asked (cut at 500).")
    error_message: Annotated[str, Cut(2000)] = Field("", description="The error text, if any (cut at 2,000).")


class RecordedOut(ToolOutput):
    recorded: bool
    message: str

    def to_text(self) -> str:
        return self.message


@mcp_tool(
    "report_issue",
    title="Report a Company Brain Issue",
    args=ReportIssueArgs,
    output=RecordedOut,
    read_only=False,
    billing="free",
    writes="own",
)
def report_issue_tool(actor: Actor, args: ReportIssueArgs) -> RecordedOut:
    """Record a failure you can point to: a tool error, missing information the user says exists,
    an answer that contradicts its evidence, or an access problem. Report once it is confirmed,
    not on first suspicion; no permission is needed; tell the user in one line. Not for wrong
    company facts (tell the user to contact an admin). Over-long texts are cut, not refused. If it
    cannot be saved, carry on with the task and do not retry. Changes no knowledge."""
    services.report_issue(actor=actor, **args.model_dump())
    return RecordedOut(recorded=True, message="Issue recorded for the Brain team. Carry on with the task.")


class SendFeedbackArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    summary: Annotated[str, Cut(2000)] = Field(min_length=1, description="The suggestion (cut at 2,000).")
    origin: Literal["user", "agent"] = Field(description="user when the idea is the user's, agent when it is yours.")
    context: Annotated[str, Cut(1000)] = Field("", description="What you were doing (cut at 1,000).")
    blocked: bool = Field(False, description="True when the gap stopped the task.")
    activity_id: Annotated[str, Cut(80)] | None = Field(None, description="The activity this concerns.")


@mcp_tool(
    "send_feedback",
    title="Send Company Brain Feedback",
    args=SendFeedbackArgs,
    output=RecordedOut,
    read_only=False,
    billing="free",
    writes="own",
)
def send_feedback_tool(actor: Actor, args: SendFeedbackArgs) -> RecordedOut:
    """Suggest an improvement to Brain when nothing failed (for failures use report_issue). Send
    it once, at the end of the task. Over-long texts are cut, not refused. Changes no knowledge."""
    services.send_feedback(actor=actor, **args.model_dump())
    return RecordedOut(recorded=True, message="Feedback recorded. Thank you.")
