"""One ranking for a mixed memory: the page that states the answer wins over chat turns that only
share the question's words, whatever the question's first word."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from django.utils import timezone

from brain.core.actors import Actor
from memory.search.passages import search_chunks
from memory.tests.factories import save

ACCOUNT = """# BigCo

## Contacts

Our champion at BigCo is Dana Whitfield, head of logistics. Procurement goes through Omar Haddad.

## Pilot

The BigCo pilot starts on 12 January 2027 and runs for six weeks at their Leeds depot, with
forty drivers on the new routing app.

## Contract

The BigCo contract renews on 1 March 2027; the renewal notice is due thirty days before.
"""

FACILITIES = """# Office facilities

## Visitors

Visitors park in the three bays marked V behind building B, between 8:00 and 18:00 on weekdays.

## Fire safety

The fire drill is held on the first Tuesday of each quarter at 11:00; assemble in the north car park.
"""

CHAT = [
    ("Maya", "anyone know when the BigCo pilot starts? need it for the deck"),
    ("Tom", "not sure, ask Priya"),
    ("Priya", "BigCo pilot prep tomorrow, coffee first"),
    ("Maya", "when is the BigCo pilot kickoff call again"),
    ("Tom", "the pilot with BigCo is the big one this quarter"),
    ("Priya", "when's the fire drill? I always forget"),
    ("Maya", "fire drill lol, last time we stood outside for ages"),
    ("Tom", "when does the BigCo contract renew, does anyone know"),
    ("Priya", "visitors keep asking me when they can park"),
    ("Maya", "where do visitors park these days?"),
    ("Tom", "let's not talk about the BigCo contract today"),
]


@pytest.fixture
def memory(actor: Actor) -> dict[str, int]:
    pages = {
        "account": save(actor, "BigCo account", ACCOUNT, content_type="text/markdown").pk,
        "facilities": save(actor, "Office facilities", FACILITIES, content_type="text/markdown").pk,
    }
    start = timezone.make_aware(datetime(2026, 11, 2, 9, 0))
    for n, (speaker, text) in enumerate(CHAT):
        save(
            actor, "#sales", text, speaker=speaker, conversation="#sales", occurred_at=start + timedelta(minutes=7 * n)
        )
    return pages


@pytest.mark.parametrize(
    ("question", "page"),
    [
        ("When does the BigCo pilot start?", "account"),
        ("When does the BigCo contract renew?", "account"),
        ("When is the fire drill?", "facilities"),
        ("where do visitors park", "facilities"),
        ("when do visitors park", "facilities"),
    ],
)
def test_the_page_that_answers_is_in_the_top_three(actor, memory, question, page):
    hits = search_chunks(actor=actor, query=question, top_k=10, per_document=True).hits
    assert memory[page] in [hit.document_id for hit in hits[:3]], [(h.title, h.text[:60]) for h in hits[:5]]
