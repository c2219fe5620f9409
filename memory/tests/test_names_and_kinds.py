"""Names are names and kinds are right, through saving and ingestion: a page's table, its field
lines and its list items give no entities by their capitals; a benefit or a policy is no person;
software the text describes is a system; the organisation's own name is an organisation; an
attendee line and an issue's title are no facts."""

from __future__ import annotations

import pytest

from brain.core.actors import Actor
from brain.models import Organisation
from memory.models import Document, Fact, Mention
from memory.tests.factories import save

pytestmark = pytest.mark.django_db

HANDBOOK = """# Time off at the studio

## Who covers when

| Team member | Local hours | Pacific hours |
| --- | --- | --- |
| Oskar Lindqvist | 9am-5pm | 0am-8am |
| Wanjiru Kamau | 8am-4pm | 11pm-7am |

We list Pacific hours here because the support contracts are written in them.

**Policy Owner**: People Operations

**Effective Date**: 1 March 2026

Before you go:

- Submit your request in the leave planner two weeks ahead.
- Inform your manager before you book any travel.
- Ensure someone covers your support shifts while you are away.

Teammates who take Paid Leave keep their full salary. Temporary Disability Insurance covers absences
longer than four weeks, and Oskar Lindqvist answers questions about both.
"""

MINUTES = """# Build team meeting

## Present

* Ines Duarte @iduarte (voting member)
* Tobiah Marsh @tmarsh (voting member)

## Agenda

* Retire the old build farm #4512
* Split the release checklist #4519

## Notes

Ines Duarte will move the nightly builds to the new runners by the end of the month.
"""


def kinds_of(document: Document) -> dict[str, str]:
    """Each name the document was read to mention, with the kind it gave."""
    mentions = Mention.objects.filter(document=document).select_related("entity")
    return {m.surface: m.type or m.entity.type for m in mentions}


def statements_of(document: Document) -> list[str]:
    return list(Fact.objects.filter(document=document).values_list("statement", flat=True))


def test_a_table_field_lines_and_list_items_give_no_names_by_their_capitals(actor: Actor) -> None:
    page = save(actor, "Time off", HANDBOOK, content_type="text/markdown", source_kind="wiki")
    kinds = kinds_of(page)
    words = {"Team member", "Local hours", "Pacific hours", "Policy Owner", "Effective Date", "Submit", "Inform"}
    words |= {"Ensure", "Teammates", "Before"}
    assert not words & set(kinds), kinds
    assert kinds.get("Oskar Lindqvist") == "person"
    assert kinds.get("Wanjiru Kamau") == "person"


def test_a_benefit_or_a_policy_is_never_a_person(actor: Actor) -> None:
    page = save(actor, "Time off", HANDBOOK, content_type="text/markdown", source_kind="wiki")
    kinds = kinds_of(page)
    for benefit in ("Paid Leave", "Temporary Disability Insurance"):
        assert kinds.get(benefit, "term") == "term", kinds


def test_software_the_text_describes_is_a_system(actor: Actor) -> None:
    note = save(
        actor,
        "Invoicing",
        "Invoices are raised in our billing system, Queenbee, on the first working day of each month. "
        "Queenbee sends a reminder to every customer after fourteen days.",
    )
    assert kinds_of(note).get("Queenbee") == "system"


def test_the_organisations_own_name_is_an_organisation(org: Organisation, actor: Actor) -> None:
    Organisation.objects.filter(pk=org.pk).update(name="Tallowmere")
    actor.org.refresh_from_db()
    note = save(actor, "Travel", "Tallowmere reimburses train travel for every trip longer than two hundred miles.")
    assert kinds_of(note).get("Tallowmere") == "organisation"
    page = save(actor, "Pay", "At Harrowgate, we publish every salary band on the careers page each January.")
    assert kinds_of(page).get("Harrowgate") == "organisation"


def test_attendee_lines_and_listed_titles_are_no_facts(actor: Actor) -> None:
    minutes = save(actor, "Build team", MINUTES, content_type="text/markdown", source_kind="upload")
    statements = statements_of(minutes)
    assert not [s for s in statements if "@iduarte" in s or "#4512" in s or "#4519" in s], statements
    assert any(s.startswith("Ines Duarte will move the nightly builds") for s in statements), statements
    kinds = kinds_of(minutes)
    assert kinds.get("Ines Duarte") == "person"
    assert not any("@" in name for name in kinds), kinds


def test_a_rule_about_a_thing_named_by_a_noun_is_a_fact_though_it_names_nobody(actor: Actor) -> None:
    page = save(
        actor,
        "Cover",
        "An engineer who is going to be away is responsible for finding someone to cover their rota.",
        content_type="text/markdown",
        source_kind="wiki",
    )
    assert any(s.startswith("An engineer who is going to be away") for s in statements_of(page))
