"""Meeting transcripts as caption files (.vtt, .srt): read one turn a paragraph, cut one turn a
passage with its speaker, found by who said what."""

from pathlib import Path

import pytest

from memory.documents.chunking import chunk
from memory.extraction.files import iter_documents, parse_file
from memory.extraction.parsed import ParseError
from memory.models import Chunk, Document
from memory.search.passages import search_chunks

TEAMS_VTT = """WEBVTT

00:00:01.000 --> 00:00:04.000
<v Priya Shah>Morning all, the BigCo pilot starts on 12 January.</v>

00:00:04.500 --> 00:00:06.000
<v Priya Shah>I will send the kickoff deck on Friday.</v>

00:01:06.500 --> 00:01:09.000
<v Sam Okoro>Great. Who owns the warehouse scanners?</v>

00:01:10.000 --> 00:01:12.000
<v Diego>I do, they get new firmware next week.</v>

00:01:12.500 --> 00:01:13.000
<v Sam Okoro>Thanks Diego.</v>

00:01:14.000 --> 00:01:18.000
<v Priya Shah>Then we are done, see you Monday.</v>
"""

ZOOM_SRT = """1
00:00:01,000 --> 00:00:04,000
Priya Shah: Morning all.

2
00:00:05,000 --> 00:00:07,000
Sam Okoro: Hi Priya, quick one on the budget.

3
00:00:07,500 --> 00:00:09,000
Note: we are over by ten percent

4
00:00:09,000 --> 00:00:12,000
Priya Shah: The pilot starts in January.

5
00:00:12,000 --> 00:00:13,000
Sam Okoro: ok
"""


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_a_vtt_transcript_is_one_document_one_turn_a_paragraph_with_speaker_and_start(tmp_path):
    [document] = parse_file(write(tmp_path / "pilot-kickoff.vtt", TEAMS_VTT), root=tmp_path)
    assert document.title == "pilot kickoff"
    assert document.source_kind == "transcript"
    assert document.conversation == "transcript:pilot-kickoff.vtt"
    assert document.metadata["speakers"] == ["Diego", "Priya Shah", "Sam Okoro"]
    assert document.content.split("\n\n")[0] == (
        "**Priya Shah** (at 00:00:01): Morning all, the BigCo pilot starts on 12 January. "
        "I will send the kickoff deck on Friday."
    )
    drafts = chunk(document.content, document.content_type)
    assert [(d.speaker, d.said) for d in drafts] == [
        ("Priya Shah", "at 00:00:01"), ("Sam Okoro", "at 00:01:06"), ("Diego", "at 00:01:10"),
        ("Sam Okoro", "at 00:01:12"), ("Priya Shah", "at 00:01:14"),
    ]  # fmt: skip


def test_an_srt_transcript_takes_speakers_from_names_that_come_back(tmp_path):
    [document] = parse_file(write(tmp_path / "budget.srt", ZOOM_SRT), root=tmp_path)
    turns = document.content.split("\n\n")
    # "Note:" is said once: a label inside Sam's turn, not a speaker of its own.
    assert turns[1] == (
        "**Sam Okoro** (at 00:00:05): Hi Priya, quick one on the budget. Note: we are over by ten percent"
    )
    assert [d.speaker for d in chunk(document.content, document.content_type)] == [
        "Priya Shah", "Sam Okoro", "Priya Shah", "Sam Okoro",
    ]  # fmt: skip


def test_a_file_that_is_not_a_transcript_is_refused_with_a_reason_and_the_walk_goes_on(tmp_path):
    write(tmp_path / "notes.vtt", "just some notes, no captions here")
    write(tmp_path / "ok.srt", ZOOM_SRT)
    with pytest.raises(ParseError, match="not a VTT caption file"):
        parse_file(tmp_path / "notes.vtt")
    outcomes = dict(iter_documents([tmp_path]))
    assert isinstance(outcomes[tmp_path / "notes.vtt"], ParseError)
    read = outcomes[tmp_path / "ok.srt"]
    assert isinstance(read, list)
    assert len(read) == 1


def test_captions_without_words_give_no_document(tmp_path):
    assert parse_file(write(tmp_path / "silent.vtt", "WEBVTT\n\n00:00:01.000 --> 00:00:02.000\n<v Sam></v>\n")) == []


@pytest.mark.django_db
def test_an_ingested_transcript_answers_who_said_what(org, load_file):
    reader, out = load_file("pilot-kickoff.vtt", TEAMS_VTT)
    assert "1 documents" in out
    document = Document.objects.get(org=org)
    assert Chunk.objects.filter(document=document).count() == 5
    hits = search_chunks(actor=reader, query="Who looks after the scanners?", top_k=2).hits
    assert "Diego (at 00:01:10): I do, they get new firmware next week." in [hit.text for hit in hits]
    hits = search_chunks(actor=reader, query="What did Diego say about the firmware?", top_k=1).hits
    assert hits[0].speaker == "Diego"


def test_a_long_monologue_is_one_turn_cut_into_passages_that_each_keep_the_speaker(tmp_path):
    at = [f"{n // 60:02d}:{n % 60:02d}" for n in range(3000)]
    cues = "".join(f"\n{t}:00.000 --> {t}:30.000\n<v Priya Shah>Point {n} of the plan.</v>\n" for n, t in enumerate(at))
    [document] = parse_file(write(tmp_path / "all-hands.vtt", "WEBVTT\n" + cues))
    assert document.content.count("**Priya Shah**") == 1
    drafts = chunk(document.content, document.content_type, conversation=True)
    assert len(drafts) > 50
    assert {d.speaker for d in drafts} == {"Priya Shah"}
    assert max(len(d.text) for d in drafts) <= 1200


def test_a_caption_file_with_nul_bytes_or_absurd_times_is_refused_with_a_reason(tmp_path):
    (tmp_path / "binary.srt").write_bytes(b"1\n00:00:01,000 --> 00:00:02,000\nSam: hi\x00\n")
    with pytest.raises(ParseError, match="binary data"):
        parse_file(tmp_path / "binary.srt")
    huge = "WEBVTT\n\n99999999999999999999:00:00.000 --> 00:00:02.000\n<v Sam>hi</v>\n"
    assert parse_file(write(tmp_path / "huge.vtt", huge)) == []  # a cue that is not one: nothing to keep
