"""Names a table's header types, through saving and ingestion: the people under "Team member" or
"Approved by" are people, even one the model would not call a person and one it never found; the
tools under "Source/platform" are software; a cell that is no name ("Engineering teams", "Yes") is no
entity, and a header that says nothing ("Description") types nothing. And a person the model finds
without their first name ("Haddad" in "Teodor Haddad will ...") keeps it."""

from __future__ import annotations

import pytest

from brain.core.actors import Actor
from memory.extraction import record_names
from memory.models import Document, Mention
from memory.tests.factories import save

pytestmark = pytest.mark.django_db

ROTA = """# Support rota

| Team member | Local hours | UTC hours |
| --- | --- | --- |
| Oskar | 9am-5pm | 08:00-16:00 |
| Wanjiru & Tamsin | 8am-4pm | 05:00-13:00 |

## Document control

| Version | Date | Author | Approved by |
| --- | --- | --- | --- |
| 1.0 | 12-Mar-2025 | Ilse Brandt | Koji Ahn |

## Where data is kept

| Source/platform | How long it is kept | Who has access? |
| --- | --- | --- |
| Grafterly | 90 days | Engineering teams |
| Pub/Sub | Retain indefinitely | All teammates |
"""


def kinds_of(document: Document) -> dict[str, str]:
    mentions = Mention.objects.filter(document=document).select_related("entity")
    return {m.surface: m.type or m.entity.type for m in mentions}


def test_the_people_a_header_names_are_people_and_its_tools_software(actor: Actor) -> None:
    kinds = kinds_of(save(actor, "Support rota", ROTA, content_type="text/markdown", source_kind="wiki"))
    for person in ("Oskar", "Wanjiru", "Tamsin", "Ilse Brandt", "Koji Ahn"):
        assert kinds.get(person) == "person", (person, kinds)
    assert kinds.get("Grafterly") == "system", kinds
    assert kinds.get("Pub/Sub") in (None, "system"), kinds  # one name, never "Pub" and "Sub"
    assert not {"Pub", "Sub", "Engineering teams", "All teammates"} & set(kinds), str(sorted(kinds.items()))
    assert kinds.get("Wanjiru & Tamsin") != "organisation"  # the row's record is about both; no company
    assert kinds.get("UTC") == "term"  # a time zone, which the model calls a company
    assert kinds.get("Engineering") in (None, "team"), kinds  # "Engineering teams" is no company


def kind_under(header: str) -> str | None:
    found = record_names((header,), ("Dagny Holm",), frozenset())
    return found[0][2] if found else None


def test_a_header_types_its_column_by_its_last_word_and_each_part_must_agree() -> None:
    assert kind_under("Team member") == "person"
    assert kind_under("**Approved by**") == "person"
    assert kind_under("Author/Reviewer") == "person"
    assert kind_under("Source/platform") == "system"
    assert kind_under("Vendor") == "organisation"
    assert kind_under("Owner/Team") is None  # two kinds: neither is believed
    assert kind_under("Description") is None
    assert kind_under("Name") is None  # a name of what, it does not say


def test_a_cell_is_a_name_only_whole_and_never_a_word_the_page_writes_in_lower_case() -> None:
    lower = frozenset({"engineering", "yes", "security"})
    header = ("Team", "Owner", "Notes")
    assert record_names(header, ("Security", "Yes", "Sorted by Priya"), lower) == []
    assert record_names(header, ("Platform Guild", "Priya Raman and Tom", "x"), lower) == [
        ("Platform Guild", ["Platform Guild"], "team"),
        ("Priya Raman and Tom", ["Priya Raman", "Tom"], "person"),
    ]
    assert record_names(("Owner",), ("the finance lead",), lower) == []


def test_a_person_found_without_their_first_name_keeps_it(actor: Actor) -> None:
    note = "Teodor Haddad will open the issue after the release.\n\nOn Monday Haddad said yes again."
    kinds = kinds_of(save(actor, "Release notes", note, source_kind="upload"))
    assert kinds.get("Teodor Haddad") == "person", str(sorted(kinds.items()))
    assert "Monday Haddad" not in kinds  # a day is no first name
