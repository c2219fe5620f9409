"""ask_company_memory: a question in, the best evidence out (excerpts, the facts behind them, sources)."""

from __future__ import annotations

import time
from datetime import date, timedelta
from typing import Annotated, Any, Literal

import numpy as np
from django.db.models import Q
from django.utils import timezone
from pydantic import BaseModel, ConfigDict, Field

from brain.actors import Actor
from brain.errors import InvalidArgument
from brain.mcp.limits import Clamped
from brain.mcp.registry import ToolOutput, mcp_tool
from brain.services import resolve_activity, start_activity
from memory.graph import reads as graph
from memory.graph.entity_views import entities_named, entity_views
from memory.graph.vocabulary import HELD_BY_ONE
from memory.mcp_tools.shapes import FactOut, fact_outs
from memory.models import Chunk, Document, Fact
from memory.retrieval.embedding import get_embedder
from memory.retrieval.passages import Hit, search_chunks

GUIDANCE = {
    "answer": "Answer the question directly from the evidence, citing the page titles you used.",
    "brief": "Write a short brief: the key points from the evidence, each with its source title.",
    "decision_support": "Lay out what the evidence says for and against, the open questions and the risks; "
    "cite sources; do not decide for the user.",
    "context": "Use the evidence as background for the task at hand; cite it when you rely on it.",
}
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
    as_of: date | None = Field(None, description="Answer from what Brain believed at the end of this day.")


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


class AskOut(ToolOutput):
    activity_id: str
    status: Literal["evidence", "no_evidence"]
    guidance: str
    evidence: list[EvidenceOut]
    claims: list[FactOut]
    conflicts: list[FactOut] | None = None
    warnings: list[str] | None = None
    diagnostics: dict[str, Any] | None = None

    def to_text(self) -> str:
        if self.status == "no_evidence":
            return f"{self.guidance}\nactivity_id: {self.activity_id}"
        parts = [f"activity_id: {self.activity_id}", self.guidance]
        for i, page in enumerate(self.evidence, 1):
            parts.append(f"## [{i}] {page.title} ({page.reference})\n{page.excerpt}")
        if self.claims:
            parts.append("Facts:\n" + "\n".join(f"- {c.line()}" for c in self.claims))
        if self.conflicts:
            parts.append("Conflicting or replaced statements:\n" + "\n".join(f"- {c.line()}" for c in self.conflicts))
        if self.warnings:
            parts.append("Warnings:\n" + "\n".join(f"- {w}" for w in self.warnings))
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
    warnings; response_mode full adds diagnostics and is for debugging."""
    started = time.perf_counter()
    activity = _activity(actor, args)
    vector = get_embedder().embed([args.question])[0]  # once, for passages and facts
    hits = [] if args.retrieval_mode == "graph" else _passages(actor, args, vector)
    named = _named_entities(actor, args.question) if args.retrieval_mode in ("auto", "graph") else []
    graph_facts = _entity_facts(actor, named, args) if named else []
    evidence = _evidence(actor, hits, graph_facts, args)
    claims = _claims(actor, args, hits, graph_facts, vector)
    if not evidence and not claims:
        return AskOut(activity_id=activity, status="no_evidence", guidance=NO_EVIDENCE, evidence=[], claims=[])
    out = AskOut(
        activity_id=activity,
        status="evidence",
        guidance=GUIDANCE[args.desired_output] + (f" The user wants it for: {args.intent}" if args.intent else ""),
        evidence=evidence,
        claims=fact_outs(actor, claims, as_of=args.as_of),
    )
    if args.risk_level == "high":
        out.conflicts = fact_outs(actor, _conflicts(actor, claims, args.as_of), as_of=args.as_of)
        out.warnings = _warnings(hits, evidence, claims, out.conflicts)
    if args.response_mode == "full":
        out.diagnostics = {
            "passages": [
                {
                    "chunk_id": f"chunk_{h.chunk_id}",
                    "document_id": f"doc_{h.document_id}",
                    "score": h.score,
                    "ranks": h.ranks,
                    "scores": h.scores,
                }
                for h in hits
            ],  # fmt: skip
            "entities_named": [
                {"entity_id": v.public_id, "name": v.name} for v in entity_views(actor=actor, entity_ids=named).values()
            ],
            "graph_facts": len(graph_facts),
            "elapsed_ms": round((time.perf_counter() - started) * 1000, 1),
        }
    return out


def _activity(actor: Actor, args: AskArgs) -> str:
    if args.activity_id:
        if resolve_activity(actor=actor, activity_id=args.activity_id) is None:
            raise InvalidArgument("Unknown activity_id; leave it out to start a new activity for this question.")
        return args.activity_id
    return start_activity(actor=actor, label=args.question[:200]).public_id


def _passages(actor: Actor, args: AskArgs, vector: np.ndarray) -> list[Hit]:
    mode = "vector" if args.retrieval_mode == "vector" else "auto"
    return search_chunks(
        actor=actor, query=args.question, top_k=args.top_k, mode=mode, as_of=args.as_of, vector=vector
    ).hits


def _named_entities(actor: Actor, question: str) -> list[int]:
    """Entities a readable source names word for word in the question, longest names first."""
    return entities_named(actor=actor, text=question, limit=5)


def _entity_facts(actor: Actor, ids: list[int], args: AskArgs) -> list[Fact]:
    facts = graph.believed(graph.visible_facts(actor=actor), as_of=args.as_of)
    rows = facts.filter(Q(subject_id__in=ids) | Q(object_id__in=ids)).select_related("subject", "object", "document")
    return list(rows.order_by("-recorded_at")[: args.max_claims * 3])


def _evidence(actor: Actor, hits: list[Hit], graph_facts: list[Fact], args: AskArgs) -> list[EvidenceOut]:
    order: list[int] = []
    matched: dict[int, list[int]] = {}
    for hit in hits:
        if hit.document_id not in matched:
            order.append(hit.document_id)
        matched.setdefault(hit.document_id, []).append(hit.ordinal)
    for fact in graph_facts:
        if fact.document_id and fact.document_id not in matched:
            order.append(fact.document_id)
            matched[fact.document_id] = []
    chosen = order[: args.max_evidence_documents]
    documents = Document.objects.in_bulk(chosen)
    return [_excerpt(documents[d], matched[d], args.max_chars_per_document) for d in chosen if d in documents]


def _excerpt(document: Document, ordinals: list[int], budget: int) -> EvidenceOut:
    """The matched passages in reading order, widened to their neighbours while the budget lasts."""
    chunks = {c.ordinal: c for c in Chunk.objects.filter(document=document).only("pk", "ordinal", "text")}
    wanted = list(dict.fromkeys(o for o in ordinals if o in chunks)) or sorted(chunks)[:1]
    picked, used = set(wanted), sum(len(chunks[o].text) for o in wanted)
    for step in (1, -1, 2, -2):
        for o in list(wanted):
            neighbour = chunks.get(o + step)
            if neighbour and neighbour.ordinal not in picked and used + len(neighbour.text) <= budget:
                picked.add(neighbour.ordinal)
                used += len(neighbour.text)
    parts, last = [], None
    for o in sorted(picked):
        parts.append(("" if last is None or o == last + 1 else "…\n") + chunks[o].text)
        last = o
    text = "\n".join(parts) or document.content
    return EvidenceOut(
        document_id=document.public_id, title=document.title, reference=document.source_url or document.public_id,
        external_url=document.source_url or None, excerpt=text[:budget], truncated=len(text) > budget,
        chunk_ids=[chunks[o].public_id for o in sorted(picked)], recorded_at=document.recorded_at,
        occurred_at=document.occurred_at,
    )  # fmt: skip


def _claims(actor: Actor, args: AskArgs, hits: list[Hit], graph_facts: list[Fact], vector: np.ndarray) -> list[Fact]:
    """Facts from the matched passages first, then the best fact matches, then the named entities' facts."""
    believed = graph.believed(graph.visible_facts(actor=actor), as_of=args.as_of)
    from_passages = list(
        believed.filter(chunk_id__in=[h.chunk_id for h in hits]).select_related("subject", "object", "document")
    )
    rank = {h.chunk_id: i for i, h in enumerate(hits)}
    from_passages.sort(key=lambda f: rank.get(f.chunk_id or 0, 99))
    matched = [s.fact for s in graph.search_facts(actor=actor, query=args.question, limit=args.max_claims,
                                                  as_of=args.as_of, vector=vector)]  # fmt: skip
    picked: dict[int, Fact] = {}
    for fact in [*from_passages[: args.max_claims // 2 + 1], *matched, *graph_facts, *from_passages]:
        picked.setdefault(fact.pk, fact)
    return list(picked.values())[: args.max_claims]


def _conflicts(actor: Actor, claims: list[Fact], as_of: date | None) -> list[Fact]:
    """Other statements about the same single-valued thing: replaced ones and rivals."""
    query = Q()
    for fact in claims:
        if not fact.single_valued or fact.subject_id is None:
            continue
        if fact.relation in HELD_BY_ONE and fact.object_id is not None:
            query |= Q(relation=fact.relation, object_id=fact.object_id)  # a role: who else held it
        else:
            query |= Q(subject_id=fact.subject_id, relation=fact.relation, value_key=fact.value_key)
    if not query:
        return []
    facts = graph.believed(graph.visible_facts(actor=actor), as_of=as_of, include_superseded=True)
    rivals = facts.filter(query).exclude(pk__in=[c.pk for c in claims]).select_related("subject", "object", "document")
    return list(rivals.order_by("-recorded_at")[:10])


def _warnings(hits: list[Hit], evidence: list[EvidenceOut], claims: list[Fact], conflicts: list[FactOut]) -> list[str]:
    warnings = []
    if len({e.document_id for e in evidence}) <= 1:
        warnings.append("All the evidence comes from a single source; confirm before relying on it.")
    if hits and max(h.scores.get("vector", 0.0) for h in hits) < 0.35:
        warnings.append("The closest passages are only loosely related to the question; the answer may not be here.")
    old = timezone.now() - timedelta(days=365)
    if evidence and all(e.recorded_at < old for e in evidence):
        warnings.append("All the evidence is more than a year old; it may be out of date.")
    if conflicts:
        warnings.append("Some statements about the same thing disagree or were replaced; say which one you use.")
    if any(c.superseded_at for c in claims):
        warnings.append("Some facts shown were superseded later; prefer the current ones.")
    return warnings
