"""The memory tools through the MCP SDK client: saving, searching and retrieving evidence."""

from __future__ import annotations

import pytest

from conftest import make_actor, make_org, make_token, make_user
from memory.documents.ingestion import ingest_documents
from memory.models import Document
from tests.conftest import call

pytestmark = pytest.mark.django_db(transaction=True)


def ingest_all(org):
    ingest_documents(document_ids=list(Document.objects.filter(org=org, status="queued").values_list("pk", flat=True)))


def test_add_search_and_retrieve_through_mcp(brain_url):
    org = make_org()
    token = make_token(org).plaintext
    saved = call(
        brain_url,
        token,
        "add_company_knowledge",
        {
            "title": "Refund policy",
            "content": "# Refunds\n\nEnterprise customers get a full refund within 30 days.",
            "content_type": "text/markdown",
            "source_url": "https://wiki.example/refunds",
            "external_id": "wiki-7",
        },
    )
    assert not saved.is_error
    assert saved.structured_content == {
        "message": "Done.",
        "detail": "This information will be available in a few minutes.",
        "title": "Refund policy",
        "unchanged": False,
        "duplicate_of": None,
    }
    assert "doc_" not in saved.content[0].text
    assert "wiki-7" not in saved.content[0].text
    ingest_all(org)
    found = call(brain_url, token, "search_company_memory", {"query": "refund for enterprise customers", "top_k": 100})
    hit = found.structured_content["hits"][0]
    assert found.structured_content["count"] == 1
    assert hit["title"] == "Refund policy"
    assert hit["external_url"] == "https://wiki.example/refunds"
    assert hit["retrievable"] is True
    page = call(brain_url, token, "retrieve_company_memory", {"document_ids": [hit["document_id"]]}).structured_content
    assert page["pages"][0]["content"].startswith("# Refunds")
    assert page["pages"][0]["chunk_ids"] == [hit["chunk_id"]]
    passage = call(brain_url, token, "retrieve_company_memory", {"chunk_ids": [hit["chunk_id"]]}).structured_content
    assert passage["pages"][0]["content"] == "Enterprise customers get a full refund within 30 days."


def test_the_confirmation_speaks_the_organisations_language(brain_url):
    org = make_org(language="es")
    result = call(
        brain_url, make_token(org).plaintext, "add_company_knowledge", {"title": "Horario", "content": "9 a 6"}
    )
    assert result.structured_content["message"] == "Listo."
    assert result.structured_content["detail"] == "En unos minutos esta informacion estara disponible."
    assert result.structured_content["title"] == "Horario"


def test_a_resend_with_the_same_external_id_is_a_no_op(brain_url):
    org = make_org()
    token = make_token(org).plaintext
    args = {"title": "Policy", "content": "Same words.", "external_id": "p-1"}
    call(brain_url, token, "add_company_knowledge", args)
    call(brain_url, token, "add_company_knowledge", args)
    assert Document.objects.filter(org=org).count() == 1
    call(brain_url, token, "add_company_knowledge", dict(args, content="New words."))
    assert list(Document.objects.filter(org=org).values_list("version", flat=True).order_by("version")) == [1, 2]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"title": "t" * 241, "content": "c"}, "'title' has 241 characters; the limit is 240"),
        ({"title": "t", "content": "c" * 2_000_001}, "'content' has 2000001 characters; the limit is 2000000"),
        ({"title": "t", "content": "c", "source_url": "u" * 1001}, "'source_url' has 1001 characters"),
        ({"title": "t", "content": "c", "external_id": "e" * 241}, "'external_id' has 241 characters"),
        ({"title": "t", "content": "c", "content_type": "text/html"}, "'content_type' must be one of"),
        ({"title": "", "content": "c"}, "'title' must not be empty"),
    ],
)
def test_oversized_or_malformed_knowledge_is_refused_not_cut(brain_url, args, message):
    org = make_org()
    result = call(brain_url, make_token(org).plaintext, "add_company_knowledge", args)
    assert result.is_error
    assert message in result.content[0].text
    assert not Document.objects.filter(org=org).exists()


def test_limits_at_their_edges_are_accepted(brain_url):
    org = make_org()
    args = {"title": "t" * 240, "content": "c" * 2_000_000, "source_url": "u" * 1000, "external_id": "e" * 240}
    assert not call(brain_url, make_token(org).plaintext, "add_company_knowledge", args).is_error


def test_a_read_only_token_cannot_save(brain_url):
    org = make_org()
    result = call(
        brain_url, make_token(org, scopes="read").plaintext, "add_company_knowledge", {"title": "t", "content": "c"}
    )
    assert result.is_error
    assert "read-only" in result.content[0].text


def test_retrieve_takes_at_most_three_unique_ids_or_twenty_with_diagnostics(brain_url):
    org = make_org()
    token = make_token(org).plaintext
    for i in range(5):
        call(brain_url, token, "add_company_knowledge", {"title": f"Doc {i}", "content": f"Topic {i} " * 3000})
    ingest_all(org)
    ids = [f"doc_{pk}" for pk in Document.objects.filter(org=org).order_by("pk").values_list("pk", flat=True)]

    four = call(brain_url, token, "retrieve_company_memory", {"document_ids": ids[:4]})
    assert four.is_error
    assert four.content[0].text == "Provide at most 3 unique document or chunk ids."
    blanks_and_repeats = {"document_ids": [ids[0], " ", ids[0], "", ids[1]], "chunk_ids": [""]}
    ok = call(brain_url, token, "retrieve_company_memory", blanks_and_repeats).structured_content
    assert [p["document_id"] for p in ok["pages"]] == ids[:2]
    wide = call(brain_url, token, "retrieve_company_memory", {"document_ids": ids[::-1], "include_diagnostics": True})
    assert not wide.is_error
    # in the order asked, whatever order the rows have in the database
    assert [p["document_id"] for p in wide.structured_content["pages"]] == ids[::-1]
    sixteen_more = [f"doc_{n}" for n in range(900000, 900016)]
    too_wide = call(
        brain_url, token, "retrieve_company_memory", {"document_ids": ids + sixteen_more, "include_diagnostics": True}
    )
    assert too_wide.is_error
    assert too_wide.content[0].text == "Provide at most 20 unique document or chunk ids."
    nothing = call(brain_url, token, "retrieve_company_memory", {"document_ids": [" "]})
    assert nothing.is_error
    assert "at least one" in nothing.content[0].text


def test_retrieve_cuts_long_pages_says_so_and_clamps_the_budget(brain_url):
    org = make_org()
    token = make_token(org).plaintext
    call(brain_url, token, "add_company_knowledge", {"title": "Long", "content": "word " * 10_000})
    ingest_all(org)
    doc = f"doc_{Document.objects.get(org=org).pk}"
    small = call(brain_url, token, "retrieve_company_memory", {"document_ids": [doc], "max_chars_per_document": 5})
    page = small.structured_content["pages"][0]
    assert page["truncated"] is True
    assert len(page["content"]) == 1000
    whole = call(brain_url, token, "retrieve_company_memory", {"document_ids": [doc], "max_chars_per_document": 10**9})
    assert whole.structured_content["pages"][0]["truncated"] is False


def test_ids_of_another_organisation_are_simply_missing(brain_url):
    mine, theirs = make_org(), make_org()
    call(brain_url, make_token(theirs).plaintext, "add_company_knowledge", {"title": "Secret", "content": "Bluebird"})
    ingest_all(theirs)
    their_doc = Document.objects.get(org=theirs)
    result = call(
        brain_url,
        make_token(mine).plaintext,
        "retrieve_company_memory",
        {"document_ids": [f"doc_{their_doc.pk}", "garbage"], "chunk_ids": ["chunk_1"]},
    )
    assert result.structured_content["pages"] == []
    assert set(result.structured_content["missing"]) == {f"doc_{their_doc.pk}", "garbage", "chunk_1"}
    search = call(brain_url, make_token(mine).plaintext, "search_company_memory", {"query": "Bluebird"})
    assert search.structured_content["count"] == 0
    assert "nothing" in search.content[0].text


def test_search_clamps_top_k_and_reports_diagnostics(brain_url):
    org = make_org()
    token = make_token(org).plaintext
    for i in range(3):
        call(
            brain_url,
            token,
            "add_company_knowledge",
            {"title": f"Team {i}", "content": f"Team {i} owns billing area {i}."},
        )
    ingest_all(org)
    args = {"query": "billing", "top_k": 0, "include_diagnostics": True, "retrieval_mode": "keyword"}
    result = call(brain_url, token, "search_company_memory", args)
    content = result.structured_content
    assert content["count"] == 1
    assert content["diagnostics"]["mode"] == "keyword"
    assert "keyword" in content["hits"][0]["diagnostics"]["ranks"]
    bad = call(brain_url, token, "search_company_memory", {"query": "x", "as_of": "next tuesday"})
    assert bad.is_error
    assert "'as_of'" in bad.content[0].text


def test_a_question_about_one_side_of_an_event_over_mcp(brain_url):
    # A chat saved the way the REST API and the mail reader save it (one message a document, with
    # speaker and time), searched by an assistant for what was said before the launch.
    from datetime import UTC, datetime

    from memory.tests.factories import said

    org = make_org()
    user = make_user(org)
    writer = make_actor(org, user)
    said(writer, "Priya", "Pricing will be twenty dollars a seat for everyone.", datetime(2026, 1, 10, tzinfo=UTC))
    said(writer, "Tom", "We launched today, the site is live!", datetime(2026, 2, 1, tzinfo=UTC))
    said(writer, "Priya", "Pricing moved to twenty-five dollars a seat.", datetime(2026, 3, 5, tzinfo=UTC))
    token = make_token(org, user, scopes="read").plaintext
    for side, day in (("before", "2026-01-10"), ("after", "2026-03-05")):
        args = {"query": f"What did Priya say about pricing {side} the launch?", "include_diagnostics": True}
        found = call(brain_url, token, "search_company_memory", args).structured_content
        first = found["hits"][0]
        assert (first["speaker"], first["said_at"][:10]) == ("Priya", day)
        assert "side" in first["diagnostics"]["ranks"]


def test_a_message_saved_over_mcp_with_its_speaker_and_time_is_found_by_them(brain_url):
    from datetime import UTC, datetime

    # An assistant logging what people said: each message with who said it and when, as one
    # conversation. A question naming the person and the month finds that person's message of
    # that month, though the other messages speak of the same thing.
    org = make_org()
    token = make_token(org).plaintext
    messages = [
        ("Priya", "2026-04-14T09:00:00Z", "The BigCo pilot could start in the summer."),
        ("Tom", "2026-05-12T09:30:00", "Any news on when the BigCo pilot starts?"),
        ("Priya", "2026-05-12T09:31:00+02:00", "Yes: the BigCo pilot starts on the first of June."),
        ("Tom", "2026-06-02T10:00:00Z", "The BigCo pilot started yesterday."),
    ]
    for n, (speaker, moment, text) in enumerate(messages):
        args = {"title": f"#sales, {speaker}", "content": text, "speaker": speaker, "occurred_at": moment,
                "conversation": "#sales", "session": moment[:10], "external_id": f"sales-{n}"}  # fmt: skip
        assert not call(brain_url, token, "add_company_knowledge", args).is_error
    saved = Document.objects.get(org=org, external_id="sales-2")
    assert (saved.speaker, saved.conversation, saved.session) == ("Priya", "#sales", "2026-05-12")
    assert saved.occurred_at == datetime(2026, 5, 12, 7, 31, tzinfo=UTC)
    assert Document.objects.get(org=org, external_id="sales-1").occurred_at == datetime(2026, 5, 12, 9, 30, tzinfo=UTC)
    ingest_all(org)
    found = call(brain_url, token, "search_company_memory", {"query": "What did Priya say in May about the pilot?"})
    first = found.structured_content["hits"][0]
    assert (first["speaker"], first["said_at"][:10]) == ("Priya", "2026-05-12")
    assert "first of June" in first["snippet"]


def test_search_filters_narrow_the_search_and_as_of_reads_what_the_sources_said(brain_url):
    from datetime import UTC, datetime

    from brain.models import Category
    from memory.tests.factories import said, save

    org = make_org()
    user = make_user(org)
    writer = make_actor(org, user)
    Category.objects.create(org=org, slug="sales", name="Sales")
    said(writer, "Priya", "The BigCo pilot budget is 40k EUR.", datetime(2025, 3, 1, tzinfo=UTC), source_kind="chat")
    said(writer, "Tom", "The BigCo pilot budget may grow.", datetime(2025, 5, 1, tzinfo=UTC), source_kind="chat")
    save(writer, "BigCo pilot page", "Pilot budget for BigCo: 40k EUR.", source_kind="wiki", category="sales")
    token = make_token(org, user, scopes="read").plaintext

    def found(**args):
        result = call(brain_url, token, "search_company_memory", {"query": "BigCo pilot budget", "top_k": 20, **args})
        assert not result.is_error, result.content[0].text
        return sorted(hit["title"] for hit in result.structured_content["hits"])

    assert found() == ["BigCo pilot page", "Priya", "Tom"]
    assert found(source_kind="chat") == ["Priya", "Tom"]
    assert found(said_by="Tom") == ["Tom"]
    assert found(category="sales") == ["BigCo pilot page"]
    assert found(after="2025-04-01", before="2025-05-31") == ["Tom"]
    # Imported history answers as of its own dates by default; as what Brain had learned, not yet.
    assert found(as_of="2025-03-11") == ["Priya"]
    assert found(as_of="2025-03-11", as_of_by="learned") == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"category": "Board"}, "No category called 'Board' that you can see; the categories are: General, Sales."),
        ({"after": "2025-06-02", "before": "2025-06-01"}, "after (2025-06-02) is later than before (2025-06-01)"),
        ({"as_of_by": "recorded"}, "'as_of_by'"),
        ({"after": "june"}, "'after'"),
    ],
)
def test_a_search_filter_that_cannot_hold_is_refused_in_words(brain_url, args, message):
    from brain.models import Category

    org = make_org()
    Category.objects.create(org=org, slug="sales", name="Sales")
    Category.objects.create(org=org, slug="board", name="Board", restricted=True)
    result = call(brain_url, make_token(org).plaintext, "search_company_memory", {"query": "budget", **args})
    assert result.is_error
    assert message in result.content[0].text


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"speaker": "s" * 201}, "'speaker' has 201 characters; the limit is 200"),
        ({"conversation": "c" * 241}, "'conversation' has 241 characters"),
        ({"session": "s" * 241}, "'session' has 241 characters"),
        ({"occurred_at": "last tuesday"}, "'occurred_at'"),
        ({"occurred_at": "9999-12-31T23:59:59-12:00"}, "'occurred_at'"),
        ({"speaker": 7}, "'speaker'"),
    ],
)
def test_a_bad_speaker_or_time_is_refused_and_nothing_is_saved(brain_url, args, message):
    org = make_org()
    result = call(brain_url, make_token(org).plaintext, "add_company_knowledge", {"title": "t", "content": "c", **args})
    assert result.is_error
    assert message in result.content[0].text
    assert not Document.objects.filter(org=org).exists()


def test_a_speaker_written_over_several_lines_is_kept_as_one(brain_url):
    # A line break in a name would put a line of the caller's choosing in front of every turn's
    # embedded text; the name is kept on one line, whatever way it arrives.
    org = make_org()
    args = {"title": "t", "content": "c", "speaker": " Priya\n\nShah\t", "conversation": "#a\r\nb"}
    assert not call(brain_url, make_token(org).plaintext, "add_company_knowledge", args).is_error
    saved = Document.objects.get(org=org)
    assert (saved.speaker, saved.conversation) == ("Priya Shah", "#a b")


def test_ask_says_no_evidence_to_a_question_nothing_stored_is_about_and_answers_one_it_is(brain_url):
    org = make_org()
    token = make_token(org).plaintext
    for title, content in [
        ("Refund policy", "Enterprise customers get a full refund within 30 days of purchase."),
        ("On-call rota", "The platform team rotates on-call weekly; handover is on Monday at 10:00."),
        ("Office move", "The Lisbon office moves to Avenida da Liberdade in March."),
    ]:
        assert not call(brain_url, token, "add_company_knowledge", {"title": title, "content": content}).is_error
    ingest_all(org)
    off_topic = call(brain_url, token, "ask_company_memory", {"question": "How many moons does Neptune have?"})
    assert off_topic.structured_content["status"] == "no_evidence"
    assert off_topic.structured_content["evidence"] == []
    assert "has nothing on it" in off_topic.content[0].text
    on_topic = call(brain_url, token, "ask_company_memory", {"question": "Can an enterprise customer get a refund?"})
    assert on_topic.structured_content["status"] == "evidence"
    assert on_topic.structured_content["evidence"][0]["title"] == "Refund policy"
