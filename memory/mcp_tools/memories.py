"""remember and forget."""

from __future__ import annotations

from datetime import date
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from brain.core.actors import Actor
from brain.infra.ids import format_id
from brain.mcp.limits import NonBlank
from brain.mcp.registry import ToolOutput, mcp_tool
from memory.graph import memories as fact_services
from memory.graph import reads as graph


class EntityIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    type: str = Field(max_length=40)
    name: NonBlank = Field(min_length=1, max_length=200)
    summary: str = Field("", max_length=2000)


class RelationIn(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    from_: NonBlank = Field(alias="from", min_length=1, max_length=200)
    to: NonBlank = Field(min_length=1, max_length=200)
    relation: str = Field(min_length=1, max_length=80, pattern=r"^[a-z][a-z0-9_]*$")


class RememberArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    content: str = Field(
        min_length=1, max_length=20_000, description="A self-contained statement, with names and dates."
    )
    kind: Literal["fact", "decision", "preference", "event", "procedure"] = "fact"
    subject: NonBlank | None = Field(None, max_length=200, description="The entity it is mainly about.")
    valid_from: date | None = None
    valid_to: date | None = None
    replaces_memory_id: str | None = Field(None, max_length=40, description="A memory (mem_...) this corrects.")
    entities: list[EntityIn] = Field(default_factory=list, max_length=50)
    relations: list[RelationIn] = Field(default_factory=list, max_length=50)
    scope: Literal["shared", "personal"] | None = Field(
        None,
        description="shared: the organisation; personal: you only. Default shared (personal on a connection that "
        "may only store personal memories).",
    )
    title: str = Field("", max_length=240)
    description: str = Field("", max_length=2000, description="Where this came from.")


class RememberedOut(ToolOutput):
    memory_id: str
    scope: str
    message: str

    def to_text(self) -> str:
        return f"{self.message} ({self.memory_id}, {self.scope})"


@mcp_tool(
    "remember",
    title="Remember a Company Fact",
    args=RememberArgs,
    output=RememberedOut,
    scope="write",
    billing="remember",
    writes="scoped",
)
def remember_tool(actor: Actor, args: RememberArgs) -> RememberedOut:
    """Store a durable fact, decision, preference, event or procedure the user states or asks
    you to remember, as one self-contained statement with names and dates. scope shared is for
    knowledge about the company, its customers, systems and people; personal is for the user's own
    preferences, reminders and anything they say is just for them. If it corrects an earlier
    memory, pass replaces_memory_id. Never use it for passing conversation state. The memory is
    searchable at once; its passages within minutes. Returns the memory id (for forget)."""
    replaces = graph.parse_memory_id(args.replaces_memory_id) if args.replaces_memory_id else None
    fact = fact_services.remember(
        actor=actor,
        content=args.content,
        kind=args.kind,
        subject=args.subject,
        valid_from=args.valid_from,
        valid_to=args.valid_to,
        replaces_memory_id=replaces,
        entities=[e.model_dump() for e in args.entities],
        relations=[{"from": r.from_, "to": r.to, "relation": r.relation} for r in args.relations],
        scope=args.scope,
        title=args.title,
        description=args.description,
    )
    return RememberedOut(memory_id=fact.public_id, scope=fact.scope, message="Remembered.")


class ForgetArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    memory_id: str = Field(min_length=1, max_length=40, description="The id remember returned (mem_...).")


class ForgottenOut(ToolOutput):
    memory_id: str
    forgotten: str
    in_trash_until: str | None = Field(
        description="The day (YYYY-MM-DD) the memory is deleted for good; until then its author or an admin "
        "may restore it from the Trash page. None when it was deleted at once."
    )

    def to_text(self) -> str:
        if self.in_trash_until is None:
            return f"Forgot {self.memory_id}: {self.forgotten}"
        return (
            f"Forgot {self.memory_id}: {self.forgotten}. It is in the trash until {self.in_trash_until}: "
            "nobody finds it meanwhile, and you or an admin can restore it from the Trash page."
        )


@mcp_tool(
    "forget",
    title="Forget a Remembered Fact",
    args=ForgetArgs,
    output=ForgottenOut,
    scope="write",
    destructive=True,
    idempotent=True,
    billing="free",
    writes="scoped",
)
def forget_tool(actor: Actor, args: ForgetArgs) -> ForgottenOut:
    """Forget a memory you stored with remember: it moves to the trash, where nobody finds it, and is
    deleted for good after the organisation's trash period (30 days unless an admin changed it);
    until then you or an admin can restore it from the Trash page. It only removes what was
    remembered by this same user, never uploaded or synced documents, so source material cannot
    be deleted by mistake. Returns the day it is deleted for good. Never billed."""
    memory_id = graph.parse_memory_id(args.memory_id)
    forgotten = fact_services.forget(actor=actor, memory_id=memory_id)
    until = forgotten.trashed.until.date().isoformat() if forgotten.trashed is not None else None
    return ForgottenOut(
        memory_id=format_id("mem", memory_id), forgotten=forgotten.statement[:200], in_trash_until=until
    )
