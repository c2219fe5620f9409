"""Memory tools: save knowledge, search passages, retrieve pages."""

from __future__ import annotations

from datetime import date, datetime
from typing import Annotated, Any, Literal

from django.utils import translation
from django.utils.translation import gettext, gettext_noop
from pydantic import BaseModel, ConfigDict, Field, field_validator

from brain.core.actors import Actor
from brain.core.errors import InvalidArgument
from brain.core.services import record_miss
from brain.infra.ids import format_id, parse_numeric_id
from brain.mcp.limits import Clamped, Moment
from brain.mcp.registry import ToolOutput, mcp_tool
from memory.documents import selectors as selectors
from memory.documents.saving import add_document
from memory.documents.stewardship import stale_among
from memory.limits import FIELD_CHARS, MAX_DOCUMENT_CHARS, metadata_problem
from memory.mcp_tools.shapes import STALE_HELP, stale_words
from memory.models import Document
from memory.search.filters import SearchFilters, category_named
from memory.search.passages import search_chunks
from memory.search.snippets import SNIPPET_CHARS, best_part, query_terms

# --- add_company_knowledge ----------------------------------------------------------------


class AddKnowledgeArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    title: str = Field(
        min_length=1,
        max_length=FIELD_CHARS["title"],
        description=f"A clear title (up to {FIELD_CHARS['title']} characters).",
    )
    content: str = Field(
        min_length=1,
        max_length=MAX_DOCUMENT_CHARS,
        description=f"The knowledge itself (up to {MAX_DOCUMENT_CHARS:,} characters; split a longer text).",
    )
    content_type: Literal["text/plain", "text/markdown"] = "text/plain"
    source_url: str = Field(
        "", max_length=FIELD_CHARS["source_url"], description="Where it comes from, if it has a URL."
    )
    external_id: str = Field(
        "",
        max_length=FIELD_CHARS["external_id"],
        description="Your stable id for it: re-sending the same id updates it, same content is a no-op.",
    )
    metadata: dict[str, Any] = Field(default_factory=dict, description="Any extra fields, kept with the document.")
    # One message of a chat or one turn of a meeting: who said it and when make it findable by
    # "what did Priya say in May". The same fields, limits and meaning as the REST API's.
    speaker: str = Field(
        "", max_length=FIELD_CHARS["speaker"], description="Who said or wrote it, when it is one message or turn."
    )
    occurred_at: Moment | None = Field(
        None, description="When it was said or happened (ISO 8601; without a zone it is UTC)."
    )
    conversation: str = Field(
        "", max_length=FIELD_CHARS["conversation"], description="The chat, channel or meeting series it belongs to."
    )
    session: str = Field(
        "", max_length=FIELD_CHARS["session"], description="The sitting of that conversation (a day, a meeting)."
    )

    @field_validator("metadata")
    @classmethod
    def _small_metadata(cls, value: dict[str, Any]) -> dict[str, Any]:
        if problem := metadata_problem(value):
            raise ValueError(problem)
        return value


class AddKnowledgeOut(ToolOutput):
    message: str
    detail: str
    title: str
    unchanged: bool = Field(False, description="True when nothing new was stored: it was in memory already.")
    duplicate_of: str | None = Field(None, description="The document it repeats, when saved before without an id.")

    def to_text(self) -> str:
        return f"{self.message} {self.detail}\n{self.title}"


ALREADY = gettext_noop("It was in memory already, so nothing new was stored.")
IN_TRASH = gettext_noop(
    "A document saved under this external_id is in the trash, so nothing was stored: restore it "
    "from the Trash page first if this version should be kept."
)
SOON = gettext_noop("This information will be available in a few minutes.")
WAITING = gettext_noop(
    "It is saved but waiting: this organisation's usage has run out or its ingestion is paused, so it "
    "becomes searchable once an admin adds credits or resumes ingestion, or the free reads renew."
)


@mcp_tool(
    "add_company_knowledge",
    title="Add Company Knowledge",
    args=AddKnowledgeArgs,
    output=AddKnowledgeOut,
    scope="write",
    idempotent=True,
    billing="knowledge",
    writes="shared",  # no scope argument: the document is the organisation's
)
def add_company_knowledge_tool(actor: Actor, args: AddKnowledgeArgs) -> AddKnowledgeOut:
    """Save a durable company fact or note into Brain's memory. Use it only when the user asks
    for it, confirms it or approves the write; never for chat, drafts, guesses, temporary
    preferences or sensitive personal data unless the user says it is company memory. Title up to
    240 characters and content up to 2,000,000 (longer is refused, not cut); content_type
    text/plain or text/markdown. To keep what someone said in a meeting or a channel (one message
    or turn), also give speaker, occurred_at and conversation: it is then found by who said it and
    when. With external_id, sending the same content again changes nothing and changed content
    replaces the earlier version; without one, the same title and content saved again is not stored
    twice (the answer says it was already there). The answer is a fixed confirmation with the
    saved title: relay it without ids or backend details. It becomes searchable within minutes, or
    waits (and the confirmation says so) while the organisation's usage has run out or its
    ingestion is paused."""
    saved = add_document(
        actor=actor,
        title=args.title,
        content=args.content,
        content_type=args.content_type,
        source_kind="mcp",
        source_url=args.source_url,
        external_id=args.external_id,
        metadata=args.metadata,
        occurred_at=args.occurred_at,
        speaker=args.speaker,
        conversation=args.conversation,
        session=args.session,
    )
    with translation.override(actor.org.language):
        waiting = saved.document.status == Document.Status.WAITING
        return AddKnowledgeOut(
            message=gettext("Done."),
            detail=gettext(
                IN_TRASH if saved.in_trash else ALREADY if not saved.created else WAITING if waiting else SOON
            ),
            title=args.title,
            unchanged=not saved.created,
            duplicate_of=saved.duplicate_of,
        )


# --- search_company_memory ----------------------------------------------------------------


class SearchArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    query: str = Field(min_length=1, max_length=2000, description="What to look for, in plain words.")
    top_k: Annotated[int, Clamped(1, 20)] = Field(5, description="How many passages, 1 to 20 (default 5).")
    retrieval_mode: Literal["auto", "vector", "keyword"] = Field(
        "auto", description="auto (meaning and words together) unless you are investigating a search."
    )
    activity_id: str | None = Field(None, max_length=80, description="The activity this search belongs to.")
    include_diagnostics: bool = Field(False, description="Per-retriever ranks, scores and timings; for debugging.")
    as_of: date | None = Field(None, description="Search memory as it stood at the end of this day (YYYY-MM-DD).")
    as_of_by: Literal["said", "learned"] = Field(
        "said",
        description="How as_of reads: said (default), what the sources had said by then, dated by their own "
        "dates; learned, what Brain had taken in by then.",
    )
    source_kind: str | None = Field(
        None,
        max_length=40,
        description="Only passages from this kind of source (upload, email, chat, wiki, connector, mcp...).",
    )
    said_by: str | None = Field(None, max_length=200, description="Only what this person said (a speaker's name).")
    category: str | None = Field(None, max_length=200, description="Only this category, by its name.")
    after: date | None = Field(None, description="Only passages dated on or after this day (YYYY-MM-DD).")
    before: date | None = Field(None, description="Only passages dated on or before this day (YYYY-MM-DD).")


def search_filters(actor: Actor, args: SearchArgs) -> SearchFilters | None:
    """The arguments' filters, checked: a category by a name the caller can see, days in order."""
    if args.after and args.before and args.after > args.before:
        raise InvalidArgument(f"after ({args.after}) is later than before ({args.before}); swap them or drop one.")
    category = category_named(actor=actor, name=args.category) if args.category else None
    filters = SearchFilters(
        source_kind=args.source_kind or None,
        speaker=args.said_by or None,
        category=category,
        said_after=args.after,
        said_before=args.before,
    )
    return filters or None


class SearchHitOut(BaseModel):
    chunk_id: str
    document_id: str
    title: str
    external_url: str | None
    snippet: str
    retrievable: bool
    speaker: str | None = Field(None, description="Who said it, when the passage is a message or a turn.")
    said_at: datetime | None = Field(None, description="When it was said or written, if known.")
    more_in_document: int = Field(
        0, description="How many more of this document's passages matched; retrieve the document to read them."
    )
    also_in: list[str] = Field(
        default_factory=list, description="Other documents saying the same (a copy, a forward), folded into this hit."
    )
    stale_since: date | None = Field(None, description=STALE_HELP.format(what="the document"))
    diagnostics: dict[str, Any] | None = None


class SearchOut(ToolOutput):
    hits: list[SearchHitOut]
    count: int
    activity_id: str | None = None
    diagnostics: dict[str, Any] | None = None

    def to_text(self) -> str:
        if not self.hits:
            return "No matching passages. Say that Brain has nothing on this rather than guessing."
        lines = [f"{self.count} passages:"]
        for hit in self.hits:
            who = ", ".join(part for part in (hit.speaker, hit.said_at and f"{hit.said_at:%Y-%m-%d %H:%M}") if part)
            more = f" [{hit.more_in_document} more in this document]" if hit.more_in_document else ""
            more += f" [the same in {', '.join(hit.also_in)}]" if hit.also_in else ""
            more += f" [{stale_words(hit.stale_since)}]" if hit.stale_since else ""
            lines.append(
                f"- [{hit.chunk_id} in {hit.document_id}] {hit.title}{f' ({who})' if who else ''}: {hit.snippet}{more}"
            )
        return "\n".join(lines)


def snippet(text: str, query: str = "", limit: int = SNIPPET_CHARS) -> str:
    """What to show of a passage: the sentences or rows that match the query best, whole words only."""
    return best_part(text, query_terms(query), limit)


@mcp_tool("search_company_memory", title="Search Company Memory", args=SearchArgs, output=SearchOut, idempotent=True)
def search_company_memory_tool(actor: Actor, args: SearchArgs) -> SearchOut:
    """A lighter search than ask_company_memory: returns candidate passages with a short snippet,
    each with its chunk_id and document_id, not full evidence. Use it as a fallback when
    ask_company_memory missed something, then fetch the passages or pages that matter with
    retrieve_company_memory. top_k is 1 to 20 (default 5; values outside are moved to the nearest
    bound). Pass the activity_id of the question it serves. as_of searches memory as it stood at
    the end of that day: by default what the sources had said by then (as_of_by said: a mail of
    2025 imported later is found as of its own date), or what Brain had taken in by then (as_of_by
    learned). source_kind, said_by, category (a name), after and before (days, both included, in
    the organisation's time zone) narrow the search itself, so the best passages that match are
    returned, not a cut of an unfiltered list; an unknown category is refused with the names you
    can use. Only what the caller may see is searched. A hit that is a chat message or a
    transcript turn names its speaker and when it was said; a question that names a person or a
    time ("what did Priya say in May?", "... before the launch?") favours what that person said
    then. Each document appears once, with its best passage and how many more of its passages
    matched. The list ends where the evidence ends: passages no nearer the question than unrelated
    text, or far less near than the best, are left out, so fewer than top_k is normal. A hit whose
    document is past its review date has stale_since (the day its review fell due): say the source
    may be out of date."""
    result = search_chunks(
        actor=actor,
        query=args.query,
        top_k=args.top_k,
        mode=args.retrieval_mode,
        as_of=args.as_of,
        as_of_by=args.as_of_by,
        per_document=True,
        floor=True,
        filters=search_filters(actor, args),
    )
    stale = stale_among(actor=actor, found=[hit.document_id for hit in result.hits])  # hits under the access rule
    hits = [
        SearchHitOut(
            chunk_id=format_id("chunk", hit.chunk_id),
            document_id=format_id("doc", hit.document_id),
            title=hit.title,
            external_url=hit.source_url or None,
            snippet=snippet(hit.text, args.query),
            retrievable=True,
            speaker=hit.speaker or None,
            said_at=hit.said_at,
            more_in_document=hit.more,
            also_in=[format_id("doc", d) for d in hit.copies],
            stale_since=stale.get(hit.document_id),
            diagnostics={"score": hit.score, "ranks": hit.ranks, "scores": hit.scores, "heading": hit.heading}
            if args.include_diagnostics
            else None,
        )
        for hit in result.hits
    ]
    if not hits:
        record_miss(actor=actor, tool="search_company_memory", question=args.query)
    diagnostics = (
        {"mode": result.mode, "timings_ms": result.timings_ms, "candidates": result.candidates}
        if args.include_diagnostics
        else None
    )
    return SearchOut(hits=hits, count=len(hits), activity_id=args.activity_id, diagnostics=diagnostics)


# --- retrieve_company_memory --------------------------------------------------------------


class RetrieveArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    document_ids: list[str | int] = Field(default_factory=list, description="Page ids (doc_...) from a search.")
    chunk_ids: list[str | int] = Field(default_factory=list, description="Passage ids (chunk_...) from a search.")
    max_chars_per_document: Annotated[int, Clamped(1000, 50_000)] = Field(
        12_000, description="Characters per page, 1,000 to 50,000 (default 12,000)."
    )
    activity_id: str | None = Field(None, max_length=80, description="The activity this belongs to.")
    include_diagnostics: bool = Field(False, description="Backend detail per page; also allows up to 20 ids.")


class PageOut(BaseModel):
    document_id: str
    title: str
    external_url: str | None
    content: str
    truncated: bool
    chunk_ids: list[str]
    diagnostics: dict[str, Any] | None = None


class RetrieveOut(ToolOutput):
    pages: list[PageOut]
    missing: list[str] = Field(default_factory=list, description="Ids not found or not visible to the caller.")
    activity_id: str | None = None

    def to_text(self) -> str:
        parts = []
        for page in self.pages:
            cut = " (cut short)" if page.truncated else ""
            parts.append(f"## {page.title} [{page.document_id}]{cut}\n{page.content}")
        if self.missing:
            parts.append("Not found: " + ", ".join(self.missing))
        return "\n\n".join(parts) or "Nothing found for those ids."


def _unique_ids(values: list[str | int]) -> list[str]:
    return list(dict.fromkeys(str(v).strip() for v in values if str(v).strip()))


@mcp_tool(
    "retrieve_company_memory",
    title="Retrieve Company Memory Evidence",
    args=RetrieveArgs,
    output=RetrieveOut,
    idempotent=True,
)
def retrieve_company_memory_tool(actor: Actor, args: RetrieveArgs) -> RetrieveOut:
    """Fetch the full text of the pages (document_ids) or passages (chunk_ids) you picked from a
    search. Up to 3 unique ids in total (20 with include_diagnostics); blank ids are dropped and
    repeats count once. max_chars_per_document is 1,000 to 50,000 (default 12,000); a page longer
    than that is cut and marked truncated. Ids that do not exist or that the caller may not see
    are listed as missing."""
    doc_refs, chunk_refs = _unique_ids(args.document_ids), _unique_ids(args.chunk_ids)
    limit = 20 if args.include_diagnostics else 3
    if len(doc_refs) + len(chunk_refs) > limit:
        raise InvalidArgument(f"Provide at most {limit} unique document or chunk ids.")
    if not doc_refs and not chunk_refs:
        raise InvalidArgument("Provide at least one document or chunk id from a search.")
    doc_keys = {ref: parse_numeric_id(ref, "doc", bare=True) for ref in doc_refs}
    chunk_keys = {ref: parse_numeric_id(ref, "chunk", bare=True) for ref in chunk_refs}
    documents = selectors.visible_documents(actor=actor, ids=[k for k in doc_keys.values() if k])
    chunks = selectors.visible_chunks(actor=actor, ids=[k for k in chunk_keys.values() if k])
    missing = [r for r, k in doc_keys.items() if k not in documents] + [
        r for r, k in chunk_keys.items() if k not in chunks
    ]
    # Pages come in the order the ids were given (passages grouped by their document, in the order
    # each document was first named), never in the database's order of the rows.
    asked = list(dict.fromkeys(k for k in doc_keys.values() if k in documents))
    pages = [_document_page(documents[k], args.max_chars_per_document, args.include_diagnostics) for k in asked]
    by_document: dict[int, list[Any]] = {}
    for key in dict.fromkeys(k for k in chunk_keys.values() if k in chunks):
        by_document.setdefault(chunks[key].document_id, []).append(chunks[key])
    for passages in by_document.values():
        passages.sort(key=lambda c: c.ordinal)
        pages.append(_passage_page(passages, args.max_chars_per_document, args.include_diagnostics))
    return RetrieveOut(pages=pages, missing=missing, activity_id=args.activity_id)


def _document_page(document: Any, limit: int, diagnostics: bool) -> PageOut:
    content = document.content
    return PageOut(
        document_id=document.public_id,
        title=document.title,
        external_url=document.source_url or None,
        content=content[:limit],
        truncated=len(content) > limit,
        chunk_ids=[format_id("chunk", pk) for pk in selectors.chunk_ids_within(document=document, chars=limit)],
        diagnostics={"status": document.status, "version": document.version, "chars": len(content)}
        if diagnostics
        else None,
    )


def _passage_page(passages: list[Any], limit: int, diagnostics: bool) -> PageOut:
    document = passages[0].document
    content = "\n\n…\n\n".join(p.text for p in passages)
    return PageOut(
        document_id=document.public_id,
        title=document.title,
        external_url=document.source_url or None,
        content=content[:limit],
        truncated=len(content) > limit,
        chunk_ids=[p.public_id for p in passages],
        diagnostics={"ordinals": [p.ordinal for p in passages], "heading": passages[0].heading}
        if diagnostics
        else None,
    )
