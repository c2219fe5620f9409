from datetime import timedelta

import pytest
from django.contrib.auth.models import Group
from django.utils import timezone

from brain.models import Category
from conftest import make_actor, make_user
from memory.models import Chunk, Document
from memory.search.passages import search_chunks
from memory.tests.factories import said, save

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


# A build log whose last line holds a name: the embedder reads the first 256 tokens of a passage,
# and hashes and addresses spend them, so only the keyword arm sees the name.
BUILD_LOG = (
    "Build log review: runs 4f3a9c2e, 7b1d0e9a, c0ffee42 and 9e8d7c6b failed on https://ci.example.org/jobs/1182/"
    "artifacts/x86_64-unknown-linux-gnu/stage2 while 5a6b7c8d, 1f2e3d4c and 0a9b8c7d passed on "
    "https://ci.example.org/jobs/1183/artifacts/aarch64-apple-darwin/stage1; timings 13.2s, 14.9s, 12.7s, "
    "18.1s, 11.0s, 16.4s; queues q-17, q-23, q-41; mirrors eu-west-3, us-east-2, ap-south-1. Retried 3e4f5a6b, "
    "8c9d0e1f, 2a3b4c5d, 6e7f8a9b, 0c1d2e3f, 4a5b6c7d, 8e9f0a1b on https://ci.example.org/jobs/1184/artifacts/"
    "wasm32-unknown-unknown/stage2 and 7c8d9e0f, 1a2b3c4d on https://ci.example.org/jobs/1185/artifacts/"
    "riscv64gc-unknown-linux-gnu/stage1; exit codes 101, 137, 143. Last item: qorvex has no owner since the "
    "reorganisation."
)


def test_a_word_one_passage_holds_brings_that_passage_up_whatever_the_meaning_arm_finds(actor):
    """Rank fusion gives the keyword arm's first place less than the meaning arm's last: a passage
    holding the name a question asks about, past what the embedder reads, stood below every
    passage merely near the question in meaning."""
    for team in ("Atlas", "Borealis", "Cobalt", "Dorado", "Ember", "Fjord", "Granite", "Harbor", "Indigo", "Juniper"):
        save(actor, f"{team} project", f"The {team} project is a tool that measures how fast our code runs.")
    save(actor, "Build notes", BUILD_LOG)
    asked = "What is the qorvex project?"
    result = search_chunks(actor=actor, query=asked, top_k=3, candidates=10)
    notes = next((hit for hit in result.hits if hit.title == "Build notes"), None)
    assert notes is not None
    assert notes.ranks["keyword"] == 1
    assert notes.ranks.get("vector", 99) > 3  # the meaning arm alone would not have shown it


def test_a_turn_holding_the_only_match_is_left_where_fusion_puts_it(actor):
    """A turn is short and about one thing: the meaning arm's rank of it stands (real chats lost
    questions at three when their turns were lifted by a word, docs/benchmarks-log.md)."""
    from memory.search.passages import _written_first

    said(actor, "Ravel", "qorvex is broken again, no idea who owns it", timezone.now() - timedelta(hours=1))
    turn = search_chunks(actor=actor, query="qorvex", mode="keyword", top_k=1).hits[0]
    assert _written_first([(turn.chunk_id, 3.0)]) == []
    page = save(actor, "Build notes", BUILD_LOG)
    written = Chunk.objects.filter(document=page).values_list("pk", flat=True)[0]
    assert _written_first([(written, 3.0)]) == [(written, 3.0)]


def test_a_keyword_first_place_without_a_margin_is_left_where_fusion_puts_it():
    from memory.index.fusion import AGREED_PLACE, keep_distinct

    scores = {n: 1.0 / (60 + n) for n in range(1, 11)}
    close = [(10, 4.0), (9, 3.0)]
    assert keep_distinct(scores, close) == scores
    lifted = keep_distinct(scores, [(10, 4.0), (9, 1.5)])
    assert sorted(lifted, key=lambda n: -lifted[n]).index(10) == AGREED_PLACE - 1
    assert keep_distinct(scores, [(10, 4.0)])[10] > scores[10]


@pytest.mark.parametrize("question", ["can enterprise customers get a refund?", "who is on call this week", "Lisbon"])
def test_views_of_one_retrieval_are_what_their_own_searches_give(corpus, question):
    """ask_company_memory reads its passages and its answer card's from one retrieval: each must be
    what its own search gives, so the card an assistant gets stays the page's."""
    from memory.search.evidence import CARD_VIEW, card_search
    from memory.search.passages import View, search_views

    save(corpus, "Refund policy, older", "Refunds were once limited to 14 days for enterprise customers.")
    passages, card = search_views(actor=corpus, query=question, views=[View(top_k=3), CARD_VIEW])
    alone = search_chunks(actor=corpus, query=question, top_k=3)

    def seen(hits):
        return [(hit.chunk_id, hit.score, hit.ranks, hit.more, hit.similarity) for hit in hits]

    assert seen(passages.hits) == seen(alone.hits)
    assert seen(card.hits) == seen(card_search(actor=corpus, question=question, as_of=None))
    assert card.timings_ms["total"] >= passages.timings_ms["total"]
