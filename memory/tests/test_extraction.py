"""Deterministic extraction (spaCy + dateparser + price-parser + rapidfuzz) and the LLM client.

Pure tests: no database. The LLM client talks to a loopback stub speaking the chat-completions protocol.
"""

from __future__ import annotations

import datetime
import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import SimpleNamespace
from typing import Any, get_args

import pytest

from memory.extraction.linking import KnownEntity, link_name
from memory.extraction.sentences import extract
from memory.extraction.shapes import Extraction
from memory.extraction.vocabulary import ENTITY_TYPES, FACT_KINDS
from memory.graph.llm import EntityType, FactKind, LLMError, LLMExtractor

MONDAY = datetime.date(2026, 3, 9)
COMPANY_TEXT = (
    "Priya Shah became head of support at BigCo Ltd on 3 March 2026. "
    "BigCo signed the enterprise plan for $48,500 a year."
)


def fact_about(result: Extraction, needle: str):
    return next(f for f in result.facts if needle in f.statement)


# --- people, companies, relations, values --------------------------------------------------


def test_people_companies_and_a_role_relation():
    result = extract(COMPANY_TEXT, document_date=MONDAY)
    entities = {e.name: e for e in result.entities}
    assert entities["Priya Shah"].type == "person"
    assert entities["BigCo Ltd"].type == "organisation"
    assert set(entities["BigCo Ltd"].aliases) == {"BigCo Ltd", "BigCo"}  # one entity, the full form canonical
    assert not any(e.known for e in result.entities)

    role = fact_about(result, "head of support")
    assert (role.subject, role.relation, role.object) == ("Priya Shah", "head_of", "BigCo Ltd")
    assert role.single_valued
    assert role.valid_from == datetime.date(2026, 3, 3)
    assert role.kind == "event"
    assert COMPANY_TEXT[role.char_start : role.char_end] == role.statement


def test_money_is_a_value_never_a_date():
    result = extract(COMPANY_TEXT, document_date=MONDAY)
    deal = fact_about(result, "enterprise plan")
    assert deal.subject == "BigCo Ltd"
    money = [v for v in deal.values if v.number == 48500]
    assert len(money) == 1
    assert money[0].unit == "USD"
    assert money[0].key in ("price", "deal_value")
    assert money[0].date is None
    assert not any(v.date for v in deal.values)  # "$48,500" is not the year 48500 or any date
    assert deal.valid_from is None
    assert deal.valid_to is None
    assert deal.single_valued  # a price holds one value at a time


@pytest.mark.parametrize(
    ("sentence", "key", "number", "unit"),
    [
        ("The contract with Initech is worth $40k.", "deal_value", 40000, "USD"),
        ("Globex has a budget of EUR 1.2m for the rollout.", "budget", 1200000, "EUR"),
        ("Initech negotiated a 15% discount on the renewal.", "discount", 15, "%"),
        ("Globex has a headcount of 45 after the merger.", "headcount", 45, "people"),
        ("The support team at Initech now has 12 employees.", "headcount", 12, "people"),
    ],
)
def test_values_take_their_key_from_context(sentence, key, number, unit):
    values = [v for f in extract(sentence, document_date=MONDAY).facts for v in f.values]
    assert any((v.key, v.number, v.unit) == (key, number, unit) for v in values), values


def test_kinds_of_statement():
    text = (
        "We decided to move Initech to the annual plan. "
        "Dana Cruz prefers email over phone calls for billing questions. "
        "Restart the Zorblax sync job before you deploy. "
        "Globex opened an office in Berlin in January 2026. "
        "Is Globex still a customer? "
        "Thanks a lot."
    )
    result = extract(text, document_date=MONDAY)
    kinds = {f.statement.split()[0]: f.kind for f in result.facts}
    assert kinds["We"] == "decision"
    assert kinds["Dana"] == "preference"
    assert kinds["Restart"] == "procedure"
    assert kinds["Globex"] == "event"
    assert not any(f.statement.endswith("?") or f.statement.startswith("Thanks") for f in result.facts)


# --- dates ---------------------------------------------------------------------------------


def test_relative_dates_resolve_against_the_document_date_into_fields_and_the_sentence_stays():
    text = "We will meet Globex next Friday. The Initech pilot runs until end of Q3."
    result = extract(text, document_date=MONDAY)  # Monday 9 March 2026
    meeting = fact_about(result, "Globex")
    assert meeting.statement == "We will meet Globex next Friday."
    assert any(v.date == datetime.date(2026, 3, 13) for v in meeting.values)
    assert meeting.relative
    pilot = fact_about(result, "pilot")
    assert pilot.valid_to == datetime.date(2026, 9, 30)
    assert pilot.statement == "The Initech pilot runs until end of Q3."


WEDNESDAY = datetime.date(2025, 11, 12)


@pytest.mark.parametrize(
    ("sentence", "said_on", "wanted"),
    [
        ("Tom Becker closed the Initech deal last week.", WEDNESDAY, datetime.date(2025, 11, 3)),
        ("Marta Ruiz will send Globex the quote by Friday.", datetime.date(2025, 11, 24), datetime.date(2025, 11, 28)),
        ("Lena Fischer will finish the Globex audit by end of next week.", WEDNESDAY, datetime.date(2025, 11, 21)),
        ("Priya Shah starts at Globex in two weeks.", WEDNESDAY, datetime.date(2025, 11, 26)),
        ("Globex paid the invoice on the 4th.", WEDNESDAY, datetime.date(2025, 11, 4)),
        ("Globex moves its team to Lyon in January.", WEDNESDAY, datetime.date(2026, 1, 1)),
        ("Globex opened its Lyon office in December.", WEDNESDAY, datetime.date(2024, 12, 1)),
        ("Globex called Tom Becker yesterday.", WEDNESDAY, datetime.date(2025, 11, 11)),
        ("Tom Becker will call Globex tomorrow.", WEDNESDAY, datetime.date(2025, 11, 13)),
        ("The Globex pilot runs until the end of the month.", WEDNESDAY, datetime.date(2025, 11, 30)),
        ("The Globex office is closed from 24 December to 1 January.", datetime.date(2025, 12, 2), None),
        ("Priya Shah has led Globex sales since March.", WEDNESDAY, datetime.date(2025, 3, 1)),
        ("The Globex migration moves to Sat 6 Dec, 22:00 CET.", WEDNESDAY, datetime.date(2025, 12, 6)),
    ],
)
def test_a_time_phrase_resolves_against_the_day_it_was_said(sentence, said_on, wanted):
    fact = extract(sentence, document_date=said_on).facts[0]
    dates = {fact.valid_from, fact.valid_to} | {v.date for v in fact.values}
    assert fact.statement == sentence
    if wanted is None:  # a span: its end lies after its start, in the next year
        assert (fact.valid_from, fact.valid_to) == (datetime.date(2025, 12, 24), datetime.date(2026, 1, 1))
    else:
        assert wanted in dates, dates
        if "moves to" in sentence:  # moving to a day ends nothing
            assert fact.valid_to is None
    assert fact.relative


@pytest.mark.parametrize(
    "sentence",
    [
        "The support rota changes every Monday at 10:00.",
        "Deploys happen every Friday after 14:00.",
        "Globex invoices go out on the 20th of each month.",
        "Omar Haddad runs the security briefing every other Thursday.",
        "The Globex team meets weekly on Tuesdays.",
        "Globex backups run daily at 9.",
        "Deployments happen on Tuesdays and Thursdays between 10:00 and 12:00 CET.",
        "Globex support answers the phone at 10:00.",
    ],
)
def test_a_habit_or_a_clock_time_stays_words_and_is_no_date(sentence):
    assert_no_date(sentence)


@pytest.mark.parametrize(
    "sentence",
    ["Priya Shah was the first to reply.", "Omar Haddad was the second in line.", "Globex signs in 99999999 days."],
)
def test_an_ordinal_that_is_no_day_and_a_date_off_the_calendar_are_no_date(sentence):
    assert_no_date(sentence)


def assert_no_date(sentence: str) -> None:
    facts = extract(sentence, document_date=WEDNESDAY).facts
    assert [f.statement for f in facts] == [sentence]
    assert (facts[0].valid_from, facts[0].valid_to) == (None, None)
    assert not any(v.date for v in facts[0].values)
    assert not facts[0].relative


def test_quarters_and_validity_bounds():
    text = (
        "Starting from Q2 2027 the Zorblax price is $12 per seat. "
        "Initech keeps the legacy plan until the end of March. "
        "Globex has been a partner since 1 February 2026."
    )
    result = extract(text, document_date=MONDAY)
    assert fact_about(result, "per seat").valid_from == datetime.date(2027, 4, 1)
    assert fact_about(result, "legacy").valid_to == datetime.date(2026, 3, 31)
    assert fact_about(result, "partner").valid_from == datetime.date(2026, 2, 1)


def test_durations_are_not_dates():
    fact = extract("Initech agreed to a notice period of 30 days.", document_date=MONDAY).facts[0]
    assert fact.valid_from is None
    assert fact.valid_to is None
    assert [(v.key, v.number, v.unit, v.date) for v in fact.values] == [("notice_period", 30, "days", None)]


# --- linking -------------------------------------------------------------------------------


def test_link_name_ignores_case_punctuation_and_legal_suffixes():
    bigco = KnownEntity("BigCo", "customer")
    known = [bigco, KnownEntity("Initech", "customer", ("Initech Systems", "ITS"))]
    for name in ("BigCo", "bigco", "BigCo Ltd", "Bigco Inc.", "Big Co", "BigCo Limited", "BIGCO GmbH"):
        assert link_name(name, known) is bigco, name
    assert link_name("its", known) == known[1]
    assert link_name("Initech Sytems", known) == known[1]  # a typo still links
    assert link_name("BigCo Support Team", known) is None  # sharing a word is not being the same thing
    assert link_name("Globex", known) is None


def test_people_who_only_share_a_first_name_never_link():
    shah, patel = KnownEntity("Priya Shah", "person"), KnownEntity("Priya Patel", "person")
    assert link_name("Priya Patel", [shah]) is None
    assert link_name("Priya Shah", [shah, patel]) is shah
    assert link_name("Priya", [shah]) is shah  # one known Priya: the first name is enough
    assert link_name("Priya", [shah, patel]) is None  # two: ambiguous
    assert link_name("Shah", [shah]) is None


def test_one_entity_per_company_whatever_the_suffix():
    text = (
        "BigCo renewed their licence in January. BigCo Ltd is a large retailer in Leeds. "
        "Our contact at Bigco Inc. is Tom Becker."
    )
    result = extract(text, document_date=MONDAY, known=[KnownEntity("BigCo", "customer")])
    bigco = [e for e in result.entities if e.name == "BigCo"]
    assert len(bigco) == 1
    assert bigco[0].known
    assert bigco[0].type == "customer"
    assert {"BigCo", "BigCo Ltd", "Bigco Inc."} <= set(bigco[0].aliases)
    assert not any("bigco" in e.name.lower() and e.name != "BigCo" for e in result.entities)


def test_known_aliases_name_the_canonical_entity():
    known = [KnownEntity("Initech", "customer", ("Initech Systems", "ITS")), KnownEntity("Priya Patel", "person")]
    result = extract("Priya Patel leads the sales team at ITS.", document_date=MONDAY, known=known)
    entities = {e.name: e for e in result.entities}
    assert entities["Initech"].known
    assert entities["Initech"].aliases == ["ITS"]
    assert entities["Initech"].type == "customer"
    fact = result.facts[0]
    assert (fact.subject, fact.object) == ("Priya Patel", "Initech")


def test_two_priyas_stay_two_people():
    text = "Priya Shah met Priya Patel in Berlin. Priya Patel runs the sales team."
    result = extract(text, document_date=MONDAY, known=[KnownEntity("Priya Shah", "person")])
    people = {e.name: e for e in result.entities if e.type == "person"}
    assert set(people) == {"Priya Shah", "Priya Patel"}
    assert people["Priya Shah"].known
    assert not people["Priya Patel"].known
    assert fact_about(result, "met").object == "Priya Patel"


def test_the_entity_ruler_finds_known_names_spacy_misreads():
    text = "Zorblax crashed twice during the demo on Tuesday. The team restarted Zorblax at noon."
    alone = {e.name: e.type for e in extract(text, document_date=MONDAY).entities}
    assert alone.get("Zorblax") != "product"  # the small model alone does not know what Zorblax is
    result = extract(text, document_date=MONDAY, known=[KnownEntity("Zorblax", "product")])
    zorblax = [e for e in result.entities if e.name == "Zorblax"]
    assert len(zorblax) == 1
    assert zorblax[0].type == "product"
    assert zorblax[0].known
    assert [f.subject for f in result.facts] == ["Zorblax", "Zorblax"]


def test_known_names_match_whatever_the_case_but_common_words_and_acronyms_keep_theirs():
    known = [KnownEntity("Support", "team"), KnownEntity("Initech", "customer", ("ITS",))]
    result = extract("Priya asked for more support. Its renewal is due. INITECH renewed.", known=known)
    assert [(e.name, e.aliases) for e in result.entities if e.known] == [("Initech", ["INITECH"])]


# --- LLM client ----------------------------------------------------------------------------


@pytest.fixture
def stub() -> Iterator[SimpleNamespace]:
    """A loopback chat-completions endpoint: records requests, answers from `replies` in order."""
    state = SimpleNamespace(requests=[], replies=[])

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - the http.server API
            body = self.rfile.read(int(self.headers["Content-Length"]))
            state.requests.append(SimpleNamespace(path=self.path, headers=dict(self.headers), body=json.loads(body)))
            status, payload, delay = state.replies.pop(0)
            time.sleep(delay)
            data = payload.encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    state.url = f"http://127.0.0.1:{server.server_port}/v1"
    yield state
    server.shutdown()
    server.server_close()


def completion(content: str) -> str:
    message = {"role": "assistant", "content": content}
    choice = {"index": 0, "message": message, "finish_reason": "stop"}
    return json.dumps(
        {"id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "m", "choices": [choice]}
    )


LLM_ANSWER = {
    "entities": [
        {"name": "Priya Shah", "type": "person", "aliases": []},
        {"name": "BigCo Ltd", "type": "customer", "aliases": ["BigCo"]},
        {"name": "Warp drive", "type": "spaceship", "aliases": []},  # not an allowed type: dropped
    ],
    "facts": [
        {
            "statement": "Priya Shah became head of support at BigCo Ltd on 3 March 2026.",
            "kind": "event",
            "subject": "Priya Shah",
            "object": "BigCo Ltd",
            "relation": "head of",
            "single_valued": True,
            "valid_from": "2026-03-03",
            "valid_to": None,
            "values": [
                {"key": "date", "number": None, "date": "2026-03-03", "text": "3 March 2026", "unit": ""},
                {"key": "Bad Key!", "number": 1, "date": None, "text": "", "unit": ""},  # dropped
            ],
        },
        {
            "statement": "BigCo pays $48,500 a year for the enterprise plan.",
            "kind": "fact",
            "subject": "BigCo",
            "object": None,
            "relation": None,
            "single_valued": True,
            "valid_from": None,
            "valid_to": None,
            "values": [{"key": "price", "number": 48500, "date": None, "text": "$48,500", "unit": "USD"}],
        },
        {"statement": "Something", "kind": "rumour", "subject": None},  # not an allowed kind: dropped
        {"statement": "Dated nonsense", "kind": "fact", "valid_from": "the other day"},  # not a date: dropped
    ],
}


def test_llm_client_speaks_chat_completions_and_validates_the_answer(stub):
    stub.replies.append((200, completion(json.dumps(LLM_ANSWER)), 0))
    client = LLMExtractor(stub.url, "test-model", api_key="sk-test", timeout=5)
    known = [KnownEntity("BigCo", "customer"), KnownEntity("Unrelated Corp", "customer")]
    result = client.extract(COMPANY_TEXT, document_date=MONDAY, known=known)

    request = stub.requests[0]
    assert request.path == "/v1/chat/completions"
    assert request.headers["Authorization"] == "Bearer sk-test"
    body = request.body
    assert body["model"] == "test-model"
    assert body["temperature"] == 0
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert COMPANY_TEXT in body["messages"][1]["content"]
    assert "2026-03-09" in body["messages"][1]["content"]
    assert "BigCo | customer" in body["messages"][1]["content"]
    assert "Unrelated Corp" not in body["messages"][1]["content"]  # only known entities the text mentions
    response_format = body["response_format"]
    assert response_format["type"] == "json_schema"
    assert response_format["json_schema"]["name"] == "extraction"
    assert response_format["json_schema"]["strict"]
    assert set(response_format["json_schema"]["schema"]["properties"]) == {"entities", "facts"}

    entities = {e.name: e for e in result.entities}
    assert set(entities) == {"Priya Shah", "BigCo"}
    assert entities["BigCo"].known
    assert entities["BigCo"].type == "customer"
    assert len(result.facts) == 2
    role, price = result.facts
    assert (role.subject, role.relation, role.object) == ("Priya Shah", "head_of", "BigCo")
    assert role.valid_from == datetime.date(2026, 3, 3)
    assert [v.key for v in role.values] == ["date"]
    assert COMPANY_TEXT[role.char_start : role.char_end] == role.statement
    assert (price.char_start, price.char_end) == (0, 0)  # not verbatim in the text
    assert price.subject == "BigCo"
    assert price.values[0].number == 48500
    assert price.values[0].unit == "USD"


@pytest.mark.parametrize(
    "reply",
    [
        (200, completion("this is not json {"), 0),
        (200, completion(json.dumps(["a", "list"])), 0),
        (200, json.dumps({"choices": []}), 0),
        (500, json.dumps({"error": {"message": "boom"}}), 0),
        (200, completion(json.dumps(LLM_ANSWER)), 1.0),  # slower than the client's timeout
    ],
    ids=["invalid-json", "not-an-object", "no-choices", "http-500", "timeout"],
)
def test_llm_failures_raise_llm_error(stub, reply):
    stub.replies.append(reply)
    with pytest.raises(LLMError):
        LLMExtractor(stub.url, "test-model", timeout=0.3).extract(COMPANY_TEXT, document_date=MONDAY)


def test_llm_enums_match_the_deterministic_extractor():
    assert set(get_args(EntityType)) == set(ENTITY_TYPES)
    assert set(get_args(FactKind)) == set(FACT_KINDS)


def test_names_that_differ_in_their_numbers_never_link():
    known = [KnownEntity("Tester Number0", "other"), KnownEntity("Release 2024", "project")]
    assert link_name("Tester Number0", known) == known[0]
    for other in ("Tester Number1", "Tester Number24", "Release 2025"):
        assert link_name(other, known) is None


def test_a_span_of_hours_is_a_length_not_a_date():
    fact = extract("The fix must ship within 4 hours.", document_date=MONDAY).facts[0]
    assert fact.valid_from is None
    assert fact.valid_to is None
    assert [(v.number, v.unit) for v in fact.values] == [(4, "hours")]


def test_amounts_currencies_and_business_acronyms_are_no_entities():
    result = extract(
        "The QBR with Halvorsen Foods is on 11 December. Revenue for October was EUR 412,000, "
        "and the SLA and the PDF export are unchanged.",
        document_date=MONDAY,
    )
    names = {e.name for e in result.entities}
    assert "Halvorsen Foods" in names
    assert not names & {"QBR", "EUR 412,000", "EUR", "SLA", "PDF"}
    assert fact_about(result, "QBR").subject == "Halvorsen Foods"


def test_what_a_speaker_will_do_is_kept_though_it_names_nobody():
    """The speaker is named when the document's speaker is known; a plain remark is not a fact."""
    result = extract("I'll prepare the usage report before the QBR. I think so too, honestly.", document_date=MONDAY)
    assert [f.statement for f in result.facts] == ["I'll prepare the usage report before the QBR."]


def test_short_forms_link_only_when_one_known_thing_has_them():
    known = [KnownEntity("Project Heron", "project"), KnownEntity("Halvorsen Foods", "customer"),
             KnownEntity("Kestrel Ledger", "product"), KnownEntity("Okapi Print", "organisation"),
             KnownEntity("Okapi Logistics", "organisation"), KnownEntity("Diego Alves", "person"),
             KnownEntity("Diego Foods", "customer")]  # fmt: skip

    def linked(name: str) -> str | None:
        found = link_name(name, known)
        return found.name if found else None

    assert linked("Heron") == "Project Heron"
    assert linked("Halvorsen") == "Halvorsen Foods"
    assert linked("Ledger") == "Kestrel Ledger"
    assert linked("Okapi") is None  # two companies go by it
    assert linked("Diego") == "Diego Alves"  # a known person's first name comes first


def test_courtesy_and_short_verbless_lines_are_no_facts():
    text = "Thanks for joining, Anna Lind.\nnice one Diego Alves 🎉\nThe support rota changes every Monday at 10:00."
    result = extract(text, document_date=MONDAY)
    assert [f.statement for f in result.facts] == ["The support rota changes every Monday at 10:00."]


def test_a_deadline_named_by_what_came_before_dates_the_fact():
    tuesday = datetime.date(2025, 12, 2)
    text = "The QBR with Halvorsen Foods is on 11 December in Bergen. I will prepare the usage report before the QBR."
    plan = fact_about(extract(text, document_date=tuesday), "usage report")
    assert (plan.valid_from, plan.valid_to) == (None, datetime.date(2025, 12, 11))
    # Nothing before gives the QBR a date, or another event's date: no deadline is made up.
    alone = fact_about(extract("I will prepare the usage report before the QBR.", document_date=tuesday), "usage")
    assert alone.valid_to is None
    other = "The board meets on 4 December. I will prepare the usage report before the QBR."
    assert fact_about(extract(other, document_date=tuesday), "usage report").valid_to is None
