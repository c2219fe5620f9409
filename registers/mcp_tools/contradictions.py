"""list_contradictions, raise_contradiction, answer_contradiction. Answers read as lines, ids first."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from brain.core.actors import Actor
from brain.infra.ids import format_id
from brain.mcp.limits import Clamped
from brain.mcp.registry import ToolOutput, mcp_tool
from memory.mcp_tools.answers import ContradictionOut, SideOut
from registers.contradictions import services
from registers.models import Contradiction

FEATURE = "contradictions"


def shown(entry: Contradiction) -> ContradictionOut:
    return ContradictionOut(
        id=entry.public_id,
        about=entry.about,
        question=entry.question,
        subject=entry.subject,
        severity=entry.severity,
        state=entry.state,
        answer=entry.answer,
        note=entry.note,
        found_again=getattr(entry, "twin_count", 0),
        a=SideOut(
            claim=entry.claim_a,
            source=entry.source_a,
            date=entry.date_a,
            memory_id=format_id("mem", entry.fact_a_id) if entry.fact_a_id else None,
        ),
        b=SideOut(
            claim=entry.claim_b,
            source=entry.source_b,
            date=entry.date_b,
            memory_id=format_id("mem", entry.fact_b_id) if entry.fact_b_id else None,
        ),
        more=[
            SideOut(
                claim=side["claim"], source=side["source"], date=side["date"], memory_id=format_id("mem", side["fact"])
            )
            for side in entry.more
        ],
    )


class ListContradictionsArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    state: Literal["open", "resolved", "dismissed", "all"] = Field(
        "open", description="Default open: not answered yet."
    )
    severity: Literal["high", "medium", "low"] | None = Field(
        None, description="high: someone could act wrongly on it today."
    )
    limit: Annotated[int, Clamped(1, 100)] = Field(20, description="1 to 100; default 20.")


class ContradictionsOut(ToolOutput):
    contradictions: list[ContradictionOut]

    def to_text(self) -> str:
        count = len(self.contradictions)
        lines = [f"{count} contradiction{'' if count == 1 else 's'}:" if count else "No contradictions match."]
        for entry in self.contradictions:
            lines += entry.lines()
        return "\n".join(lines)


@mcp_tool(
    "list_contradictions",
    title="List Contradictions",
    args=ListContradictionsArgs,
    output=ContradictionsOut,
    feature=FEATURE,
)
def list_contradictions_tool(actor: Actor, args: ListContradictionsArgs) -> ContradictionsOut:
    """What this organisation believes twice, differently: pairs of current statements from
    different sources that cannot both be true, found nightly or raised by people, each with the
    source and date of both sides. Use it for "where do we disagree with ourselves?", "is anything
    we tell customers out of date?" and before answering where two sources might differ. These
    are remembered statements, not a live check: before saying which side is right, look in the
    system that would settle it, say which you checked, then record the answer with
    answer_contradiction."""
    rows = services.list_contradictions(actor=actor, state=args.state, severity=args.severity, limit=args.limit)
    return ContradictionsOut(contradictions=[shown(entry) for entry in rows])


class RaiseContradictionArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    question: str = Field(max_length=500, description="One sentence with both sides, asking which is right.")
    about: str = Field(max_length=80, description="What it is about, three to six words.")
    claim_a: str = Field(max_length=1000, description="The first statement, as it is believed.")
    source_a: str = Field(max_length=300, description="Where it came from: a system, a document, or who said it.")
    claim_b: str = Field(max_length=1000, description="The second statement.")
    source_b: str = Field(max_length=300, description="Where the second came from.")
    memory_id_a: str | None = Field(None, max_length=40, description="The memory behind the first (mem_...), if known.")
    memory_id_b: str | None = Field(None, max_length=40, description="The memory behind the second, if known.")
    severity: Literal["high", "medium", "low"] = Field(
        "medium",
        description="high: someone could act wrongly on it today (a price, a contract term, a customer claim).",
    )
    subject: str | None = Field(None, max_length=200, description="The person, company or thing both are about.")


class ContradictionResult(ToolOutput):
    contradiction: ContradictionOut
    message: str
    already_existed: bool = Field(
        False, description="True when the pair was already on the register: the entry shown is that one, unchanged."
    )

    def to_text(self) -> str:
        return "\n".join([self.message, *self.contradiction.lines()])


@mcp_tool(
    "raise_contradiction",
    title="Raise a Contradiction",
    args=RaiseContradictionArgs,
    output=ContradictionResult,
    scope="write",
    feature=FEATURE,
    writes="shared",
)
def raise_contradiction_tool(actor: Actor, args: RaiseContradictionArgs) -> ContradictionResult:
    """Put on the register two things the organisation believes that cannot both be true, when
    you find them while answering something else or somebody points them out. Pairs of stored
    statements are found nightly; do not copy those. Give the memory ids where you have them
    (search_facts returns them): they let the answer supersede the statement that loses. A pair
    of memories already on the register is not raised twice: the answer is the entry already
    there (already_existed is true), with its state."""
    entry, created = services.raise_or_find_contradiction(actor=actor, **args.model_dump())
    if created:
        return ContradictionResult(contradiction=shown(entry), message=f"Raised as {entry.public_id}.")
    return ContradictionResult(
        contradiction=shown(entry),
        already_existed=True,
        message=f"This pair is already on the register as {entry.public_id} ({entry.state}); nothing was changed.",
    )


class AnswerContradictionArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str = Field(max_length=40, description="The contradiction id list_contradictions returns (ctr_...).")
    answer: Literal["a", "b", "c", "d", "e", "f", "both", "neither"] = Field(
        description="a, b (or c... when the entry names more statements): that one stands and the others are "
        "superseded; both: all true; neither: no contradiction."
    )
    note: str = Field(
        max_length=500, description="What the answer rests on: the system checked, or who said so and when."
    )


@mcp_tool(
    "answer_contradiction",
    title="Answer a Contradiction",
    args=AnswerContradictionArgs,
    output=ContradictionResult,
    scope="write",
    feature=FEATURE,
    writes="shared",
)
def answer_contradiction_tool(actor: Actor, args: AnswerContradictionArgs) -> ContradictionResult:
    """Say which of two statements stands. a or b supersedes the other statement in memory, so
    search and ask stop returning it as current; both (different periods or parts of the
    business) and neither (they never disagreed) close it and leave memory as it is. Answer only
    from something checked or something a person said in this conversation, never from your own
    inference, and say in your reply what the answer rests on."""
    entry = services.answer_contradiction(actor=actor, contradiction_id=args.id, answer=args.answer, note=args.note)
    backed = entry.fact_a_id is not None and entry.fact_b_id is not None
    others = [label for label in "abcdef"[: 2 + len(entry.more)] if label != entry.answer]
    verb = "is" if len(others) == 1 else "are"
    effect = f"{' and '.join(others)} {verb} superseded in memory" if entry.answer in tuple("abcdef") else ""
    if not effect or not backed:
        effect = "memory is unchanged" + ("" if backed or not effect else " (no memory ids were behind the statements)")
    return ContradictionResult(contradiction=shown(entry), message=f"{entry.public_id} is {entry.state}; {effect}.")
