"""glossary, define_term, update_term. Answers read as lines, ids first."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from brain.core.actors import Actor
from brain.infra.ids import format_id
from brain.mcp.limits import Clamped
from brain.mcp.registry import ToolOutput, mcp_tool
from registers.glossary import services
from registers.models import Term

FEATURE = "glossary"


class TermOut(BaseModel):
    id: str
    term: str
    state: str
    definition: str
    suggestion: str = ""
    senses: int
    uses: int
    examples: list[dict[str, object]]
    memory_id: str | None

    def lines(self) -> list[str]:
        """The term as lines a model reads easily, its id first."""
        memory = f", {self.memory_id}" if self.memory_id else ""
        lines = [f"{self.id}: {self.term} ({self.state}; {self.uses} uses, {self.senses} senses{memory})"]
        if self.definition:
            lines.append(f"  definition: {self.definition}")
        if self.suggestion:
            lines.append(f"  suggested, unconfirmed: {self.suggestion}")
        for example in self.examples:
            passage = f" (passage {example['passage']})" if example.get("passage") else ""
            lines.append(f"  example: {example.get('sentence', '')}{passage}")
        return lines


def shown(entry: Term) -> TermOut:
    return TermOut(
        id=entry.public_id,
        term=entry.term,
        state=entry.state,
        definition=entry.definition,
        suggestion=entry.suggestion if entry.state == Term.State.OPEN else "",
        senses=entry.senses,
        uses=entry.uses,
        examples=list(entry.examples),
        memory_id=format_id("mem", entry.memory_id) if entry.memory_id else None,
    )


class GlossaryArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    term: str | None = Field(None, max_length=120, description="One word or phrase to look up; leave out for all.")
    state: Literal["defined", "open", "all"] = Field(
        "defined", description="defined (the default): confirmed by a person; open: waiting for a definition."
    )
    limit: Annotated[int, Clamped(1, 200)] = Field(50, description="1 to 200; default 50.")


class GlossaryOut(ToolOutput):
    terms: list[TermOut]
    note: str

    def to_text(self) -> str:
        count = len(self.terms)
        lines = [f"{count} term{'' if count == 1 else 's'}:" if count else "No terms match."]
        for term in self.terms:
            lines += term.lines()
        return "\n".join([*lines, self.note] if self.note else lines)


@mcp_tool("glossary", title="Look Up the Glossary", args=GlossaryArgs, output=GlossaryOut, feature=FEATURE)
def glossary_tool(actor: Actor, args: GlossaryArgs) -> GlossaryOut:
    """The organisation's own words (acronyms, product and process names, ordinary words used
    as terms of art) with what each points at here. Look a word up before answering a question
    that turns on it, so you do not read it in its everyday sense. A definition is a pointer
    written from a few uses, not the whole meaning: never use it to narrow what someone means or
    to rule something out; where the edge of a meaning matters, look at real uses with
    search_company_memory. Open entries wait for someone to say what they mean (an unconfirmed
    suggestion found in the text may come with them); senses above 1 mark words used in more than
    one way."""
    terms = services.glossary(actor=actor, term=args.term, state=args.state, limit=args.limit)
    return GlossaryOut(
        terms=[shown(entry) for entry in terms],
        note="Definitions are pointers, not limits; suggestions on open entries are unconfirmed.",
    )


class DefineTermArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    term: str = Field(max_length=120, description="The word or phrase, written as the organisation writes it.")
    definition: str = Field(
        max_length=500, description="What it points at here, one sentence, broad enough for every use seen."
    )
    id: str | None = Field(
        None, max_length=40, description="The glossary id (term_...) when this answers an open entry."
    )


class TermResult(ToolOutput):
    term: TermOut
    message: str

    def to_text(self) -> str:
        return "\n".join([self.message, *self.term.lines()])


@mcp_tool(
    "define_term",
    title="Define a Term",
    args=DefineTermArgs,
    output=TermResult,
    scope="write",
    feature=FEATURE,
    writes="shared",
)
def define_term_tool(actor: Actor, args: DefineTermArgs) -> TermResult:
    """Record what one of the organisation's words points at, when somebody explains it in the
    conversation or confirms what an open entry means. It becomes a memory and joins the
    glossary, so later answers stop reading the word in its ordinary sense. Write it as a pointer,
    broad enough for every use you have seen, and only from what somebody said: an inferred
    definition is a guess."""
    entry = services.define_term(actor=actor, term=args.term, definition=args.definition, term_id=args.id)
    return TermResult(term=shown(entry), message=f"{entry.term} is defined ({entry.public_id}).")


class UpdateTermArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str = Field(max_length=40, description="The glossary id glossary returns (term_...).")
    definition: str | None = Field(
        None, max_length=500, description="The corrected or widened definition, one sentence."
    )
    state: Literal["defined", "dismissed", "open"] | None = Field(
        None, description="dismissed: not this organisation's word, never raised again; open: withdraw the definition."
    )
    note: str | None = Field(None, max_length=500, description="Why, in one line, for whoever reads the entry later.")


@mcp_tool(
    "update_term",
    title="Update a Term",
    args=UpdateTermArgs,
    output=TermResult,
    scope="write",
    feature=FEATURE,
    writes="shared",
)
def update_term_tool(actor: Actor, args: UpdateTermArgs) -> TermResult:
    """Correct or widen what a word points at (the new definition replaces the old memory), take
    a word out of the glossary for good (dismissed), or withdraw a definition so it is asked
    about again (open; its memory is removed, since a meaning nobody stands behind must not be
    found). Widening is as worth recording as correcting. Only record what somebody said."""
    entry = services.update_term(
        actor=actor, term_id=args.id, definition=args.definition, state=args.state, note=args.note
    )
    return TermResult(term=shown(entry), message=f"{entry.term} is {entry.state} ({entry.public_id}).")
