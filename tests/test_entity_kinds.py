"""What kind of thing a name is, through saving and ingestion: places and software are not people,
role words give customers, suppliers, teams and projects, and a person's choice is never undone."""

from __future__ import annotations

import pytest

from conftest import make_actor, make_org, make_token, make_user
from memory.documents.ingestion import ingest_documents
from memory.documents.saving import add_document
from memory.graph.fixes import change_entity_type
from memory.models import Entity, Mention
from tests.conftest import call

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def writer():
    org = make_org()
    issued = make_token(org, make_user(org, role="admin"))
    return org, issued.plaintext, make_actor(org, issued.token.user)


def save(actor, title, text):
    saved = add_document(actor=actor, title=title, content=text)
    ingest_documents(document_ids=[saved.document.pk])
    return saved.document


def kinds_in(document) -> dict[str, str]:
    return {m.surface: m.type for m in Mention.objects.filter(document=document)}


def test_a_city_is_a_place_and_a_framework_is_software_not_a_person(writer):
    _, _, actor = writer
    document = save(actor, "Trip notes", "Jonas Weber flew to Rotterdam on Monday. The checkout runs on Django.")
    kinds = kinds_in(document)
    assert kinds["Rotterdam"] == "place"
    assert kinds["Django"] in ("system", "product")
    assert "person" not in {kinds["Rotterdam"], kinds["Django"]}


def test_our_customer_is_a_customer_and_lookup_values_finds_it_by_that_kind(brain_url, writer):
    _, token, actor = writer
    document = save(actor, "Renewal", "Our customer Northwind signed the renewal for $48,000 a year.")
    assert kinds_in(document)["Northwind"] == "customer"
    keys = call(brain_url, token, "lookup_values", {}).structured_content["keys"]
    assert keys, "the renewal's amount is a value"
    found = call(brain_url, token, "lookup_values", {"key": keys[0]["key"], "entity_type": "customer"})
    assert not found.is_error
    assert [v["number"] for v in found.structured_content["values"]] == [48000.0]


def test_a_kind_guessed_once_gives_way_when_a_later_document_names_the_role(writer):
    _, _, actor = writer
    first = save(actor, "Call", "Brightwater Mills called about the delivery.")
    guessed = Entity.objects.get(name="Brightwater Mills")
    assert guessed.type != "customer"
    second = save(actor, "Accounts", "Our customer Brightwater Mills asked for a discount on the next order.")
    assert kinds_in(second)["Brightwater Mills"] == "customer"
    assert Entity.objects.get(pk=guessed.pk).type == "customer"
    third = save(actor, "Follow-up", "Brightwater Mills confirmed the order on Friday.")
    assert kinds_in(third)["Brightwater Mills"] == "customer"
    assert first.pk != third.pk


def test_a_kind_a_person_chose_is_never_changed_by_extraction(writer):
    _, _, actor = writer
    save(actor, "Intro", "Okapi Print sent the proofs for the brochure.")
    entity = Entity.objects.get(name="Okapi Print")
    change_entity_type(actor=actor, entity_id=entity.pk, type="deal")
    later = save(actor, "Accounts", "Our customer Okapi Print asked for a second quote.")
    entity.refresh_from_db()
    assert (entity.type, entity.type_fixed) == ("deal", True)
    assert kinds_in(later)["Okapi Print"] == "deal"


def test_a_company_or_product_named_like_a_person_is_not_one_and_a_mails_people_are(writer):
    """The small model calls "Brightline Logistics" and "Kestrel Ledger" people; the word a name ends
    with says better. A mail's sender and recipients, and a meeting's attendees, are people of it."""
    _, _, actor = writer
    mail = save(
        actor,
        "Re: exports",
        "From: Priya Shah <priya.shah@kestrel.example>\n"
        "To: Jonas Weber <jonas.weber@kestrel.example>, Support <help@kestrel.example>\n"
        "Date: Wed, 26 Nov 2025 11:40:00 +0000\n\n"
        "Brightline Logistics lost access to Kestrel Ledger for an hour yesterday.\n",
    )
    kinds = kinds_in(mail)
    assert (kinds["Brightline Logistics"], kinds["Kestrel Ledger"]) == ("organisation", "product")
    assert (kinds["Priya Shah"], kinds["Jonas Weber"]) == ("person", "person")
    assert "Support" not in kinds  # a shared mailbox is nobody
    notes = save(
        actor,
        "Sales pipeline review 20 Nov 2025",
        "Attendees: Marta Ruiz, Tom Becker\n\nHalvorsen Foods: upsell of 40 seats discussed for 2026.\n",
    )
    kinds = kinds_in(notes)
    assert (kinds["Marta Ruiz"], kinds["Tom Becker"]) == ("person", "person")
    assert kinds["Halvorsen Foods"] == "organisation"  # a topic heading its line, not a speaker


def test_a_name_people_shorten_links_to_what_memory_knows(writer):
    """Once memory knows Project Heron, Halvorsen Foods and Kestrel Ledger, "Heron", "Halvorsen" and
    "Ledger" in a chat line are those things, with their kinds, even where the model sees no name."""
    _, _, actor = writer
    save(
        actor,
        "Project Heron steering",
        "Project Heron ships invoicing for Portugal. Our customer Halvorsen "
        "Foods renewed Kestrel Ledger for two years.",
    )
    chat = save(
        actor,
        "#heron",
        "Heron public beta confirmed for 15 January. QBR with Halvorsen is the 11th, "
        "and Heron reuses the PDF renderer from Ledger.",
    )
    named = {m.surface: (m.entity.name, m.type) for m in Mention.objects.filter(document=chat).select_related("entity")}
    assert named["Heron"] == ("Project Heron", "project")
    assert named["Halvorsen"] == ("Halvorsen Foods", "customer")
    assert named["Ledger"] == ("Kestrel Ledger", "product")


def test_a_short_form_two_things_share_links_to_neither(writer):
    _, _, actor = writer
    save(actor, "Suppliers", "Our supplier Okapi Print sends the boxes. Okapi Logistics delivers them.")
    chat = save(actor, "#ops", "Okapi called about Tuesday's delivery.")
    linked = {m.entity.name for m in Mention.objects.filter(document=chat).select_related("entity")}
    assert not linked & {"Okapi Print", "Okapi Logistics"}


def test_speakers_and_people_led_by_name_are_people_and_set_right_an_early_wrong_guess(writer):
    """The small model calls "Marta Ruiz" a place on a wiki page; "led by" says she is a person, and so
    does a later chat message she sends, which puts the entity right for every reader."""
    _, _, actor = writer
    wiki = save(
        actor,
        "Teams and owners",
        "Sales: led by Marta Ruiz; Tom Becker handles renewals.\nFinance: Inés Moreno is controller.\n",
    )
    assert kinds_in(wiki)["Marta Ruiz"] == "person"
    entity = Entity.objects.get(name="Marta Ruiz")
    Entity.objects.filter(pk=entity.pk).update(type="place")  # as an older, worse reading left it
    Mention.objects.filter(entity=entity).update(type="place")
    chat = add_document(
        actor=actor,
        title="#sales",
        content="I'll send the Northwind quote today.",
        speaker="Marta Ruiz",
        conversation="slack:#sales",
        source_kind="chat",
    )
    ingest_documents(document_ids=[chat.document.pk])
    entity.refresh_from_db()
    assert entity.type == "person"


def test_a_department_a_team_by_name_and_greeted_people(writer):
    _, _, actor = writer
    chat = save(
        actor,
        "#general",
        "Welcome Inés Moreno, who joins Finance as controller today! "
        "Omar will ask the Lyon team about desks. Nice one Diego, and the Django upgrade waits.",
    )
    kinds = kinds_in(chat)
    assert kinds["Finance"] == "team"
    assert kinds["Lyon team"] == "team"
    assert kinds["Inés Moreno"] == "person"
    assert kinds.get("Diego") in (None, "person")  # never a place
    assert kinds["Django"] == "system"
