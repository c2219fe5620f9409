"""File parsers: every sample is built in tmp_path; no database involved."""

from __future__ import annotations

import json
import mailbox
from datetime import UTC, datetime
from email.message import EmailMessage
from pathlib import Path

import pytest
from pypdf import PdfReader

from memory.extraction.files import SUPPORTED_SUFFIXES, iter_documents, parse_file
from memory.extraction.parsed import ParsedDocument, ParseError
from memory.tests.factories import write_pdf


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def only(documents: list[ParsedDocument]) -> ParsedDocument:
    assert len(documents) == 1
    return documents[0]


def make_pdf(path: Path, text: str | None, metadata: dict[str, str] | None = None) -> Path:
    drawing = None if text is None else f"BT /F1 12 Tf 20 100 Td ({text}) Tj ET"
    return write_pdf(path, drawing, width=300, height=200, metadata=metadata)


def make_email(subject: str = "Budget 2025", message_id: str | None = "<budget-1@example.com>") -> EmailMessage:
    message = EmailMessage()
    message["From"] = "Alice Martin <alice@example.com>"
    message["To"] = "Bob <bob@example.com>, carol@example.com"
    message["Cc"] = "dave@example.com"
    message["Subject"] = subject
    message["Date"] = "Tue, 14 Jan 2025 09:30:00 +0100"
    if message_id:
        message["Message-ID"] = message_id
    message.set_content("Hi Bob,\n\nThe budget is approved.\n\nAlice")
    return message


def make_slack_export(root: Path) -> Path:
    users = [
        {"id": "U1", "name": "alice", "real_name": "Alice Martin", "profile": {"real_name": "Alice Martin"}},
        {"id": "U2", "name": "bob", "profile": {"real_name": "", "display_name": "Bobby"}},
    ]
    write(root / "users.json", json.dumps(users))
    write(root / "channels.json", json.dumps([{"id": "C1", "name": "general"}, {"id": "C2", "name": "random"}]))
    day1 = [
        {"type": "message", "subtype": "channel_join", "user": "U2", "text": "<@U2> has joined", "ts": "1705222800.0"},
        {"type": "message", "user": "U1", "text": "Hello <@U2>, ship it?", "ts": "1705226400.000100"},
        {"type": "message", "user": "U2", "text": "Yes &amp; done.\n\nDeployed.", "ts": "1705226460.000200"},
    ]
    write(root / "general" / "2024-01-14.json", json.dumps(day1))
    write(
        root / "general" / "2024-01-15.json",
        json.dumps([{"type": "message", "user": "U9", "text": "hi", "ts": "1705312800.0"}]),
    )
    write(
        root / "random" / "2024-01-14.json",
        json.dumps([{"type": "message", "user": "U1", "text": "lunch?", "ts": "1705233600.0"}]),
    )
    return root


# Markdown and text


def test_it_reads_markdown_keeping_its_syntax_and_first_heading_as_title(tmp_path: Path) -> None:
    path = write(tmp_path / "notes" / "onboarding.md", "Intro line\n\n# Onboarding guide\n\n- step **one**\n")

    document = only(parse_file(path, root=tmp_path))

    assert document.title == "Onboarding guide"
    assert document.content == "Intro line\n\n# Onboarding guide\n\n- step **one**"
    assert document.content_type == "text/markdown"
    assert document.source_kind == "upload"
    assert document.external_id == "notes/onboarding.md"
    assert document.metadata == {"path": "notes/onboarding.md"}
    assert document.occurred_at is None


def test_a_markdown_title_ignores_comments_in_code_blocks_and_falls_back_to_the_stem(tmp_path: Path) -> None:
    path = write(tmp_path / "deploy_notes.markdown", "```bash\n# not a title\nmake deploy\n```\n")

    assert only(parse_file(path)).title == "deploy notes"


def test_it_reads_plain_text_with_the_stem_as_title(tmp_path: Path) -> None:
    path = write(tmp_path / "meeting-notes_2024.txt", "  We agreed on Friday releases.\r\n")

    document = only(parse_file(path, root=tmp_path))

    assert document.title == "meeting notes 2024"
    assert document.content == "We agreed on Friday releases."
    assert document.content_type == "text/plain"
    assert document.external_id == "meeting-notes_2024.txt"


def test_text_that_is_not_utf8_is_read_as_latin_1(tmp_path: Path) -> None:
    path = write(tmp_path / "legacy.txt", "Café crème".encode("latin-1"))

    assert only(parse_file(path)).content == "Café crème"


def test_a_text_file_with_binary_data_is_an_error(tmp_path: Path) -> None:
    path = write(tmp_path / "blob.txt", b"abc\x00\x01\x02")

    with pytest.raises(ParseError, match="binary"):
        parse_file(path)


def test_whitespace_only_files_give_no_documents(tmp_path: Path) -> None:
    for name in ("empty.md", "empty.txt", "empty.html", "empty.pdf", "empty.json", "empty.eml", "empty.mbox"):
        assert parse_file(write(tmp_path / name, " \n\t\n")) == []


def test_an_unsupported_suffix_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ParseError, match="unsupported file type .docx"):
        parse_file(write(tmp_path / "report.docx", "x"))


def test_long_titles_are_cut_to_240_characters(tmp_path: Path) -> None:
    path = write(tmp_path / "long.md", "# " + "word " * 100)

    assert len(only(parse_file(path)).title) == 240


# HTML

PAGE = """<!doctype html>
<html><head><title>Release process</title><style>body { color: red }</style><script>track()</script></head>
<body>
<nav><a href="/">Home</a> <a href="/docs">Docs</a></nav>
<h1>Releasing</h1>
<p>We release <b>every</b> Friday.</p>
<!-- internal comment -->
<h2>Steps</h2>
<ul><li>Tag the build<ul><li>use semver</li></ul></li><li>Announce it</li></ul>
<table><tr><th>Owner</th><th>Day</th></tr><tr><td>Alice</td><td>Friday</td></tr></table>
<pre>make release
  --dry-run</pre>
<script>alert("no")</script>
<footer>Copyright ACME</footer>
</body></html>
"""


def test_it_converts_html_to_markdown_without_scripts_navigation_or_footer(tmp_path: Path) -> None:
    document = only(parse_file(write(tmp_path / "release.html", PAGE)))

    assert document.title == "Release process"
    assert document.content_type == "text/markdown"
    assert document.source_kind == "upload"
    assert document.content == (
        "# Releasing\n\n"
        "We release every Friday.\n\n"
        "## Steps\n\n"
        "- Tag the build\n  - use semver\n- Announce it\n\n"
        "| Owner | Day |\n| --- | --- |\n| Alice | Friday |\n\n"
        "```\nmake release\n  --dry-run\n```"
    )
    for dropped in ("track()", "alert", "Home", "Copyright", "color: red", "internal comment"):
        assert dropped not in document.content


def test_an_html_title_falls_back_to_the_first_h1_then_the_stem(tmp_path: Path) -> None:
    with_h1 = write(tmp_path / "a.htm", "<body><h1>Pricing  FAQ</h1><p>Answers.</p></body>")
    bare = write(tmp_path / "sales_faq.html", "<p>Just a paragraph.</p>")

    assert only(parse_file(with_h1)).title == "Pricing FAQ"
    assert only(parse_file(bare)).title == "sales faq"
    assert only(parse_file(bare)).content == "Just a paragraph."


# PDF


def test_it_extracts_text_title_author_and_creation_date_from_a_pdf(tmp_path: Path) -> None:
    path = make_pdf(
        tmp_path / "q3.pdf",
        "Quarterly revenue grew",
        {"/Title": "Q3 Report", "/Author": "Finance", "/CreationDate": "D:20240115120000Z"},
    )
    assert "Quarterly revenue grew" in PdfReader(path).pages[0].extract_text()

    document = only(parse_file(path, root=tmp_path))

    assert document.title == "Q3 Report"
    assert document.content == "Quarterly revenue grew"
    assert document.content_type == "text/plain"
    assert document.source_kind == "upload"
    assert document.external_id == "q3.pdf"
    assert document.occurred_at == datetime(2024, 1, 15, 12, 0, tzinfo=UTC)
    assert document.metadata == {
        "path": "q3.pdf", "pages": 1, "author": "Finance", "file_created": "2024-01-15T12:00:00+00:00"
    }  # fmt: skip


def test_a_pdf_without_a_title_is_named_after_its_file(tmp_path: Path) -> None:
    document = only(parse_file(make_pdf(tmp_path / "board_minutes.pdf", "Minutes")))

    assert document.title == "board minutes"
    assert document.occurred_at is None


def test_a_pdf_without_extractable_text_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ParseError, match=r"no extractable text \(scanned PDF\?\)"):
        parse_file(make_pdf(tmp_path / "scan.pdf", None))


def test_a_corrupt_pdf_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ParseError, match="not a readable PDF"):
        parse_file(write(tmp_path / "broken.pdf", b"%PDF-1.4\nthis is not really a pdf\n"))


# Email


def test_it_reads_an_eml_with_a_header_block_and_attachment_names(tmp_path: Path) -> None:
    message = make_email()
    message.add_attachment(b"%PDF-1.4", maintype="application", subtype="pdf", filename="budget.pdf")
    path = write(tmp_path / "mail" / "budget.eml", message.as_bytes())

    document = only(parse_file(path, root=tmp_path))

    assert document.title == "Budget 2025"
    assert document.source_kind == "email"
    assert document.content_type == "text/plain"
    assert document.external_id == "<budget-1@example.com>"
    assert document.occurred_at == datetime(2025, 1, 14, 8, 30, tzinfo=UTC)
    assert document.content == (
        "From: Alice Martin <alice@example.com>\n"
        "To: Bob <bob@example.com>, carol@example.com\n"
        "Cc: dave@example.com\n"
        "Date: Tue, 14 Jan 2025 09:30:00 +0100\n"
        "Subject: Budget 2025\n\n"
        "Hi Bob,\n\nThe budget is approved.\n\nAlice"
    )
    assert document.metadata == {
        "path": "mail/budget.eml",
        "from": "Alice Martin <alice@example.com>",
        "to": ["Bob <bob@example.com>", "carol@example.com"],
        "cc": ["dave@example.com"],
        "subject": "Budget 2025",
        "attachments": ["budget.pdf"],
    }


def test_an_html_only_email_body_is_converted_to_markdown(tmp_path: Path) -> None:
    message = make_email(subject="", message_id=None)
    message.set_content(
        "<html><body><h2>Agenda</h2><ul><li>Hiring</li></ul><script>x()</script></body></html>", subtype="html"
    )
    path = write(tmp_path / "agenda.eml", message.as_bytes())

    document = only(parse_file(path, root=tmp_path))

    assert document.title == "(no subject)"
    assert document.external_id == "email:agenda.eml#0"
    assert document.content_type == "text/markdown"
    assert document.content.endswith("\n\n## Agenda\n\n- Hiring")


def test_it_reads_every_message_of_an_mbox(tmp_path: Path) -> None:
    box = mailbox.mbox(tmp_path / "archive.mbox")
    box.add(make_email("First", "<m1@example.com>"))
    box.add(make_email("Second", None))
    box.flush()
    box.close()

    documents = parse_file(tmp_path / "archive.mbox", root=tmp_path)

    assert [d.title for d in documents] == ["First", "Second"]
    assert [d.external_id for d in documents] == ["<m1@example.com>", "email:archive.mbox#1"]
    assert all(d.source_kind == "email" and "The budget is approved." in d.content for d in documents)


def test_a_file_with_no_mbox_messages_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ParseError, match="no messages found"):
        parse_file(write(tmp_path / "odd.mbox", "just some text\n"))


# Slack


def test_it_reads_a_slack_export_one_document_per_channel_day(tmp_path: Path) -> None:
    export = make_slack_export(tmp_path / "slack")

    results = list(iter_documents([export]))

    assert [path.relative_to(export).as_posix() for path, _ in results] == [
        "general/2024-01-14.json",
        "general/2024-01-15.json",
        "random/2024-01-14.json",
    ]
    documents = [only(docs) for _, docs in results if isinstance(docs, list)]
    assert [d.external_id for d in documents] == [
        "slack:general:2024-01-14",
        "slack:general:2024-01-15",
        "slack:random:2024-01-14",
    ]
    assert [d.title for d in documents] == ["#general 2024-01-14", "#general 2024-01-15", "#random 2024-01-14"]
    assert {(d.source_kind, d.content_type) for d in documents} == {("chat", "text/markdown")}


def test_slack_turns_name_speakers_resolve_mentions_and_skip_joins(tmp_path: Path) -> None:
    export = make_slack_export(tmp_path / "slack")

    document = only(parse_file(export / "general" / "2024-01-14.json", root=export))

    assert document.content == (
        "**Alice Martin** (10:00): Hello @Bobby, ship it?\n\n**Bobby** (10:01): Yes & done.\nDeployed."
    )
    assert document.occurred_at is not None
    assert document.occurred_at.replace(microsecond=0) == datetime(2024, 1, 14, 10, 0, tzinfo=UTC)
    assert document.metadata == {
        "path": "general/2024-01-14.json",
        "channel": "general",
        "participants": ["Alice Martin", "Bobby"],
        "messages": 2,
    }


def test_an_unknown_slack_user_is_shown_by_id(tmp_path: Path) -> None:
    export = make_slack_export(tmp_path / "slack")

    assert only(parse_file(export / "general" / "2024-01-15.json")).content == "**U9** (10:00): hi"


def test_a_lone_slack_day_file_takes_its_folder_as_channel_and_unwraps_links(tmp_path: Path) -> None:
    messages = [
        {
            "type": "message",
            "user": "U7",
            "text": "See <https://x.io/doc|the doc> in <#C2|random>",
            "ts": "1705312800.0",
        },
        {"type": "message", "username": "deploybot", "text": "", "files": [{"name": "log.txt"}], "ts": "1705312860.0"},
        {"type": "message", "user": "U7", "text": "   ", "ts": "1705312920.0"},
    ]
    path = write(tmp_path / "ops" / "2024-01-15.json", json.dumps(messages))

    document = only(parse_file(path))

    assert document.external_id == "slack:ops:2024-01-15"
    assert (
        document.content
        == "**U7** (10:00): See [the doc](https://x.io/doc) in #random\n\n**deploybot** (10:01): [file: log.txt]"
    )


def test_a_json_file_that_is_not_a_slack_day_is_an_error(tmp_path: Path) -> None:
    path = write(tmp_path / "config.json", json.dumps({"debug": True}))

    with pytest.raises(ParseError, match="not a Slack export day file: config.json"):
        parse_file(path, root=tmp_path)


def test_invalid_json_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ParseError, match="invalid JSON"):
        parse_file(write(tmp_path / "broken.json", "[{"))


# Walking


def test_iter_documents_reports_bad_files_and_keeps_walking(tmp_path: Path) -> None:
    write(tmp_path / "a_broken.pdf", b"%PDF-1.4\ngarbage")
    write(tmp_path / "b_invalid.json", "{not json")
    write(tmp_path / "c_good.md", "# Good\n\nStill read.")

    results = dict(iter_documents([tmp_path]))

    assert isinstance(results[tmp_path / "a_broken.pdf"], ParseError)
    assert isinstance(results[tmp_path / "b_invalid.json"], ParseError)
    good = results[tmp_path / "c_good.md"]
    assert isinstance(good, list)
    assert only(good).title == "Good"


def test_iter_documents_walks_sorted_and_skips_hidden_and_unsupported_files(tmp_path: Path) -> None:
    write(tmp_path / "b.txt", "bee")
    write(tmp_path / "a" / "deep" / "z.md", "zed")
    write(tmp_path / ".hidden.md", "secret")
    write(tmp_path / ".git" / "notes.md", "secret")
    write(tmp_path / "image.png", b"\x89PNG")
    write(tmp_path / "empty.md", "\n")
    single = write(tmp_path / "elsewhere" / "single.txt", "alone")

    results = list(iter_documents([tmp_path / "a", tmp_path, single]))

    paths = [path.relative_to(tmp_path).as_posix() for path, _ in results]
    assert paths == [
        "a/deep/z.md",
        "a/deep/z.md",
        "b.txt",
        "elsewhere/single.txt",
        "empty.md",
        "elsewhere/single.txt",
    ]
    ids = [docs[0].external_id if isinstance(docs, list) and docs else None for _, docs in results]
    assert ids == ["deep/z.md", "a/deep/z.md", "b.txt", "elsewhere/single.txt", None, "single.txt"]


def test_iter_documents_reports_an_explicitly_given_unsupported_file(tmp_path: Path) -> None:
    path = write(tmp_path / "photo.png", b"\x89PNG")

    [(reported, outcome)] = list(iter_documents([path]))

    assert reported == path
    assert isinstance(outcome, ParseError)


def test_a_slack_export_inside_a_folder_is_recognised(tmp_path: Path) -> None:
    make_slack_export(tmp_path / "exports" / "slack")
    write(tmp_path / "readme.md", "# Readme")

    ids = [doc.external_id for _, docs in iter_documents([tmp_path]) if isinstance(docs, list) for doc in docs]

    assert ids == ["slack:general:2024-01-14", "slack:general:2024-01-15", "slack:random:2024-01-14", "readme.md"]


def test_supported_suffixes_cover_every_format() -> None:
    every = {".md", ".markdown", ".txt", ".html", ".htm", ".pdf", ".json", ".eml", ".mbox", ".vtt", ".srt"}
    assert every == SUPPORTED_SUFFIXES
