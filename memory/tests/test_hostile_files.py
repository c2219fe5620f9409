"""Files built to break parsers: deep HTML, NUL and broken characters, dates past the calendar."""

from __future__ import annotations

import json
import time
from email.message import EmailMessage
from pathlib import Path

from memory.extraction.files import parse_file
from memory.extraction.markup import html_to_markdown

DEEP = 50_000


def test_html_nested_50000_divs_deep_is_one_paragraph():
    assert html_to_markdown("<div>" * DEEP + "deep text" + "</div>" * DEEP) == "deep text"
    assert html_to_markdown("<blockquote>" * DEEP + "unclosed") == "unclosed"


def test_deeply_nested_lists_stop_indenting_and_keep_every_item():
    page = "<ul>" + "<li>item<ul>" * DEEP + "<li>last" + "</ul></li>" * DEEP + "</ul>"

    lines = html_to_markdown(page).split("\n")

    assert len(lines) == DEEP + 1
    assert lines[0] == "- item"
    assert lines[1] == "  - item"
    assert lines[-1] == "                - last"  # eight levels of indentation at most


def test_tables_nested_in_cells_are_read_once_each_not_once_per_level():
    started = time.perf_counter()

    text = html_to_markdown("<table>" + "<tr><td>" * DEEP + "cell")

    assert text == "cell"
    assert time.perf_counter() - started < 20


def test_the_shape_of_ordinary_html_is_kept():
    page = (
        "<div>intro<div>inner<p>para</p>tail</div>after</div>"
        "<ul><li>one<ol><li>sub</li></ol></li><li>two</li></ul>"
        "<table><thead><tr><th>h</th></tr></thead><tbody><tr><td>a</td></tr></tbody></table>"
    )
    assert html_to_markdown(page) == "intro\n\ninner\n\npara\n\ntail\n\nafter\n\n- one\n  1. sub\n- two\n\nh\na"


def test_an_html_file_nested_50000_deep_is_read(tmp_path: Path):
    path = tmp_path / "deep.html"
    path.write_text("<head><title>Deep</title></head>" + "<section>" * DEEP + "bottom" + "</section>" * DEEP)

    (document,) = parse_file(path)

    assert (document.title, document.content) == ("Deep", "bottom")


def test_nul_and_broken_characters_from_a_chat_export_are_made_storable(tmp_path: Path):
    path = tmp_path / "general" / "2024-01-14.json"
    path.parent.mkdir()
    path.write_text(json.dumps([{"user": "U\u00001", "text": "hello\u0000 world \ud800!", "ts": "1705226400.0"}]))

    (document,) = parse_file(path, root=tmp_path)

    assert "\x00" not in document.content
    assert "hello world \ufffd!" in document.content
    assert "\x00" not in json.dumps(document.metadata)


def test_an_email_with_nul_in_its_body_and_a_date_past_the_calendar_is_still_read(tmp_path: Path):
    message = EmailMessage()
    message["Subject"] = "Edge"
    message["Date"] = "Fri, 31 Dec 9999 23:59:59 -1200"
    message.set_content("line one\x00\nline two")
    path = tmp_path / "edge.eml"
    path.write_bytes(message.as_bytes())

    (document,) = parse_file(path)

    assert document.occurred_at is None
    assert "line one\nline two" in document.content


def test_utf16_text_is_read_rather_than_refused_for_its_nul_bytes(tmp_path: Path):
    path = tmp_path / "notes.txt"
    path.write_bytes("Réunion à 10h".encode("utf-16"))

    (document,) = parse_file(path)

    assert document.content == "Réunion à 10h"
