"""Conversations found by who said what: speakers a question names, neighbouring turns and
people described by a role. The time a question speaks of is in test_when.py."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from brain.core.actors import Actor
from conftest import make_actor, make_user
from memory.graph.writes import FactDraft, record_facts
from memory.index.fusion import RRF_K, RRF_WEIGHTS
from memory.search import passages
from memory.search.expansion import people_behind
from memory.search.passages import search_chunks
from memory.search.rerank import NEIGHBOUR_SHARE
from memory.search.speakers import known_speakers, speakers_named, without_speakers
from memory.tests.factories import said, save

# --- who: speakers named by a question ---------------------------------------------------


def test_a_question_names_a_speaker_by_full_name_or_by_a_part_no_one_else_shares():
    speakers = ["Priya Shah", "Priya Raman", "Sam Okoro", "Grad A", "Grad B", "Project Manager"]
    assert speakers_named("What did Sam say about the outage?", speakers) == ["Sam Okoro"]
    assert speakers_named("what did grad b think of the belief net", speakers) == ["Grad B"]
    assert speakers_named("What did Priya promise?", speakers) == []  # two Priyas: neither is meant
    assert speakers_named("What did Shah promise?", speakers) == ["Priya Shah"]
    assert speakers_named("What is Sam's plan, and Priya Shah's?", speakers) == ["Priya Shah", "Sam Okoro"]
    assert speakers_named("the project timeline", speakers) == []  # a word, not the Project Manager
    assert speakers_named("What did the project manager decide?", speakers) == ["Project Manager"]


def test_a_question_is_embedded_without_the_speakers_it_names():
    assert without_speakers("What did Priya Shah's team say?", ["Priya Shah"]) == "What did team say?"
    assert without_speakers("When did Caleb tell Ivy about it?", ["Caleb", "Ivy"]) == "When did tell about it?"
    assert without_speakers("what did grad b think of the belief net", ["Grad B"]) == "what did think of the belief net"
    assert without_speakers("Did Shah promise?", ["Priya Shah"]) == "Did promise?"
    assert without_speakers("Ivyleague or Ivy-like?", ["Ivy"]) == "Ivyleague or Ivy-like?"  # not inside words
    assert without_speakers("Sam?", ["Sam Okoro"]) == "Sam?"  # nothing would be left
    assert without_speakers("Did James' sister call?", ["James Hart"]) == "Did sister call?"
    assert speakers_named("Did James' sister call?", ["James Hart"]) == ["James Hart"]


@pytest.mark.django_db
def test_a_question_naming_a_speaker_favours_what_that_speaker_said(actor):
    at = datetime(2026, 2, 2, 9, 0, tzinfo=UTC)
    said(actor, "Sam Okoro", "I think the pilot should start in March, the scanners need updating.", at)
    said(actor, "Priya Shah", "My view: the pilot starts in January once the contract is signed.", at)
    said(actor, "Diego", "The pilot timeline depends on the warehouse scanners and the contract.", at)
    hits = search_chunks(actor=actor, query="When did Priya think the pilot would start?", top_k=3).hits
    assert hits[0].speaker == "Priya Shah"
    assert "speaker" in hits[0].ranks


@pytest.mark.django_db
def test_a_question_naming_the_wrong_person_still_finds_what_the_other_one_said(actor):
    # Questions name the person a turn was said to, or the wrong one: the named person's own
    # turns are favoured, not made to bury a turn of someone else that answers the question.
    at = datetime(2026, 5, 8, 18, 0, tzinfo=UTC)
    said(actor, "Melanie", "I ran a charity race for mental health on Saturday, it made me see I need rest too.", at)
    things = ("pottery class", "new job", "sailing novel", "cat", "hiking trip", "garden", "guitar lessons",
              "sister's wedding", "book club", "cooking", "road trip", "volunteering", "painting", "yoga")  # fmt: skip
    for minute, thing in enumerate(things, start=1):  # each turn its own moment: the same words said twice
        said(
            actor,
            "Caroline",
            f"Let me tell you about my {thing}, it has been on my mind all week.",
            at + timedelta(minutes=minute),
        )
        said(actor, "Melanie", "oh nice, tell me more", at + timedelta(minutes=minute, seconds=30))
    hits = search_chunks(actor=actor, query="What did Caroline realise after her charity race?", top_k=3).hits
    assert any("charity race" in hit.text for hit in hits)


@pytest.mark.django_db
def test_a_speakers_empty_turns_do_not_outrank_what_they_said_about_the_question(actor):
    at = datetime(2026, 2, 2, 9, 0, tzinfo=UTC)
    for text in ("hello?", "ok", "haha yes", "you there?", "brb", "lol", "sure", "hmm"):
        said(actor, "Priya Shah", text, at)
        said(actor, "Sam Okoro", "right", at)
    said(actor, "Priya Shah", "My sister moved to Denver last spring and loves the mountains.", at)
    hits = search_chunks(actor=actor, query="Which city did Priya's sibling relocate to?", top_k=3, mode="auto").hits
    found = next(hit for hit in hits if hit.text.endswith("loves the mountains."))
    assert found.ranks["vector"] == 1
    assert found.ranks["speaker"] == 1


@pytest.mark.django_db
def test_auto_embeds_the_question_without_the_speakers_it_names_and_vector_mode_as_asked(actor, monkeypatch):
    said(actor, "Priya Shah", "My sister moved to Denver last spring.", datetime(2026, 2, 2, 9, 0, tzinfo=UTC))
    embedded = embedded_questions(monkeypatch)
    search_chunks(actor=actor, query="Which city did Priya's sibling move to?", mode="auto")
    search_chunks(actor=actor, query="Which city did Priya's sibling move to?", mode="vector")
    assert embedded == ["Which city did sibling move to?", "Which city did Priya's sibling move to?"]


@pytest.mark.django_db
def test_speakers_are_known_only_from_passages_the_caller_may_read(actor, insider):
    at = datetime(2026, 2, 2, 9, 0, tzinfo=UTC)
    said(actor, "Maya", "The office moves in May.", at)
    said(insider, "Helena Quorvane", "The acquisition closes in June.", at, category="board")
    said(actor, "Ravi", "My own note.", at, scope="personal")
    member = make_actor(actor.org, make_user(actor.org))
    clause = search_access(member)
    assert known_speakers(clause) == ["Maya"]
    assert known_speakers(search_access(insider)) == ["Helena Quorvane", "Maya"]
    hits = search_chunks(actor=member, query="What did Helena say about the acquisition?", top_k=5).hits
    assert all(h.speaker != "Helena Quorvane" for h in hits)
    assert all("speaker" not in h.ranks for h in hits)


@pytest.mark.django_db
def test_only_speakers_the_caller_may_read_are_taken_out_of_the_embedded_question(actor, insider, monkeypatch):
    # Scores follow the embedded question: had a hidden speaker's name been taken out, a member's
    # scores would tell that the name speaks somewhere they cannot read.
    at = datetime(2026, 2, 2, 9, 0, tzinfo=UTC)
    said(actor, "Maya", "The office moves in May.", at)
    said(insider, "Helena Quorvane", "The acquisition closes in June.", at, category="board")
    member = make_actor(actor.org, make_user(actor.org))
    embedded = embedded_questions(monkeypatch)
    question = "What did Helena and Maya say about the acquisition?"
    search_chunks(actor=member, query=question)
    search_chunks(actor=insider, query=question)
    assert embedded == ["What did Helena and say about the acquisition?", "What did and say about the acquisition?"]


def embedded_questions(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The texts search embeds as questions from now on, in order (the real model still embeds them)."""
    embedded: list[str] = []
    real = passages.query_vector

    def recording(org: Any, text: str) -> Any:
        embedded.append(text)
        return real(org, text)

    monkeypatch.setattr(passages, "query_vector", recording)
    return embedded


def search_access(actor: Actor):
    from memory.index.candidates import access_and_time

    return access_and_time(actor, None)


# --- neighbours --------------------------------------------------------------------------


def _question_and_answer(actor: Actor, *, between: Any = None) -> None:
    """Filler, then a question and its answer in the team's chat, with ``between`` called between them."""
    at = datetime(2026, 4, 1, 9, 0, tzinfo=UTC)
    for minute in range(8):
        said(
            actor,
            "Ben",
            f"Filler chatter number {minute} about lunch plans and the weather.",
            at.replace(minute=minute),
        )
    said(actor, "Noor", "When is the onboarding redesign review with the design agency?", at.replace(minute=10))
    if between is not None:
        between(at.replace(minute=10, second=30))
    said(actor, "Ines", "Thursday at 3, in the big room.", at.replace(minute=11))


@pytest.mark.django_db
def test_the_answer_right_after_a_matching_question_is_lifted_by_it(actor):
    _question_and_answer(actor)
    hits = search_chunks(actor=actor, query="When is the onboarding redesign review?", top_k=3).hits
    assert "Thursday at 3, in the big room." in [h.text for h in hits]


@pytest.mark.django_db
def test_the_answer_is_lifted_though_other_chats_were_saved_between_the_question_and_it(actor):
    # Messages of many channels arrive interleaved: the message after the question in its own
    # conversation is the answer, whatever was saved in between.
    def other_channels(at: datetime) -> None:
        for n in range(3):
            said(actor, "Ola", f"Deploy {n} of the billing service went fine.", at, conversation=f"#ops-{n}")

    _question_and_answer(actor, between=other_channels)
    hits = search_chunks(actor=actor, query="onboarding redesign review with the design agency", top_k=3).hits
    fused = {h.text: sum(RRF_WEIGHTS[arm] / (RRF_K + rank) for arm, rank in h.ranks.items()) for h in hits}
    asked, answer = "When is the onboarding redesign review with the design agency?", "Thursday at 3, in the big room."
    assert [h.text for h in hits][:2] == [asked, answer]
    lifted = {h.text: h.score for h in hits}[answer]
    assert lifted == pytest.approx(fused[answer] + NEIGHBOUR_SHARE * fused[asked], abs=1e-4)


@pytest.mark.django_db
def test_a_message_the_caller_cannot_read_changes_no_score_of_those_around_it(org, other_org):
    # The same chat in two organisations; in the first, someone else's personal note sits between
    # the question and the answer. The reader's results, scores and all, are the same in both.
    def results(organisation: Any, hidden: bool) -> list[tuple[str, float]]:
        reader = make_actor(organisation)
        other = make_actor(organisation, make_user(organisation))

        def personal_note(at: datetime) -> None:
            said(other, "Ola", "Remember the onboarding redesign review notes.", at, scope="personal")

        _question_and_answer(reader, between=personal_note if hidden else None)
        hits = search_chunks(actor=reader, query="When is the onboarding redesign review?", top_k=5).hits
        return [(h.text, h.score) for h in hits]

    assert results(org, hidden=True) == results(other_org, hidden=False)


@pytest.mark.django_db
def test_search_walks_a_conversation_in_the_order_its_embedding_context_does(actor):
    # One order for a conversation (time, then the order saved in; current versions; one
    # audience): the turn before used for embedding and the neighbours search lifts agree.
    from django.db import connection

    from memory.documents.turns import _around, message_beside_sql
    from memory.models import Document

    other = make_actor(actor.org, make_user(actor.org))
    at = datetime(2026, 4, 1, 9, 0, tzinfo=UTC)
    said(actor, "A", "first", at)
    said(actor, "B", "same minute, saved second", at)
    said(actor, "C", "same minute, saved third", at)
    said(other, "D", "someone else's personal note", at.replace(minute=5), scope="personal")
    said(other, "E", "a shared message by another writer", at.replace(minute=6))
    said(actor, "F", "another channel", at.replace(minute=7), conversation="other")
    said(actor, "G", "before the edit", at.replace(minute=8), external_id="g")
    said(actor, "G", "after the edit", at.replace(minute=8), external_id="g")
    said(actor, "H", "earlier but saved last", at.replace(minute=2))
    save(actor, "I", "no time", speaker="I", conversation="team")
    save(actor, "J", "no time either", speaker="J", conversation="team")
    documents = list(Document.objects.filter(org=actor.org))
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT d.id, {message_beside_sql('d', before=True)}, {message_beside_sql('d', before=False)} "  # noqa: S608
            "FROM memory_document d WHERE d.org_id = %s",
            [actor.org.pk],
        )
        beside = {row[0]: (row[1], row[2]) for row in cursor.fetchall()}
    for document in documents:
        walked = tuple(
            _around(document, same_audience=True, before=b).values_list("pk", flat=True).first() for b in (True, False)
        )
        assert beside[document.pk] == walked, document.content
    by_text = {d.content: d.pk for d in documents}
    assert beside[by_text["same minute, saved third"]] == (
        by_text["same minute, saved second"],
        by_text["earlier but saved last"],
    )
    # A shared message's writer does not change who may read it: another writer's is in the order;
    # someone's personal note is not.
    assert beside[by_text["a shared message by another writer"]] == (
        by_text["earlier but saved last"],
        by_text["after the edit"],
    )
    assert beside[by_text["someone else's personal note"]] == (None, None)


@pytest.mark.django_db
def test_a_messages_neighbours_are_found_through_the_conversation_index(actor):
    # A correlated conversation alone does not let PostgreSQL use the partial index: at 100k
    # messages each lookup read the whole table (seconds a search). The plan must walk the index.
    from django.db import connection, transaction

    from memory.search.rerank import DOCUMENT_OF_PASSAGE

    said(actor, "A", "hello", datetime(2026, 4, 1, tzinfo=UTC))
    with transaction.atomic(), connection.cursor() as cursor:
        for kind in ("seqscan", "bitmapscan", "sort"):  # what a large table would rule out by cost
            cursor.execute(f"SET LOCAL enable_{kind} = off")
        cursor.execute(
            f"EXPLAIN SELECT d.before_id, d.after_id FROM memory_chunk c CROSS JOIN LATERAL ({DOCUMENT_OF_PASSAGE}) d"  # noqa: S608
        )
        plan = "\n".join(row[0] for row in cursor.fetchall())
    # Timed messages (the usual kind) walk it before and after; untimed ones may go by the key.
    assert plan.count("using document_conversation on memory_document") >= 2, plan


# --- multi-hop: a person described by a role -----------------------------------------------


@pytest.mark.django_db
def test_a_question_describing_someone_by_their_role_finds_what_the_role_holder_said(actor):
    org_chart = save(actor, "Org chart", "Priya Shah is head of Support.")
    role = FactDraft(statement=org_chart.content, subject="Priya Shah", object="Support", relation="head_of")
    record_facts(document=org_chart, drafts=[role])
    at = datetime(2026, 2, 2, 9, 0, tzinfo=UTC)
    said(actor, "Sam Okoro", "The outage on Tuesday came from the payment gateway timing out.", at)
    said(actor, "Priya Shah", "For the outage, customers mostly complained about missing receipts.", at)
    said(actor, "Diego", "Outage retro is booked; the gateway vendor will join.", at)
    question = "What did the person who leads Support say about the outage?"
    hits = search_chunks(actor=actor, query=question, top_k=3).hits
    assert hits[0].speaker == "Priya Shah"
    assert {"graph", "speaker"} <= set(hits[0].ranks)


@pytest.mark.django_db
def test_a_role_known_only_from_a_hidden_source_expands_nothing(actor, insider):
    page = save(actor, "Support page", "Support answers within a day.")
    record_facts(document=page, drafts=[FactDraft(statement=page.content, subject="Support")])
    minutes = save(insider, "Board minutes", "Helena Quorvane is head of Support.", category="board")
    role = FactDraft(statement=minutes.content, subject="Helena Quorvane", object="Support", relation="head_of")
    record_facts(document=minutes, drafts=[role])
    said(actor, "Maya", "The outage hit Support hard.", datetime(2026, 2, 2, tzinfo=UTC))
    question = "What did the head of Support say about the outage?"
    assert people_behind(actor=insider, question=question) == ["Helena Quorvane"]
    assert people_behind(actor=actor, question=question) == []
    hits = search_chunks(actor=actor, query=question, top_k=5).hits
    assert all("graph" not in h.ranks for h in hits)
