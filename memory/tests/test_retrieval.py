from datetime import timedelta

import pytest
from django.contrib.auth.models import Group
from django.utils import timezone

from brain.models import Category
from conftest import make_actor, make_user
from memory.models import Chunk, Document
from memory.search.passages import search_chunks
from memory.tests.factories import save

pytestmark = pytest.mark.django_db

SECRET = "The merger with Globex closes on 14 March; the code name is Bluebird."


def titles(actor, query, **kw):
    return [hit.title for hit in search_chunks(actor=actor, query=query, **kw).hits]


@pytest.fixture
def corpus(actor):
    save(actor, "Refund policy", "Enterprise customers get a full refund within 30 days of purchase.")
    save(actor, "Office hours", "The Lisbon office is open from 9 to 6 on weekdays.")
    save(actor, "On-call rota", "Priya is on call for payments this week; escalate to Sam after an hour.")
    return actor


@pytest.mark.parametrize("mode", ["auto", "vector", "keyword"])
def test_each_mode_finds_the_passage_that_answers(corpus, mode):
    assert titles(corpus, "can enterprise customers get a refund?", mode=mode)[0] == "Refund policy"


def test_meaning_finds_what_words_miss(corpus):
    assert titles(corpus, "money back for big clients", mode="vector")[0] == "Refund policy"


def test_diagnostics_carry_each_retrievers_rank_and_the_timings(corpus):
    result = search_chunks(actor=corpus, query="who is on call for payments", mode="auto")
    top = result.hits[0]
    assert top.title == "On-call rota"
    assert top.ranks["vector"] >= 1
    assert top.ranks["keyword"] >= 1
    assert {"embed", "vector", "keyword", "total"} <= result.timings_ms.keys()


def test_top_k_trims_and_near_duplicates_are_pushed_down(actor):
    for i in range(3):
        save(actor, f"Copy {i}", "The quarterly board meeting is on the first Monday of April.", source_kind=f"k{i}")
    save(actor, "Other", "Board members receive the papers a week before the meeting.")
    hits = titles(actor, "when is the board meeting", top_k=2)
    assert len(hits) == 2
    assert "Other" in hits


def test_copies_that_all_say_the_date_come_after_every_other_passage_in_a_mixed_pool(actor):
    """The "when" bonus goes to written passages in a mixed pool; three copies of one that says
    the date still take one place, not three."""
    for i in range(3):
        save(actor, f"Copy {i}", "The quarterly board meeting is on the first Monday of April.", source_kind=f"k{i}")
    save(actor, "Other", "Board members receive the papers a week before the meeting.")
    save(actor, "Papers", "The board papers are drafted by the finance team.")
    hits = titles(actor, "when is the board meeting", top_k=3)
    assert hits[0].startswith("Copy")
    assert sum(title.startswith("Copy") for title in hits) == 1


def test_another_organisations_documents_never_appear_even_word_for_word(corpus, other_org_actor):
    save(other_org_actor, "Globex merger", SECRET)
    for mode in ("auto", "vector", "keyword"):
        assert "Globex merger" not in titles(corpus, SECRET, mode=mode, top_k=20)


def test_personal_memories_are_visible_to_their_owner_only(actor):
    save(actor, "My notes", SECRET, scope="personal")
    colleague = make_actor(actor.org)
    assert titles(actor, SECRET)[0] == "My notes"
    for mode in ("auto", "vector", "keyword"):
        assert titles(colleague, SECRET, mode=mode, top_k=20) == []


def test_restricted_categories_are_visible_to_their_groups_only(actor):
    board = Group.objects.create(name="board")
    restricted = Category.objects.create(org=actor.org, slug="board", name="Board", restricted=True)
    restricted.groups.add(board)
    insider = make_actor(actor.org, make_user(actor.org))
    insider.user.groups.add(board)
    save(insider, "Board minutes", SECRET, category="board")
    assert titles(insider, SECRET)[0] == "Board minutes"
    for mode in ("auto", "vector", "keyword"):
        assert titles(actor, SECRET, mode=mode, top_k=20) == []


def test_as_of_sees_what_was_known_then_and_superseded_versions_are_hidden_now(actor):
    old = save(actor, "Price list", "The starter plan costs 10 euros a month.", external_id="prices")
    past = timezone.now() - timedelta(days=10)
    Document.objects.filter(pk=old.pk).update(recorded_at=past)
    Chunk.objects.filter(document=old).update(recorded_at=past)
    new = save(actor, "Price list", "The starter plan costs 12 euros a month.", external_id="prices")
    now_hits = search_chunks(actor=actor, query="starter plan price").hits
    assert [h.document_id for h in now_hits] == [new.pk]
    then = search_chunks(actor=actor, query="starter plan price", as_of=(past + timedelta(days=1)).date()).hits
    assert [h.document_id for h in then] == [old.pk]
    before_anything = search_chunks(actor=actor, query="starter plan price", as_of=(past - timedelta(days=1)).date())
    assert before_anything.hits == []


def test_many_passages_holding_every_rare_word_are_ranked_from_a_sample_and_all_hold_them(actor, monkeypatch):
    from memory.index import candidates
    from memory.index.candidates import access_and_time, keyword_candidates

    for n in range(8):
        save(actor, f"Audit {n}", f"Globex audit of the roadmap, note {n}.")
    for n in range(4):
        save(actor, f"Only {n}", f"Globex invoice number {n}.")
    scanned: list[int] = []
    fetch = candidates._fetch
    monkeypatch.setattr(candidates, "DENSE_MATCHES", 5)
    monkeypatch.setattr(candidates, "MAX_SCORED_ALL_RAREST", 4)

    def counting(sql, params):
        scanned.append(params["scan"])
        return fetch(sql, params)

    monkeypatch.setattr(candidates, "_fetch", counting)
    rows = keyword_candidates("who audited the roadmap for Globex?", access_and_time(actor, None), 3)
    assert scanned == [4]  # one statement: the passages holding every rare word, a sample of four
    texts = Chunk.objects.filter(pk__in=[cid for cid, _ in rows]).values_list("text", flat=True)
    assert len(texts) == 3
    assert all("audit" in t and "roadmap" in t for t in texts)
    scanned.clear()
    rows = keyword_candidates("who audited the roadmap for Globex?", access_and_time(actor, None), 10)
    assert scanned == [4, candidates.MAX_SCORED, candidates.MAX_SCORED]  # too few: widened, scored in full
    assert len(rows) == 10
