import json
import logging
from datetime import UTC, datetime
from io import BytesIO, StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from pypdf import PdfWriter
from pypdf.generic import DecodedStreamObject, DictionaryObject, NameObject

from brain.models import Organisation
from conftest import make_user
from memory.models import Chunk, Document

pytestmark = pytest.mark.django_db


def run(*args, **kw):
    out, err = StringIO(), StringIO()
    call_command(*args, stdout=out, stderr=err, **kw)
    return out.getvalue(), err.getvalue()


@pytest.fixture(autouse=True)
def command_log_in_tmp(settings, tmp_path):
    settings.DATA_DIR = tmp_path / "data"  # the ingest commands' log file


@pytest.fixture
def admin_org(org):
    make_user(org, role="admin", email="admin@example.com")
    return org


@pytest.fixture
def folder(tmp_path):
    (tmp_path / "handbook.md").write_text("# Handbook\n\nHolidays: 25 days a year.\n")
    (tmp_path / "notes.txt").write_text("The VPN is at vpn.example.com.")
    (tmp_path / "broken.pdf").write_bytes(b"%PDF-1.4 this is not really a pdf")
    (tmp_path / "ignored.bin").write_bytes(b"\x00\x01")
    return tmp_path


def test_ingest_loads_a_folder_skips_what_it_cannot_read_and_summarises(admin_org, folder):
    out, err = run("ingest", str(folder), "--org", admin_org.slug, "--wait", "--no-progress")
    assert "2 documents, 0 unchanged, 0 skipped, 1 failed" in out
    assert "chunks" in out
    assert "broken.pdf" in err
    assert set(Document.objects.filter(org=admin_org).values_list("status", flat=True)) == {"ready"}
    again, _ = run("ingest", str(folder), "--org", admin_org.slug, "--wait", "--no-progress")
    assert "0 documents, 2 unchanged" in again


def pdf_with_a_broken_cross_reference(text: str) -> bytes:
    """A one-page PDF whose startxref points nowhere: pypdf reads it, warning about the repair."""
    writer = PdfWriter()
    page = writer.add_blank_page(300, 300)
    font = DictionaryObject(
        {
            NameObject("/Type"): NameObject("/Font"),
            NameObject("/Subtype"): NameObject("/Type1"),
            NameObject("/BaseFont"): NameObject("/Helvetica"),
        }
    )
    fonts = DictionaryObject({NameObject("/F1"): writer._add_object(font)})
    page[NameObject("/Resources")] = DictionaryObject({NameObject("/Font"): fonts})
    stream = DecodedStreamObject()
    stream.set_data(f"BT /F1 12 Tf 20 200 Td ({text}) Tj ET".encode())
    page[NameObject("/Contents")] = writer._add_object(stream)
    out = BytesIO()
    writer.write(out)
    data = out.getvalue()
    return data[: data.rfind(b"startxref")] + b"startxref\n99999\n%%EOF\n"


def test_ingest_wait_shows_a_bar_of_the_ingestion_with_its_total_percentage_and_eta(admin_org, folder):
    out, err = run("ingest", str(folder / "handbook.md"), str(folder / "notes.txt"), "--org", admin_org.slug, "--wait")
    assert "reading: 2file" in err
    first, last = err.split("ingesting:", 1)[1], err.rsplit("ingesting:", 1)[1]
    assert first.lstrip().startswith("0%")
    assert last.lstrip().startswith("100%|")
    assert "2/2 [" in last  # done/total [elapsed<left, rate]
    assert "<00:00" in last
    assert "\n" not in first.rstrip("\n")  # redrawn in place, not on a line of its own each time
    assert "2 documents, 0 unchanged, 0 skipped, 0 failed, 0 waiting" in out


def test_ingest_counts_skipped_and_failed_files_and_documents_alike_and_says_why_each(
    admin_org, tmp_path, monkeypatch, caplog
):
    (tmp_path / "handbook.md").write_text("# Handbook\n\nHolidays: 25 days a year.\n")
    (tmp_path / "empty.txt").write_text("  \n")
    (tmp_path / "broken.pdf").write_bytes(b"%PDF-1.4 this is not really a pdf")

    def broken(documents, texts):
        raise RuntimeError("model file missing")

    monkeypatch.setattr("memory.documents.ingestion._embed", broken)
    out, err = run("ingest", str(tmp_path), "--org", admin_org.slug, "--wait", "--no-progress")

    assert "1 documents, 0 unchanged, 1 skipped, 2 failed, 0 waiting, 0 chunks" in out
    assert f"skipped {tmp_path / 'empty.txt'}: no text in it" in err
    assert f"failed {tmp_path / 'broken.pdf'}: not a readable PDF" in err
    document = Document.objects.get(org=admin_org)
    assert f"failed {document.public_id} 'Handbook': RuntimeError: model file missing" in err
    assert f"manage.py ingestion retry-failed --org {admin_org.slug}" in out
    assert "1 could not be read or were too long" in out
    assert "Traceback" not in caplog.text + err  # the details are in the log file
    assert "RuntimeError: model file missing" in (tmp_path / "data" / "logs" / "ingest.log").read_text()


def test_ingest_while_paused_says_what_waits_and_how_to_resume(admin_org, folder):
    run("ingestion", "pause", "--org", admin_org.slug)
    out, _ = run("ingest", str(folder / "notes.txt"), "--org", admin_org.slug, "--wait", "--no-progress")
    assert "1 documents, 0 unchanged, 0 skipped, 0 failed, 1 waiting, 0 chunks" in out
    assert f"Follow the ingestion: manage.py ingestion status --org {admin_org.slug}" in out
    assert f"Resume: manage.py ingestion resume --org {admin_org.slug}" in out


def test_pdf_reader_warnings_go_to_the_log_file_not_the_terminal(admin_org, tmp_path, caplog):
    (tmp_path / "files").mkdir()
    (tmp_path / "files" / "vpn.pdf").write_bytes(pdf_with_a_broken_cross_reference("The VPN moved to vpn2."))
    out, err = run("ingest", str(tmp_path / "files"), "--org", admin_org.slug, "--no-progress")
    assert Document.objects.get(org=admin_org).content == "The VPN moved to vpn2."
    assert "startxref" not in caplog.text + out + err  # nothing reached the console handler
    log = tmp_path / "data" / "logs" / "ingest.log"
    assert "WARNING pypdf._reader: incorrect startxref pointer" in log.read_text()
    assert f"warning(s) or error(s) of the readers and the ingestion are in {log}" in out
    assert not logging.getLogger("pypdf").handlers  # put back as they were
    assert logging.getLogger("pypdf").propagate


def test_ingest_without_wait_queues_for_the_worker_with_category_and_kind(admin_org, folder):
    out, _ = run("ingest", str(folder / "notes.txt"), "--org", admin_org.slug, "--source-kind", "wiki", "--no-progress")
    assert "queued for the worker" in out
    assert f"Follow the ingestion: manage.py ingestion status --org {admin_org.slug}" in out
    document = Document.objects.get(org=admin_org)
    assert document.status == "queued"
    assert document.source_kind == "wiki"
    assert document.category.slug == "general"


def test_ingest_skips_a_text_file_with_nul_and_loads_deep_html_and_nul_escapes(admin_org, tmp_path):
    (tmp_path / "binary.txt").write_bytes(b"looks like text\x00but is not")
    (tmp_path / "deep.html").write_text("<div>" * 50_000 + "Deep page about the VPN." + "</div>" * 50_000)
    (tmp_path / "chat" / "general").mkdir(parents=True)
    day = [{"user": "U1", "text": "The VPN moved\u0000 to vpn2.", "ts": "1705226400.0"}]
    (tmp_path / "chat" / "general" / "2024-01-14.json").write_text(json.dumps(day))

    out, err = run("ingest", str(tmp_path), "--org", admin_org.slug, "--wait", "--no-progress")

    assert "2 documents, 0 unchanged, 0 skipped, 1 failed" in out
    assert "binary.txt" in err
    assert "NUL" in err
    assert set(Document.objects.filter(org=admin_org).values_list("status", flat=True)) == {"ready"}
    assert Document.objects.filter(org=admin_org, content__contains="The VPN moved to vpn2.").exists()


def test_ingest_explains_bad_arguments(admin_org, folder):
    with pytest.raises(CommandError, match="No such file"):
        run("ingest", str(folder / "nope"), "--org", admin_org.slug)
    with pytest.raises(CommandError, match="No organisation"):
        run("ingest", str(folder), "--org", "nope")
    with pytest.raises(CommandError, match="Unknown category"):
        run("ingest", str(folder / "notes.txt"), "--org", admin_org.slug, "--category", "nope", "--no-progress")


def test_pause_status_and_resume(admin_org, folder):
    run("ingestion", "pause", "--org", admin_org.slug)
    run("ingest", str(folder / "notes.txt"), "--org", admin_org.slug, "--no-progress")
    status, _ = run("ingestion", "status", "--org", admin_org.slug)
    assert "paused" in status
    assert "waiting 1" in status
    resumed, _ = run("ingestion", "resume", "--org", admin_org.slug)
    assert "1 waiting document(s) queued" in resumed
    assert Organisation.objects.get(pk=admin_org.pk).ingestion_paused_at is None


def test_reembed_rewrites_every_vector(admin_org, folder):
    run("ingest", str(folder), "--org", admin_org.slug, "--wait", "--no-progress")
    Chunk.objects.update(embedding=[0.0] * 383 + [1.0])
    out, _ = run("reembed", "--org", admin_org.slug)
    assert "re-embedded 2 chunks" in out
    assert all(abs(v[-1]) < 0.9 for v in Chunk.objects.values_list("embedding", flat=True))


def test_eval_retrieval_scores_any_data_in_the_layout(tmp_path):
    docs = [
        {"doc_id": "m1:0", "corpus": "m1", "speaker": "Ana", "text": "We agreed the launch moves to May."},
        {"doc_id": "m1:1", "corpus": "m1", "speaker": "Ben", "text": "Marketing needs two more designers."},
        {"doc_id": "m2:0", "corpus": "m2", "speaker": "Cy", "text": "The launch in the other meeting is June."},
    ]
    queries = [
        {"qid": "q1", "corpus": "m1", "query": "When is the launch?", "gold_doc_ids": ["m1:0"], "category": "a"},
        {"qid": "q2", "corpus": "m1", "query": "What does marketing need?", "gold_doc_ids": ["m1:1"], "category": "b"},
    ]
    (tmp_path / "d.jsonl").write_text("\n".join(json.dumps(d) for d in docs))
    (tmp_path / "q.jsonl").write_text("\n".join(json.dumps(q) for q in queries))
    out, _ = run(
        "eval_retrieval",
        "--docs",
        str(tmp_path / "d.jsonl"),
        "--queries",
        str(tmp_path / "q.jsonl"),
        "--k",
        "1,5",
        "--out",
        str(tmp_path / "ranked.jsonl"),
    )
    assert "auto     overall        2   100.0   100.0" in out
    assert "auto against BM25 (keyword only) on this data: any@10 100.0 vs " in out
    assert "auto against dense (vector only) on this data: any@10 100.0 vs " in out
    ranked = [json.loads(line) for line in (tmp_path / "ranked.jsonl").read_text().splitlines()]
    assert {r["qid"] for r in ranked} == {"q1", "q2"}
    assert all("m2:0" not in r["ranked"] for r in ranked)
    assert not Organisation.objects.filter(slug__startswith="eval-").exists()


def test_eval_retrieval_loads_a_mixed_memory_and_scores_one_split_reusing_a_kept_load(tmp_path):
    docs = [
        {"doc_id": "k:page-1", "corpus": "k", "kind": "page", "title": "Parking",
         "text": "# Parking\n\nVisitors park in bay C behind building B.", "timestamp": "2026-03-01T09:00:00+00:00"},
        {"doc_id": "k:chat-1", "corpus": "k", "kind": "chat", "title": "#ops", "speaker": "Ines",
         "text": "where do visitors park?", "conversation": "#ops", "session": "#ops:s1",
         "timestamp": "2026-03-02T09:00:00+00:00"},
    ]  # fmt: skip
    queries = [
        {"qid": "q1", "corpus": "k", "query": "Where do visitors park?", "gold_doc_ids": ["k:page-1"],
         "split": "dev", "source_kind": "page"},
        {"qid": "q2", "corpus": "k", "query": "Who asked about parking?", "gold_doc_ids": ["k:chat-1"],
         "split": "test", "source_kind": "chat"},
    ]  # fmt: skip
    (tmp_path / "d.jsonl").write_text("\n".join(json.dumps(d) for d in docs))
    (tmp_path / "q.jsonl").write_text("\n".join(json.dumps(q) for q in queries))
    args = ["--docs", str(tmp_path / "d.jsonl"), "--queries", str(tmp_path / "q.jsonl"), "--k", "1", "--modes", "auto"]
    out, _ = run("eval_retrieval", *args, "--split", "dev", "--keep")
    assert "1 queries over 1 corpora" in out
    assert "auto     from page      1" in out
    page = Document.objects.get(external_id="k:page-1")
    assert (page.source_kind, page.content_type, page.speaker, page.conversation) == ("page", "text/markdown", "", "")
    chat = Document.objects.get(external_id="k:chat-1")
    assert (chat.source_kind, chat.speaker, chat.conversation) == ("chat", "Ines", "#ops")
    again, _ = run("eval_retrieval", *args, "--split", "test", "--reuse")
    assert "1 queries over 1 corpora" in again
    assert Document.objects.filter(external_id="k:page-1").count() == 1  # scored on the kept load
    with pytest.raises(CommandError, match="no query has the split"):
        run("eval_retrieval", *args, "--split", "final")


def test_eval_retrieval_saves_each_line_as_a_message_with_its_speaker_time_and_session(tmp_path):
    docs = [
        {"doc_id": "c1:0", "corpus": "c1", "speaker": "Caroline", "text": "I went to a support group yesterday.",
         "timestamp": "1:56 pm on 8 May, 2023", "session": "session_1"},
        {"doc_id": "c1:1", "corpus": "c1", "speaker": "Melanie", "text": "That sounds powerful.",
         "timestamp": "2023-05-08T13:57:00", "session": "session_1"},
        {"doc_id": "c1:2", "corpus": "c1", "speaker": "Melanie", "text": "   ", "timestamp": "whenever"},
    ]  # fmt: skip
    queries = [{"qid": "q1", "corpus": "c1", "query": "When did Caroline go to the support group?",
                "gold_doc_ids": ["c1:0"]}]  # fmt: skip
    (tmp_path / "d.jsonl").write_text("\n".join(json.dumps(d) for d in docs))
    (tmp_path / "q.jsonl").write_text("\n".join(json.dumps(q) for q in queries))
    out, err = run(
        "eval_retrieval",
        "--docs",
        str(tmp_path / "d.jsonl"),
        "--queries",
        str(tmp_path / "q.jsonl"),
        "--k",
        "1",
        "--modes",
        "auto",
        "--keep",
    )
    assert "auto     overall        1   100.0   100.0" in out
    assert "1 lines without text are left out" in err
    assert "1 timestamps could not be read" in err
    saved = {d.external_id: d for d in Document.objects.filter(source_kind="eval")}
    assert set(saved) == {"c1:0", "c1:1"}
    first = saved["c1:0"]
    assert (first.speaker, first.conversation, first.session) == ("Caroline", "c1", "session_1")
    assert first.occurred_at == datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    assert Chunk.objects.get(document=saved["c1:1"]).speaker == "Melanie"
