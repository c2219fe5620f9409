"""Names written in lower case and people known by one word, through saving and ingestion: software
its makers write in lower case, used as a name, is a product; a word opening a line before a colon is a label, not
software; whoever a chat message answers is a person, as is a handle memory knows as one and the
subject of what people do; a one-word name the model calls a place but that comes back is a person.
The words of a change's title ("ci: ...") and a lead-in said again before each of its items are no
evidence of a name."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from brain.core.actors import Actor
from memory.models import Document, Mention
from memory.tests.factories import said, save

pytestmark = pytest.mark.django_db

NOTE = """Since the spring we keep the team's mail in quillpad. quillpad indexes every message within a
minute, and the older archives came over with it.

* zarvok: drop the legacy importer
* Tabled until next week
"""

MINUTES = """# Weekly sync

- tobwen mentions that the importer is green again.
- Release is on hold until Matteo comes back from leave.
"""

CHANGES = """# Release notes

- ci: cfg now loads from settings.json
- docs: say that the cfg loader reads the file once
- The team offsite is in Lisbon this year.
- We listed some wibbler areas for discussion:
  - faster search in the archive
  - fewer pages in the handbook
  - a shorter welcome mail
"""


def kinds_of(document: Document) -> dict[str, str]:
    mentions = Mention.objects.filter(document=document).select_related("entity")
    return {m.surface: m.type or m.entity.type for m in mentions}


def test_software_written_in_lower_case_is_a_product(actor: Actor) -> None:
    kinds = kinds_of(save(actor, "Mail", NOTE, content_type="text/markdown", source_kind="wiki"))
    assert kinds.get("quillpad") == "product", kinds  # the subject of a verb, and written twice
    assert "zarvok" not in kinds, kinds  # a label before its colon
    assert not [name for name in kinds if name in ("spring", "message", "archives", "legacy", "importer")]


def test_whoever_a_chat_message_answers_is_a_person(actor: Actor) -> None:
    at = datetime(2026, 4, 28, 9, 0, tzinfo=UTC)
    said(actor, "tobwen", "has anyone moved their archive to quillpad yet?", at, source_kind="chat")
    answer = said(actor, "marwick", "tobwen: yes, quillpad works fine for me", at, source_kind="chat")
    kinds = kinds_of(answer)
    assert kinds.get("tobwen") == "person", kinds
    assert kinds.get("quillpad") == "product", kinds  # known from the question, the subject here
    again = said(actor, "ilsabet", "since tobwen asked: it took me an hour", at, source_kind="chat")
    assert kinds_of(again).get("tobwen") == "person"  # a handle memory knows as a person stays one


def test_the_subject_of_what_people_do_is_a_person(actor: Actor) -> None:
    kinds = kinds_of(save(actor, "Tooling sync", MINUTES, content_type="text/markdown", source_kind="upload"))
    assert kinds.get("tobwen") == "person", kinds
    assert kinds.get("Matteo") == "person", kinds  # the model calls him a place; no place comes back


def test_a_change_title_a_repeated_lead_in_and_a_noun_after_its_article_give_no_names(actor: Actor) -> None:
    kinds = kinds_of(save(actor, "Release notes", CHANGES, content_type="text/markdown", source_kind="wiki"))
    assert "cfg" not in kinds, kinds  # "ci: ..." titles a change, in lower case throughout
    assert "wibbler" not in kinds, kinds  # once in the text, though said again before each item
    assert "offsite" not in kinds, kinds  # a noun after its article, though the subject of a verb


def test_a_name_written_in_lower_case_once_is_known_so_whichever_form_memory_shows_it_by(actor: Actor) -> None:
    # Memory knows "quillpad" written three ways; which form it shows the entity by is chosen among
    # equally full ones, so a later message in lower case must link whichever that is (it did not
    # when "QUILLPAD" or "Quillpad" was chosen, and the choice hung on the order rows came back in).
    at = datetime(2026, 4, 28, 9, 0, tzinfo=UTC)
    said(actor, "tobwen", "quillpad indexes every message in a minute, quillpad is fast", at, source_kind="chat")
    said(actor, "marwick", "Quillpad crashed on my archive this morning", at, source_kind="chat")
    said(actor, "ilsabet", "QUILLPAD 2 is out, by the way", at, source_kind="chat")
    later = said(actor, "tobwen", "what's the release date for quillpad?", at, source_kind="chat")
    assert "quillpad" in kinds_of(later)
