"""ask_company_memory: a question in, the best evidence out (excerpts, the facts behind them, sources).

A thin tool over ``memory.search.evidence.gather_evidence``: it parses, gathers, formats."""

from __future__ import annotations

import time
from datetime import date, datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from brain.core.actors import Actor
from brain.core.errors import InvalidArgument
from brain.core.reviews import stale_since, today
from brain.core.services import record_miss, resolve_activity, start_activity
from brain.infra.ids import format_id
from brain.mcp.limits import Clamped
from brain.mcp.registry import ToolOutput, mcp_tool
from memory.documents.stewardship import stale_among
from memory.graph.entity_views import entity_views
from memory.mcp_tools.answers import ASK_ADDITIONS, AskContext, ContradictionOut, DefinitionOut
from memory.mcp_tools.shapes import STALE_HELP, FactOut, fact_outs, stale_words
from memory.search.answer import Card, Statement
from memory.search.evidence import Excerpt, Question, card_for, gather_evidence

GUIDANCE = {
    "answer": "Answer the question directly from the evidence, citing the page titles you used.",
    "brief": "Write a short brief: the key points from the evidence, each with its source title.",
    "decision_support": "Lay out what the evidence says for and against, the open questions and the risks; "
    "cite sources; do not decide for the user.",
    "context": "Use the evidence as background for the task at hand; cite it when you rely on it.",
}
Day = date  # a statement's own field is named ``date``

NO_EVIDENCE = (
    "Brain has no evidence on this question among what you may see. Tell the user that company memory "
    "has nothing on it; do not answer from general knowledge as if it came from Brain. Offer "
    "request_human_info if a person could know."
)


class AskArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    question: str = Field(min_length=1, max_length=4000, description="The user's question, in their words.")
    intent: str = Field("", max_length=240, description="What the answer is for (up to 240; longer is refused).")
    desired_output: Literal["answer", "brief", "decision_support", "context"] = "answer"
    response_mode: Literal["compact", "full"] = Field("compact", description="full adds diagnostics; debugging only.")
    risk_level: Literal["normal", "high"] = Field("normal", description="high adds conflicts and confidence warnings.")
    retrieval_mode: Literal["auto", "vector", "graph"] = Field("auto", description="Leave on auto unless debugging.")
    top_k: Annotated[int, Clamped(1, 20)] = Field(5, description="Candidate passages to look at, 1 to 20 (5).")
    max_evidence_documents: Annotated[int, Clamped(1, 5)] = Field(3, description="Pages to return, 1 to 5 (3).")
    max_chars_per_document: Annotated[int, Clamped(1000, 50_000)] = Field(4000, description="1,000 to 50,000 (4,000).")
    max_claims: Annotated[int, Clamped(1, 20)] = Field(8, description="Facts to return, 1 to 20 (8).")
    activity_id: str | None = Field(None, max_length=80, description="Leave out to start a new activity.")
    as_of: date | None = Field(None, description="Answer from memory as it stood at the end of this day.")
    as_of_by: Literal["said", "learned"] = Field(
        "said",
        description="How as_of reads: said (default), what the sources had said by then, dated by their own "
        "dates; learned, what Brain had taken in by then.",
    )


class EvidenceOut(BaseModel):
    document_id: str
    title: str
    reference: str = Field(description="Where the page lives: its URL, or Brain's id for it.")
    external_url: str | None
    excerpt: str
    truncated: bool
    chunk_ids: list[str]
    recorded_at: Any
    occurred_at: Any = None
    speaker: str | None = Field(None, description="Who said it, when the page is one message or turn.")
    stale_since: date | None = Field(None, description=STALE_HELP.format(what="the page"))

    @classmethod
    def of(cls, excerpt: Excerpt, *, on: date) -> EvidenceOut:
        document = excerpt.document
        return cls(
            document_id=document.public_id,
            title=document.title,
            reference=document.source_url or document.public_id,
            external_url=document.source_url or None,
            excerpt=excerpt.text,
            truncated=excerpt.truncated,
            chunk_ids=excerpt.chunk_ids,
            recorded_at=document.recorded_at,
            occurred_at=document.occurred_at,
            speaker=document.speaker or None,
            stale_since=stale_since(document.review_due_on, on=on) if document.superseded_at is None else None,
        )


class StatementOut(BaseModel):
    value: str = Field(description="The value the sentence gives of the kind asked for; empty when none.")
    sentence: str
    chunk_id: str
    document_id: str
    title: str
    said_by: str | None = None
    date: datetime | None = Field(None, description="When it was said or written, else when Brain recorded it.")
    stale_since: Day | None = Field(None, description=STALE_HELP.format(what="its document"))

    @classmethod
    def of(cls, statement: Statement, stale: dict[int, Day]) -> StatementOut:
        return cls(
            value=statement.value,
            sentence=statement.sentence,
            chunk_id=format_id("chunk", statement.chunk_id),
            document_id=format_id("doc", statement.document_id),
            title=statement.title,
            said_by=statement.speaker or None,
            date=statement.when,
            stale_since=stale.get(statement.document_id),
        )

    def line(self) -> str:
        said = f", said by {self.said_by}" if self.said_by else ""
        dated = f", {self.date:%Y-%m-%d}" if self.date else ""
        stale = f"; {stale_words(self.stale_since)}" if self.stale_since else ""
        return f"{self.sentence} ({self.title}{said}{dated}; {self.chunk_id}{stale})"


class AnswerCardOut(BaseModel):
    """The answer card the search page shows for the same question: built from the same search."""

    status: Literal["answered", "disputed", "closest", "nothing"] = Field(
        description="answered: a source states it; disputed: sources give different values; closest: the nearest "
        "passage does not state it; nothing: nothing found answers."
    )
    line: str = Field("", description="The answer in one line, in the source's words.")
    answer: StatementOut | None = None
    others: list[StatementOut] = Field(default_factory=list, description="Sources giving another value, oldest first.")

    @classmethod
    def of(cls, card: Card, *, actor: Actor, pages: list[Excerpt]) -> AnswerCardOut:
        """The card; a statement whose document is past its review date is marked, read from the
        evidence pages in hand, else with one query (the card's search found it under the access rule)."""
        on = today(actor.org)
        known = {
            e.document.pk: stale_since(e.document.review_due_on, on=on) for e in pages if not e.document.superseded_at
        }
        said = [s for s in (card.answer, *card.others) if s is not None]
        unknown = [s.document_id for s in said if s.document_id not in known]
        stale = {pk: day for pk, day in known.items() if day is not None}
        stale |= stale_among(actor=actor, found=unknown) if unknown else {}
        return cls(
            status=card.status,
            line=card.line if card.status in ("answered", "disputed") else "",
            answer=StatementOut.of(card.answer, stale) if card.answer else None,
            others=[StatementOut.of(s, stale) for s in card.others],
        )

    def lines(self) -> list[str]:
        if self.status == "nothing" or self.answer is None:
            return ["Answer card: nothing found answers this."]
        if self.status == "closest":
            return [f"Answer card: no source states it; the closest: {self.answer.line()}"]
        out = [f"Answer card: {self.line}", f"  from: {self.answer.line()}"]
        out += [f"  another source says: {other.line()}" for other in self.others]
        return out


class AskOut(ToolOutput):
    activity_id: str
    status: Literal["evidence", "no_evidence"]
    guidance: str
    answer: AnswerCardOut | None = Field(
        None, description="The line of the evidence that answers, as the search page's card shows it."
    )
    evidence: list[EvidenceOut]
    claims: list[FactOut]
    conflicts: list[FactOut] | None = None
    warnings: list[str] | None = None
    definitions: list[DefinitionOut] | None = Field(None, description="The glossary's definitions of words used.")
    open_contradictions: list[ContradictionOut] | None = Field(
        None, description="With risk_level high: open contradictions touching the evidence."
    )
    diagnostics: dict[str, Any] | None = None

    def to_text(self) -> str:
        if self.status == "no_evidence":
            return f"{self.guidance}\nactivity_id: {self.activity_id}"
        parts = [f"activity_id: {self.activity_id}", self.guidance]
        if self.answer is not None:
            parts.append("\n".join(self.answer.lines()))
        for i, page in enumerate(self.evidence, 1):
            stale = f" [{stale_words(page.stale_since)}]" if page.stale_since else ""
            parts.append(f"## [{i}] {page.title} ({page.reference}){stale}\n{page.excerpt}")
        if self.claims:
            parts.append("Facts:\n" + "\n".join(f"- {c.line()}" for c in self.claims))
        if self.conflicts:
            parts.append("Conflicting or replaced statements:\n" + "\n".join(f"- {c.line()}" for c in self.conflicts))
        if self.warnings:
            parts.append("Warnings:\n" + "\n".join(f"- {w}" for w in self.warnings))
        if self.definitions:
            parts.append(
                "This organisation's words:\n" + "\n".join(f"- {d.term}: {d.definition}" for d in self.definitions)
            )
        if self.open_contradictions:
            parts.append(
                "Open contradictions (unanswered; do not pick a side):\n"
                + "\n".join(
                    f"- {c.id} {c.about}: a) {c.a.claim} ({c.a.source}) / b) {c.b.claim} ({c.b.source})"
                    for c in self.open_contradictions
                )
            )
        return "\n\n".join(parts)


@mcp_tool("ask_company_memory", title="Ask Company Memory", args=AskArgs, output=AskOut, idempotent=True)
def ask_company_memory_tool(actor: Actor, args: AskArgs) -> AskOut:
    """The main tool: ask any question about the company and get evidence back: excerpts of the
    best pages, the facts behind them (with their validity and source), and the title and reference
    of each page, plus an activity_id. You write the answer from the evidence; when the status is
    no_evidence, say Brain has nothing on it instead of guessing. Pass the returned activity_id to
    the follow-up calls for the same question (search_company_memory, retrieve_company_memory,
    request_human_info). Numbers outside their ranges are moved to the nearest bound; an intent over
    240 characters is refused. risk_level high adds conflicting statements and low-confidence
    warnings; response_mode full adds diagnostics and is for debugging. answer is the line of the
    evidence that states the answer, with its source and date, exactly as the search page's answer
    card shows it; when sources give different values it is disputed and lists each with its date;
    closest means no source states it. A page or fact whose document is past its review date has
    stale_since (the day its review fell due): say the source may be out of date. as_of answers
    from what the sources had said by the end of that day (as_of_by said, the default) or from
    what Brain had taken in by then (as_of_by learned)."""
    started = time.perf_counter()
    activity = _activity(actor, args)
    found = gather_evidence(
        actor=actor,
        question=Question(
            text=args.question,
            retrieval_mode=args.retrieval_mode,
            top_k=args.top_k,
            max_evidence_documents=args.max_evidence_documents,
            max_chars_per_document=args.max_chars_per_document,
            max_claims=args.max_claims,
            as_of=args.as_of,
            as_of_by=args.as_of_by,
            high_risk=args.risk_level == "high",
        ),
    )
    if found.empty:
        record_miss(actor=actor, tool="ask_company_memory", question=args.question)
        return AskOut(activity_id=activity, status="no_evidence", guidance=NO_EVIDENCE, evidence=[], claims=[])
    out = AskOut(
        activity_id=activity,
        status="evidence",
        guidance=GUIDANCE[args.desired_output] + (f" The user wants it for: {args.intent}" if args.intent else ""),
        answer=AnswerCardOut.of(
            card_for(
                actor=actor,
                question=args.question,
                as_of=args.as_of,
                vector=found.vector,
                as_of_by=args.as_of_by,
                hits=found.card_hits,
            ),
            actor=actor,
            pages=found.excerpts,
        ),
        evidence=[EvidenceOut.of(e, on=today(actor.org)) for e in found.excerpts],
        claims=fact_outs(actor, found.claims, as_of=args.as_of),
    )
    if found.conflicts is not None:
        out.conflicts = fact_outs(actor, found.conflicts, as_of=args.as_of)
        out.warnings = found.warnings
    pages = [e.document for e in found.excerpts]
    context = AskContext(
        actor=actor, question=args.question, claims=found.claims, documents=pages, high_risk=args.risk_level == "high"
    )
    for add in ASK_ADDITIONS:
        extra = add(context)
        if extra.definitions:
            out.definitions = [*(out.definitions or []), *extra.definitions]
        if extra.open_contradictions:
            out.open_contradictions = [*(out.open_contradictions or []), *extra.open_contradictions]
    if args.response_mode == "full":
        views = entity_views(actor=actor, entity_ids=found.named)
        out.diagnostics = {
            "passages": [
                {
                    "chunk_id": format_id("chunk", h.chunk_id),
                    "document_id": format_id("doc", h.document_id),
                    "score": h.score,
                    "ranks": h.ranks,
                    "scores": h.scores,
                }
                for h in found.hits
            ],
            "entities_named": [{"entity_id": v.public_id, "name": v.name} for v in views.values()],
            "graph_facts": found.graph_facts,
            "elapsed_ms": round((time.perf_counter() - started) * 1000, 1),
        }
    return out


def _activity(actor: Actor, args: AskArgs) -> str:
    if args.activity_id:
        if resolve_activity(actor=actor, activity_id=args.activity_id) is None:
            raise InvalidArgument("Unknown activity_id; leave it out to start a new activity for this question.")
        return args.activity_id
    return start_activity(actor=actor, label=args.question[:200]).public_id
