"""Ingestion of text built to trip it: whatever the endpoints accept becomes a ready document, quietly."""

from __future__ import annotations

import logging
from datetime import UTC, datetime

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory.tests.factories import save

pytestmark = pytest.mark.django_db

TRICKY = [
    "# " * 30 + "heading", "```\nunclosed fence", "| a | b |\n|---|---|\n| 1 | 2 |", "- " * 40 + "deep item",
    "**" * 50, "x" * 5000, "٣ ² 𝟗 Ⅻ", "on 0001-01-01 and 9999-12-31", "by 31 Dec 9999", "in 99999999 days",
    "end of Q4 9999", "next year", "$999999999999999999999999", "1e308 % of 10**400 people", "\u202e\u200b\ufeff",
    "\x01\x02\x1b[0m\x7f", "Priya Shah: hi\nPriya Shah: again", "<div>" * 60, "@@@ ### !!! ???", "\n" * 200,
]  # fmt: skip
EDGES = [None, datetime(1, 1, 1, tzinfo=UTC), datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC)]


class Errors(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.seen: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.seen.append(self.format(record))


@pytest.fixture
def errors():
    handler = Errors()
    logging.getLogger().addHandler(handler)
    yield handler.seen
    logging.getLogger().removeHandler(handler)


def test_storable_text_of_any_shape_is_ingested_to_ready_without_an_error_logged(actor, errors):
    pieces = st.one_of(st.sampled_from(TRICKY), st.text(st.characters(exclude_characters="\x00"), max_size=80))
    contents = st.lists(pieces, min_size=1, max_size=6).map(" ".join).filter(str.strip)

    @settings(max_examples=25, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck))
    @given(content=contents, kind=st.sampled_from(["text/plain", "text/markdown"]), occurred=st.sampled_from(EDGES))
    def check(content: str, kind: str, occurred: datetime | None) -> None:
        errors.clear()
        document = save(actor, "tricky", content, content_type=kind, occurred_at=occurred)
        assert document.status == "ready", document.error
        assert not errors, errors[0][:2000]

    check()
