from memory.documents.chunking import chunk
from memory.extraction.blocks import CONTENT, Kind, read_blocks, reflow, row_sentence

PRICING = """---
title: Pricing
---
# Plans

Our plans are billed monthly.

| Plan | Price per seat | Seats up to |
|------|----------------|-------------|
| Team | 29 EUR | 50 |
| Business | 49 EUR | |

## Who does what

Tech leads are responsible for:
- reviewing code
- Hiring, together with the manager
"""

MAIL = """From: Marta Ruiz <marta@kestrel.example>
To: Tom Becker <tom@kestrel.example>
Date: Mon, 24 Nov 2025 09:12:40 +0100
Subject: Re: kickoff

Hi Tom,

Priya Shah leads the account and will send the
kickoff deck to BigCo by Friday 9 May. The renewal
is worth EUR 48,000.

Best,
Marta

--
Marta Ruiz | Account Manager
+34 600 123 456

On Fri, 21 Nov 2025 at 17:03, Tom Becker wrote:
> Any news from Northwind
> on the renewal?
"""


def kinds(blocks):
    return [b.kind for b in blocks]


def test_a_table_row_is_a_record_said_with_its_header_and_never_with_pipes():
    rows = [b for b in read_blocks(PRICING, markdown=True) if b.kind == Kind.ROW]
    assert [r.sentence() for r in rows] == [
        "Team: Price per seat: 29 EUR; Seats up to: 50.",
        "Business: Price per seat: 49 EUR.",
    ]
    assert rows[0].header == ("Plan", "Price per seat", "Seats up to")
    assert rows[0].cells == ("Team", "29 EUR", "50")
    assert all("|" not in r.sentence() for r in rows)
    assert PRICING[rows[0].start : rows[0].end].startswith("| Team")


def test_the_column_a_header_marks_as_a_name_is_what_the_row_is_about():
    assert row_sentence(("Price", "Name"), ("10 EUR", "Starter"), 1) == "Starter: Price: 10 EUR."


def test_list_items_keep_their_lead_in_and_the_lead_in_alone_is_not_content():
    blocks = read_blocks(PRICING, markdown=True)
    items = [b for b in blocks if b.kind == Kind.ITEM]
    assert [i.sentence() for i in items] == [
        "Tech leads are responsible for: reviewing code.",
        "Tech leads are responsible for: Hiring, together with the manager.",
    ]
    leads = [b for b in blocks if b.kind == Kind.LEAD]
    assert [b.text for b in leads] == ["Tech leads are responsible for:"]
    assert Kind.LEAD not in CONTENT


def test_a_label_lead_in_adds_nothing_to_its_items():
    blocks = read_blocks("Decisions:\n- Ship on Friday\n- Anna owns QA\n", markdown=False)
    assert [b.sentence() for b in blocks if b.kind == Kind.ITEM] == ["Ship on Friday", "Anna owns QA"]


def test_headings_give_each_block_its_path_and_front_matter_is_metadata():
    blocks = read_blocks(PRICING, markdown=True)
    assert (blocks[0].kind, blocks[0].text) == (Kind.META, "title: Pricing")
    item = next(b for b in blocks if b.kind == Kind.ITEM)
    assert item.path == ("Plans", "Who does what")


def test_a_mail_is_read_as_header_greeting_body_sign_off_signature_and_quote():
    blocks = read_blocks(MAIL, markdown=False, mail=True)
    assert kinds(blocks) == [Kind.META, Kind.GREETING, Kind.PARAGRAPH, Kind.GREETING, Kind.SIGNATURE, Kind.QUOTE]
    body = blocks[2]
    assert body.text == (
        "Priya Shah leads the account and will send the kickoff deck to BigCo by Friday 9 May. "
        "The renewal is worth EUR 48,000."
    )
    assert "Any news from Northwind on the renewal?" in blocks[-1].text


def test_plain_text_that_opens_with_mail_headers_is_read_as_mail():
    assert read_blocks(MAIL, markdown=False)[0].kind == Kind.META


def test_wrapped_lines_are_joined_and_lines_that_end_on_purpose_are_not():
    assert reflow("Board minutes\n12 May 2025\nPresent: Anna, Tom") == "Board minutes\n12 May 2025\nPresent: Anna, Tom"
    wrapped = (
        "The team agreed to move the release of the new billing\nsystem to the first week of June after the audit."
    )
    assert reflow(wrapped) == wrapped.replace("\n", " ")
    assert reflow("We ship on Friday.\nAnna owns QA.") == "We ship on Friday.\nAnna owns QA."


def test_a_line_that_opens_a_speakers_turn_starts_a_block_of_its_own():
    blocks = read_blocks("Priya: we ship Friday\nTom: fine by me\n", markdown=False)
    assert [b.text for b in blocks] == ["Priya: we ship Friday", "Tom: fine by me"]
    turns = read_blocks("Priya (10:02): we ship Friday\n\nTom: fine by me\n", markdown=False, conversation=True)
    assert [(b.kind, b.speaker, b.said, b.text) for b in turns] == [
        (Kind.TURN, "Priya", "10:02", "we ship Friday"),
        (Kind.TURN, "Tom", "", "fine by me"),
    ]


def test_every_block_points_back_into_the_text():
    for text, markdown in ((PRICING, True), (MAIL, False)):
        for block in read_blocks(text, markdown=markdown):
            assert 0 <= block.start <= block.end <= len(text)
            assert text[block.start : block.end].strip()


def test_passages_follow_the_blocks():
    passages = chunk(PRICING, "text/markdown")
    texts = [p.text for p in passages]
    assert "Team: Price per seat: 29 EUR; Seats up to: 50." in texts  # a row is a passage of its own
    assert "Tech leads are responsible for:\nreviewing code\nHiring, together with the manager" in texts
    assert not any("|" in t or "---" in t for t in texts)
    assert {p.heading for p in passages} == {"", "Plans", "Plans > Who does what"}  # "" holds the front matter


def test_plain_markdown_syntax_means_nothing_in_plain_text():
    text = "Totals\n------\n    indented line stays a line\n<b>not html</b>\n"
    blocks = read_blocks(text, markdown=False)
    assert kinds(blocks) == [Kind.PARAGRAPH, Kind.PARAGRAPH]
    assert "<b>not html</b>" in blocks[-1].text
