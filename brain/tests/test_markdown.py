"""Markdown on Brain's pages: raw HTML and images are text and links, never run or fetched."""

from __future__ import annotations

from brain.faces.markdown import render_markdown


def test_raw_html_is_shown_as_text():
    assert render_markdown("<script>alert(1)</script>") == "<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>\n"


def test_an_image_is_never_fetched_only_linked():
    html = render_markdown("![pixel](https://tracker.example/p.png)")
    assert "<img" not in html
    assert '<a href="https://tracker.example/p.png">pixel</a>' in html


def test_headings_code_and_links_render():
    html = render_markdown("# Steps\n\nRun `make` and read [the guide](https://wiki.example/guide).")
    assert "<h1>Steps</h1>" in html
    assert "<code>make</code>" in html
    assert '<a href="https://wiki.example/guide">the guide</a>' in html


def test_a_script_link_is_not_a_link():
    assert "href" not in render_markdown("[x](javascript:alert(1))")
