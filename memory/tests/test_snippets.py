from memory.search.snippets import best_part, query_terms

SECTION = (
    "Our benefits are reviewed every year by the people team. "
    "Health insurance covers the employee and their family from the first day. "
    "Everyone gets a learning budget of 1,000 EUR a year for books, courses and conferences. "
    "The family deduction is 120 EUR a month for each child under 18. "
    "Gym memberships are paid back up to 40 EUR a month on presenting a receipt."
)


def test_the_snippet_is_the_sentence_that_answers_not_the_passage_opening():
    shown = best_part(SECTION, query_terms("how much is the family deduction per child"), limit=120)
    assert "The family deduction is 120 EUR a month for each child under 18." in shown
    assert not shown.startswith("Our benefits")


def test_a_snippet_never_cuts_a_word_and_says_where_text_was_left_out():
    shown = best_part(SECTION, query_terms("gym"), limit=100)
    assert shown.startswith("…")
    body = shown.strip("…")
    assert body.split()[0] in SECTION.split()
    assert body.split()[-1] in SECTION.split()


def test_a_row_of_a_passage_is_shown_whole():
    rows = "Team: Price per seat: 29 EUR.\nBusiness: Price per seat: 49 EUR.\nEnterprise: Price per seat: ask sales."
    assert best_part(rows * 5, query_terms("business plan price"), limit=60).strip("…") == (
        "Business: Price per seat: 49 EUR."
    )


def test_a_short_passage_is_shown_whole():
    assert best_part("Schools get 20% off.", ["schools"]) == "Schools get 20% off."
