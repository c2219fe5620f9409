"""WhatsApp chat exports (.txt): one document a day, one turn a passage with its speaker."""

from datetime import UTC, datetime
from pathlib import Path

import pytest

from memory.extraction.files import parse_file
from memory.models import Chunk, Document
from memory.search.passages import search_chunks

ANDROID = """12/01/2024, 09:00 - Messages and calls are end-to-end encrypted. No one outside of this chat can read them.
12/01/2024, 09:02 - Priya Shah: morning! the BigCo pilot kicks off on 20 January
12/01/2024, 09:05 - Sam Okoro: great, who owns the kickoff deck?
and the scanner firmware?
12/01/2024, 09:06 - Priya Shah: I do, I'll send it Friday
12/01/2024, 09:07 - Sam Okoro: <Media omitted>
13/01/2024, 18:30 - Sam Okoro: deck looks good
13/01/2024, 18:31 - Priya Shah added Diego
"""

IPHONE = (
    "[1/13/24, 9:02:13\u202fAM] Priya Shah: the pilot moved to the 27th\n"
    "\u200e[1/13/24, 9:03:40\u202fAM] Sam Okoro: \u200eimage omitted\n"
    "[1/13/24, 12:15:02\u202fPM] Sam Okoro: noted, I'll tell the warehouse\n"
    "[1/13/24, 12:20:00\u202fPM] Priya Shah: thanks!\n"
)


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_an_android_export_is_a_document_a_day_with_turns_and_without_notices_or_media(tmp_path):
    first, second = parse_file(write(tmp_path / "WhatsApp Chat with Sam.txt", ANDROID), root=tmp_path)
    assert first.title == "WhatsApp Chat with Sam 2024-01-12"
    assert first.conversation == "whatsapp:WhatsApp Chat with Sam.txt"
    assert (first.session, first.occurred_at) == ("2024-01-12", datetime(2024, 1, 12, 9, 2, tzinfo=UTC))
    assert first.content.split("\n\n") == [
        "**Priya Shah** (09:02): morning! the BigCo pilot kicks off on 20 January",
        "**Sam Okoro** (09:05): great, who owns the kickoff deck? and the scanner firmware?",
        "**Priya Shah** (09:06): I do, I'll send it Friday",
    ]
    assert second.content == "**Sam Okoro** (18:30): deck looks good"  # "Priya Shah added Diego" is a notice
    assert first.metadata["participants"] == ["Priya Shah", "Sam Okoro"]


def test_an_iphone_export_on_a_twelve_hour_clock_is_read_month_first_when_the_file_says_so(tmp_path):
    [day] = parse_file(write(tmp_path / "pilot.txt", IPHONE), root=tmp_path)
    assert day.occurred_at == datetime(2024, 1, 13, 9, 2, tzinfo=UTC)
    assert day.content.split("\n\n") == [
        "**Priya Shah** (09:02): the pilot moved to the 27th",
        "**Sam Okoro** (12:15): noted, I'll tell the warehouse",
        "**Priya Shah** (12:20): thanks!",
    ]


def test_a_text_with_a_few_dated_lines_is_not_taken_for_a_chat(tmp_path):
    log = "12/01/2024, 09:02 - deploy started\n12/01/2024, 09:05 - deploy finished\nAll good: nothing to do.\n"
    [document] = parse_file(write(tmp_path / "deploys.txt", log), root=tmp_path)
    assert document.conversation == ""
    assert document.content == log.strip()


@pytest.mark.django_db
def test_a_short_chat_day_is_still_cut_one_turn_a_passage_and_found_by_who_said_it(org, load_file):
    reader, _ = load_file("WhatsApp Chat with Sam.txt", ANDROID)
    day = Document.objects.get(org=org, session="2024-01-12")
    assert list(Chunk.objects.filter(document=day).order_by("ordinal").values_list("speaker", flat=True)) == [
        "Priya Shah", "Sam Okoro", "Priya Shah",
    ]  # fmt: skip
    hits = search_chunks(actor=reader, query="What did Sam ask about the scanner firmware?", top_k=1)
    assert hits.hits[0].speaker == "Sam Okoro"


def test_a_date_past_the_calendar_drops_that_line_only_and_midnight_on_a_twelve_hour_clock_is_zero(tmp_path):
    chat = (
        "[1/13/24, 12:05 AM] Priya Shah: still up?\n"
        "[2/31/24, 9:00 AM] Sam Okoro: a day that does not exist\n"
        "[1/13/24, 12:06 AM] Sam Okoro: yes, packing\n"
        "[1/13/24, 12:07 AM] Priya Shah: night then\n"
    )
    [day] = parse_file(write(tmp_path / "late.txt", chat))
    assert day.occurred_at == datetime(2024, 1, 13, 0, 5, tzinfo=UTC)
    assert "does not exist" not in day.content
    assert day.content.count("**") == 6


def test_huge_numbers_in_a_message_line_drop_that_line_only(tmp_path):
    chat = (
        "12/01/2024, 09:02 - Priya Shah: morning\n"
        "99/99/9999, 99:99 - Sam Okoro: from nowhere\n"
        "12/01/2024, 09:03 - Sam Okoro: morning!\n"
        "12/01/2024, 09:04 - Priya Shah: 99999999999999999999 units shipped\n"
    )
    [day] = parse_file(write(tmp_path / "numbers.txt", chat))
    assert "from nowhere" not in day.content
    assert "**Priya Shah** (09:04): 99999999999999999999 units shipped" in day.content
