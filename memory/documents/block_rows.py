"""A document's blocks kept in the database (``DocumentBlock``): written once by ingestion, in the
transaction that stores its passages, and read back by every later stage instead of parsing again."""

from __future__ import annotations

from collections.abc import Sequence

from memory.extraction import Block, Kind
from memory.models import DocumentBlock

# The fields only some kinds carry, kept in ``DocumentBlock.data`` when they are not empty.
_EXTRA = ("lead", "header", "cells", "subject", "speaker", "said")


def replace_blocks(document_id: int, blocks: Sequence[Block]) -> None:
    """Put ``blocks`` in place of the document's kept ones. Called inside the caller's transaction,
    so the blocks change with the passages and facts derived from the same reading."""
    DocumentBlock.objects.filter(document_id=document_id).delete()
    DocumentBlock.objects.bulk_create([_row(document_id, n, b) for n, b in enumerate(blocks)], batch_size=1000)


def load_blocks(document_id: int) -> list[Block]:
    """The document's kept blocks in order; empty when none were kept (a document ingested before
    blocks were kept, or one with no text)."""
    rows = DocumentBlock.objects.filter(document_id=document_id).order_by("position")
    return [_block(*row) for row in rows.values_list("kind", "text", "char_start", "char_end", "path", "data")]


def _row(document_id: int, position: int, block: Block) -> DocumentBlock:
    data: dict[str, object] = {}
    for name in _EXTRA:
        value = getattr(block, name)
        if value:
            data[name] = list(value) if isinstance(value, tuple) else value
    return DocumentBlock(
        document_id=document_id,
        position=position,
        kind=block.kind.value,
        text=block.text,
        char_start=block.start,
        char_end=block.end,
        path=list(block.path),
        data=data,
    )


def _block(kind: str, text: str, start: int, end: int, path: list[str], data: dict[str, object]) -> Block:
    def words(name: str) -> tuple[str, ...]:
        value = data.get(name) or ()
        return tuple(str(v) for v in value) if isinstance(value, list | tuple) else ()

    subject = data.get("subject", 0)
    return Block(
        Kind(kind),
        text,
        start,
        end,
        tuple(path),
        lead=str(data.get("lead", "")),
        header=words("header"),
        cells=words("cells"),
        subject=subject if isinstance(subject, int) else 0,
        speaker=str(data.get("speaker", "")),
        said=str(data.get("said", "")),
    )
