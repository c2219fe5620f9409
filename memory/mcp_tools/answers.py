"""What other apps add to memory's answers, through seams memory declares (``brain.infra.hooks``).

- ``ASK_ADDITIONS``: called by ``ask_company_memory`` with the question and its evidence; returns
  the definitions of the organisation's words the question uses and the open contradictions
  touching the evidence (the registers plug in, each under its own feature switch).
- ``FACT_FLAGS``: called by ``explore_entity`` with the facts it shows; returns the ids of the open
  contradictions about each (the contradictions register plugs in).

The shapes of what they add live here, so a tool's output schema does not depend on whether an
app above memory is installed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date

from pydantic import BaseModel, Field

from brain.core.actors import Actor
from brain.infra.hooks import Seam
from memory.models import Document, Fact


class DefinitionOut(BaseModel):
    id: str
    term: str
    definition: str


class SideOut(BaseModel):
    claim: str
    source: str
    date: date | None
    memory_id: str | None

    def line(self, label: str) -> str:
        dated = f", {self.date:%Y-%m-%d}" if self.date else ""
        memory = f", {self.memory_id}" if self.memory_id else ""
        return f"  {label}: {self.claim} (source: {self.source}{dated}{memory})"


class ContradictionOut(BaseModel):
    id: str
    about: str
    question: str
    subject: str
    severity: str
    state: str
    a: SideOut
    b: SideOut
    more: list[SideOut] = Field(default_factory=list, description="The same thing stated more ways: c, d, ...")
    answer: str = ""
    note: str = ""
    found_again: int = Field(
        0, description="Other pairs of statements found disagreeing the same way; answering this answers them too."
    )

    def lines(self) -> list[str]:
        """The pair as lines a model reads easily, its id first."""
        subject = f", about {self.subject}" if self.subject else ""
        lines = [
            f"{self.id}: {self.about} ({self.state}, {self.severity} severity{subject})",
            f"  question: {self.question}",
            self.a.line("a"),
            self.b.line("b"),
        ]
        lines += [side.line(label) for label, side in zip("cdef", self.more, strict=False)]
        if self.found_again:
            lines.append(
                f"  found again in {self.found_again} other pair(s) of statements; answering this answers them"
            )
        if self.answer:
            lines.append(f"  answer: {self.answer}" + (f"; {self.note}" if self.note else ""))
        return lines


@dataclass(frozen=True)
class AskContext:
    actor: Actor
    question: str
    claims: list[Fact]
    documents: list[Document]
    high_risk: bool


@dataclass
class AskAdditions:
    definitions: list[DefinitionOut] = field(default_factory=list)
    open_contradictions: list[ContradictionOut] = field(default_factory=list)


ASK_ADDITIONS: Seam[Callable[[AskContext], AskAdditions]] = Seam(
    "ask additions", "called with a question and its evidence; returns what an app adds to the answer"
)
FACT_FLAGS: Seam[Callable[[Actor, set[int]], dict[int, list[str]]]] = Seam(
    "fact flags", "called with fact ids; returns, per fact, the ids of open entries about it"
)
