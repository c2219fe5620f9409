"""REST endpoints for documents; search and retrieve run the MCP tools' code (brain.api.tools)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any, Literal

from drf_spectacular.utils import OpenApiParameter, extend_schema
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from brain.api.groups import REMEMBER
from brain.api.metering import metered
from brain.api.tools import ErrorBody
from brain.core.actors import Actor
from brain.core.errors import InvalidArgument, PermissionDenied
from brain.core.inputs import INT64_MAX, refuse_unstorable, whole_number
from brain.infra.ids import parse_numeric_id
from brain.mcp.limits import Moment, clamp, describe_validation_error
from brain.mcp.prices import KNOWLEDGE
from memory.documents import selectors as selectors
from memory.documents.saving import add_document
from memory.extraction import html_to_markdown
from memory.limits import FIELD_CHARS, MAX_DOCUMENT_CHARS
from memory.models import Document


class DocumentIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    title: str = Field(min_length=1, max_length=FIELD_CHARS["title"])
    content: str = Field(min_length=1, max_length=MAX_DOCUMENT_CHARS)
    content_type: Literal["text/plain", "text/markdown", "text/html"] = "text/plain"
    source_kind: str = Field("api", max_length=40, pattern=r"^[a-z][a-z0-9_-]*$")
    source_url: str = Field("", max_length=FIELD_CHARS["source_url"])
    external_id: str = Field("", max_length=FIELD_CHARS["external_id"])
    metadata: dict[str, Any] = Field(default_factory=dict)
    category: str | None = Field(None, max_length=64, description="Category slug (default: general)")
    scope: Literal["shared", "personal"] = "shared"
    occurred_at: Moment | None = None
    speaker: str = Field(
        "", max_length=FIELD_CHARS["speaker"], description="Who said it, when the document is one message or turn"
    )
    conversation: str = Field(
        "", max_length=FIELD_CHARS["conversation"], description="The conversation the message belongs to"
    )
    session: str = Field(
        "", max_length=FIELD_CHARS["session"], description="The sitting of that conversation (a day, a meeting)"
    )


class DocumentOut(BaseModel):
    document_id: str
    title: str
    status: str
    error: str
    source_kind: str
    source_url: str
    external_id: str
    category: str
    scope: str
    version: int
    chunk_count: int
    extraction: str = Field(
        "",
        description="Learning facts from the ready document: pending (to do or to retry), running, done, "
        "failed (given up; extraction_error says why), or empty when not extracted",
    )
    extraction_error: str = ""
    recorded_at: datetime
    occurred_at: datetime | None
    speaker: str = ""
    conversation: str = ""
    session: str = ""
    processed_at: datetime | None
    superseded_at: datetime | None
    created: bool | None = None
    unchanged: bool | None = Field(None, description="On saving: true when nothing new was stored.")
    duplicate_of: str | None = Field(
        None, description="On saving without external_id: the document already holding this title and content."
    )
    content: str | None = None

    @classmethod
    def of(cls, document: Document, *, content: bool = False, created: bool | None = None) -> DocumentOut:
        return cls(
            document_id=document.public_id,
            title=document.title,
            status=document.status,
            error=document.error,
            source_kind=document.source_kind,
            source_url=document.source_url,
            external_id=document.external_id,
            category=document.category.slug,
            scope=document.scope,
            version=document.version,
            chunk_count=document.chunk_count,
            extraction=document.extraction,
            extraction_error=document.extraction_error,
            recorded_at=document.recorded_at,
            occurred_at=document.occurred_at,
            speaker=document.speaker,
            conversation=document.conversation,
            session=document.session,
            processed_at=document.processed_at,
            superseded_at=document.superseded_at,
            created=created,
            content=document.content if content else None,
        )


class DocumentList(BaseModel):
    count: int
    results: list[DocumentOut]


def _actor(request: Request) -> Actor:
    return request._request.brain_actor  # type: ignore[attr-defined]


class DocumentsView(APIView):
    @extend_schema(
        operation_id="documents_create",
        summary="Save a document",
        description="Queues it for ingestion; with external_id, the same content is a no-op and changed content a "
        "new version. Without external_id, the same title and content saved again (same speaker, time and "
        "conversation, same audience) returns the document already there with duplicate_of set (status 200). "
        "HTML is converted to markdown.",
        request=DocumentIn,
        responses={201: DocumentOut, 200: DocumentOut, 400: ErrorBody, 403: ErrorBody, 413: ErrorBody},
        tags=[REMEMBER],
    )
    @metered("documents.create", billing=KNOWLEDGE)
    def post(self, request: Request) -> Response:
        data = request.data if isinstance(request.data, dict) else {}
        try:
            refuse_unstorable(data, what="documents")
            body = DocumentIn.model_validate(data)
        except ValidationError as exc:
            raise InvalidArgument(describe_validation_error("documents", exc)) from None
        actor = _actor(request)
        if not actor.can_write:
            raise PermissionDenied("Saving documents needs a token with the write scope.")
        values = body.model_dump()
        if body.content_type == "text/html":
            values["content"], values["content_type"] = html_to_markdown(body.content), "text/markdown"
        saved = add_document(actor=actor, **values)
        out = DocumentOut.of(saved.document, created=saved.created)
        out.unchanged, out.duplicate_of = not saved.created, saved.duplicate_of
        return Response(out.model_dump(mode="json"), status=201 if saved.created else 200)

    @extend_schema(
        operation_id="documents_list",
        summary="List documents, newest first",
        parameters=[
            OpenApiParameter("status", str, enum=[s.value for s in Document.Status]),
            OpenApiParameter("limit", int),
            OpenApiParameter("offset", int),
        ],
        responses={200: DocumentList},
        tags=[REMEMBER],
    )
    @metered("documents.list")
    def get(self, request: Request) -> Response:
        status = request.query_params.get("status") or None
        if status and status not in Document.Status.values:
            raise InvalidArgument(f"status must be one of {', '.join(Document.Status.values)}.")
        limit = clamp(_int(request.query_params, "limit", 50), 1, 200)
        offset = max(0, _int(request.query_params, "offset", 0))
        if offset > INT64_MAX:  # PostgreSQL's OFFSET is a bigint
            raise InvalidArgument(f"'offset' must be at most {INT64_MAX:,}, the largest 64-bit number.")
        documents = selectors.list_documents(actor=_actor(request), status=status).select_related("category")
        page = [DocumentOut.of(d) for d in documents[offset : min(offset + limit, INT64_MAX)]]
        return Response(DocumentList(count=documents.count(), results=page).model_dump(mode="json"))


class DocumentView(APIView):
    @extend_schema(
        operation_id="documents_get",
        summary="A document with its status and content",
        responses={200: DocumentOut, 404: ErrorBody},
        tags=[REMEMBER],
    )
    @metered("documents.get")
    def get(self, request: Request, document_id: str) -> Response:
        key = parse_numeric_id(document_id, "doc", bare=True)
        if key is None:
            raise InvalidArgument("Document ids look like doc_123.")
        document = selectors.get_document(actor=_actor(request), document_id=key)
        return Response(DocumentOut.of(document, content=True).model_dump(mode="json"))


def _int(params: Mapping[str, str], name: str, default: int) -> int:
    value = params.get(name)
    if value is None:
        return default
    number = whole_number(value)
    if number is None:
        raise InvalidArgument(f"'{name}' must be a whole number in ASCII digits, not {value[:40]!r}.")
    return number
