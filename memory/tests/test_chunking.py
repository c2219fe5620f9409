from memory.documents.chunking import MAX_CHARS, chunk


def test_it_keeps_headings_as_context_and_never_crosses_them():
    content = "# Pricing\n\nEnterprise costs $48,500.\n\n## Discounts\n\nSchools get 20% off.\n"
    chunks = chunk(content, "text/markdown")
    assert [(c.heading, c.text) for c in chunks] == [
        ("Pricing", "Enterprise costs $48,500."),
        ("Pricing > Discounts", "Schools get 20% off."),
    ]


def test_spans_point_back_into_the_original_content():
    content = "# T\n\nFirst **bold** paragraph with a [link](http://x).\n\nSecond one.\n"
    for c in chunk(content, "text/markdown"):
        original = content[c.char_start : c.char_end]
        assert original.startswith(c.text.split()[0])
    assert chunk(content, "text/markdown")[0].text == "First bold paragraph with a link.\nSecond one."


def test_speaker_turns_are_separate_blocks():
    turns = "\n".join(f"Speaker {i}: " + "word " * 60 for i in range(12))
    chunks = chunk(turns)
    assert len(chunks) > 1
    for c in chunks:
        assert c.text.startswith("Speaker")  # a passage starts at a turn, never mid-turn


def test_long_paragraphs_split_between_sentences_within_the_limit():
    text = " ".join(f"Sentence {i} says something useful about the plan." for i in range(300))
    chunks = chunk(text)
    assert all(len(c.text) <= MAX_CHARS for c in chunks)
    assert all(c.text.endswith(".") for c in chunks)
    assert sum(len(c.text) for c in chunks) >= len(text) - len(chunks)


def test_text_without_sentence_breaks_is_still_cut_between_words():
    chunks = chunk("x" * 50 + " " + "word " * 2000)
    assert all(len(c.text) <= MAX_CHARS for c in chunks)


def test_hash_lines_inside_code_fences_are_not_headings():
    content = "# Real\n\n```\n# not a heading\n```\n"
    assert {c.heading for c in chunk(content, "text/markdown")} == {"Real"}


def test_empty_content_gives_no_chunks():
    assert chunk("   \n\n ") == []


def test_a_chat_turn_that_says_nothing_of_its_own_is_no_passage_of_its_own():
    day = (
        "Priya (10:02): the Lisbon kickoff moves to 12 May\n\nTom (10:03): lol\n\n"
        "Anna (10:05): 👍\n\nTom (10:06): then I book the flights"
    )
    passages = chunk(day, conversation=True)
    assert [p.speaker for p in passages] == ["Priya", "Tom"]
    assert "lol" in passages[0].text
    assert "👍" in passages[0].text
