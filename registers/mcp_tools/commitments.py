"""list_commitments, record_commitment, update_commitment. Answers read as lines, ids first."""

from __future__ import annotations

from datetime import date
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from brain.core.actors import Actor
from brain.infra.ids import format_id
from brain.mcp.limits import Clamped, IsoDay
from brain.mcp.registry import ToolOutput, mcp_tool
from memory.documents.source import UPLOAD_DATED, UPLOAD_DATED_HELP
from registers.commitments import services
from registers.common import local_today
from registers.models import Commitment

FEATURE = "commitments"


class SaidAlso(BaseModel):
    document_id: str
    title: str
    passage: str | None
    what: str = Field(description="The promise as that place said it.")
    due_on: date | None
    promised_on: date


class CommitmentOut(BaseModel):
    id: str
    owner: str
    what: str
    state: str
    overdue: bool
    due_on: date | None
    promised_on: date
    made_in: str
    note: str = ""
    verdict: str | None = None
    verdict_checked_at: str | None = None
    evidence: list[dict[str, object]] = []
    dated_from_upload: bool = Field(
        default=False,
        description=UPLOAD_DATED_HELP,
    )
    said_also: list[SaidAlso] = Field(
        default_factory=list, description="Further places the same promise was said (one entry, several sources)."
    )

    def lines(self) -> list[str]:
        """The promise as lines a model reads easily, its id first."""
        due = f", due {self.due_on:%Y-%m-%d}" if self.due_on else ""
        state = "overdue" if self.overdue else self.state
        lines = [f"{self.id}: {self.owner}: {self.what} ({state}{due}; promised {self.promised_on:%Y-%m-%d})"]
        if self.made_in:
            lines.append(f"  made in: {self.made_in}")
        if self.dated_from_upload:
            lines.append(f"  dated from the upload day: {UPLOAD_DATED}")
        if self.note:
            lines.append(f"  note: {self.note}")
        if self.verdict:
            lines.append(f"  verdict ({self.verdict_checked_at or 'not checked'}): {self.verdict}")
        for place in self.said_also:
            due = f", due {place.due_on:%Y-%m-%d}" if place.due_on else ""
            lines.append(f"  also said in: {place.title} ({place.document_id}, {place.promised_on:%Y-%m-%d}{due})")
        for item in self.evidence:
            lines.append(f"  evidence: {evidence_line(item)}")
        return lines


def evidence_line(item: dict[str, object]) -> str:
    """One piece of evidence a verdict found, a passage of a document or a memory: its id, where
    and when it was said, and the line that matched."""
    ref = item.get("id") or item.get("memory") or item.get("passage") or ""
    document = f" ({item['document']})" if item.get("document") else ""
    day = f", {item['day']}" if item.get("day") else ""
    line = item.get("line") or item.get("statement") or item.get("text") or ""
    return f"{ref} in {item.get('title', '')}{document}{day}: {line}"


def shown(commitment: Commitment, *, overdue: bool = False, verdict: object = None) -> CommitmentOut:
    where = commitment.made_in
    if commitment.document is not None:
        where = f"{commitment.document.title} ({commitment.document.public_id})"
    return CommitmentOut(
        id=commitment.public_id,
        owner=commitment.owner_name,
        what=commitment.what,
        state=commitment.state,
        overdue=overdue,
        due_on=commitment.due_on,
        promised_on=commitment.promised_on,
        made_in=where,
        note=commitment.note,
        verdict=getattr(verdict, "summary", None),
        verdict_checked_at=verdict.checked_at.isoformat() if verdict is not None else None,  # type: ignore[attr-defined]
        evidence=list(getattr(verdict, "found", []) or []),
        dated_from_upload=commitment.dated_from_upload,
        said_also=[
            SaidAlso(
                document_id=s.document.public_id,
                title=s.document.title,
                passage=format_id("chunk", s.chunk_id) if s.chunk_id else None,
                what=s.what,
                due_on=s.due_on,
                promised_on=s.promised_on,
            )
            for s in getattr(commitment, "said_also", [])
        ],
    )


class ListCommitmentsArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    owner: str | None = Field(None, max_length=200, description="A person or team: only what they owe.")
    state: Literal["open", "overdue", "landed", "cancelled", "all"] = Field(
        "open", description="open (the default) includes overdue ones."
    )
    limit: Annotated[int, Clamped(1, 100)] = Field(20, description="1 to 100; default 20.")


class CommitmentsOut(ToolOutput):
    commitments: list[CommitmentOut]
    note: str

    def to_text(self) -> str:
        count = len(self.commitments)
        lines = [f"{count} commitment{'' if count == 1 else 's'}:" if count else "No commitments match."]
        for commitment in self.commitments:
            lines += commitment.lines()
        return "\n".join([*lines, self.note])


@mcp_tool(
    "list_commitments", title="List Commitments", args=ListCommitmentsArgs, output=CommitmentsOut, feature=FEATURE
)
def list_commitments_tool(actor: Actor, args: ListCommitmentsArgs) -> CommitmentsOut:
    """Who promised what, and by when, read from meeting notes and chat or recorded by people.
    Use it for "what did we promise BigCo?", "what does Priya owe?" and "what is overdue?". Each
    entry carries the latest nightly verdict: what memory was searched for evidence that it
    landed and what was found. A verdict is a judgement from memory as it stood that night, not a
    check of the system that would hold the proof: before telling anyone a promise was or was not
    kept, check that system with its own tools and say which one. Nothing is ever marked missed;
    without evidence a promise stays open."""
    listed = services.list_commitments(actor=actor, owner=args.owner, state=args.state, limit=args.limit)
    return CommitmentsOut(
        commitments=[shown(item.commitment, overdue=item.overdue, verdict=item.verdict) for item in listed],
        note="Verdicts are nightly judgements from memory; confirm in the system of record before reporting.",
    )


class RecordCommitmentArgs(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    owner: str = Field(
        max_length=200, description="The person or team who undertook it, as the organisation names them."
    )
    what: str = Field(
        max_length=300, description="What they undertook, one line, third person, with figures and names."
    )
    due_on: IsoDay | None = Field(None, description="YYYY-MM-DD, only if a deadline was given; never invent one.")
    promised_on: IsoDay | None = Field(None, description="YYYY-MM-DD it was promised, if not today.")
    from_: str | None = Field(
        None,
        alias="from",
        max_length=300,
        description='Where it was made, if not here ("a call with Baltic, 9 Oct").',
    )


class CommitmentResult(ToolOutput):
    commitment: CommitmentOut
    message: str

    def to_text(self) -> str:
        return "\n".join([self.message, *self.commitment.lines()])


@mcp_tool(
    "record_commitment",
    title="Record a Commitment",
    args=RecordCommitmentArgs,
    output=CommitmentResult,
    scope="write",
    feature=FEATURE,
    writes="shared",
)
def record_commitment_tool(actor: Actor, args: RecordCommitmentArgs) -> CommitmentResult:
    """Put a promise on the register: a named person or team undertook to do a specific thing.
    Use it when someone commits during this conversation, or tells of a promise made where Brain
    cannot see (a call, a meeting without notes). Promises in meeting notes and chat are read
    nightly; do not copy those. Only a real undertaking by a named owner belongs here, not an
    idea, a hope or a decision."""
    commitment = services.record_commitment(
        actor=actor,
        owner=args.owner,
        what=args.what,
        due_on=args.due_on,
        promised_on=args.promised_on,
        made_in=args.from_ or "",
    )
    overdue = commitment.is_overdue(local_today(actor.org))
    return CommitmentResult(
        commitment=shown(commitment, overdue=overdue), message=f"Recorded as {commitment.public_id}."
    )


class UpdateCommitmentArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str = Field(max_length=40, description="The commitment id list_commitments returns (cmt_...).")
    status: Literal["landed", "done", "cancelled", "dropped", "open"] | None = Field(
        None,
        description="landed/done: carried out; cancelled/dropped: will not be; open: reopen one settled by mistake.",
    )
    note: str | None = Field(
        None, max_length=500, description="What a settled status rests on; required for done or dropped."
    )
    due_on: IsoDay | None = Field(None, description="YYYY-MM-DD the deadline moved to.")
    what: str | None = Field(None, max_length=300, description="The promise corrected: one line, third person.")


@mcp_tool(
    "update_commitment",
    title="Update a Commitment",
    args=UpdateCommitmentArgs,
    output=CommitmentResult,
    scope="write",
    feature=FEATURE,
    idempotent=True,
    writes="shared",
)
def update_commitment_tool(actor: Actor, args: UpdateCommitmentArgs) -> CommitmentResult:
    """Mark a promise done or dropped, reopen it, or correct its wording or due date. Use it as
    soon as someone says a promise was kept, abandoned or moved, or the register keeps saying
    open. Done or dropped needs a note saying what it rests on (the system checked and what it
    showed, or whose word it is); say the same in your reply, so nobody takes it for verified."""
    commitment = services.update_commitment(
        actor=actor, commitment_id=args.id, status=args.status, note=args.note, due_on=args.due_on, what=args.what
    )
    overdue = commitment.is_overdue(local_today(actor.org))
    return CommitmentResult(
        commitment=shown(commitment, overdue=overdue), message=f"{commitment.public_id} is {commitment.state}."
    )
