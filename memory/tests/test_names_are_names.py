"""An entity is a name used as one, not a word capitalised by its place in a sentence or a list."""

import pytest

from memory.extraction.sentences import extract


def names(text: str) -> list[str]:
    return [e.name for e in extract(text).entities]


@pytest.mark.parametrize(
    "text",
    [
        "Contributes to the roadmap of the Lisbon office every quarter.",
        "Sought feedback from Priya Shah on the plan.",
        "Kickoffs happen in the Lisbon office.\nHeartbeats are sent every minute by the agent.",
        "Every team owns its budget and reports to finance.",
    ],
)
def test_a_word_capitalised_only_by_its_place_is_no_name(text):
    found = names(text)
    assert not {"Contributes", "Sought", "Kickoffs", "Heartbeats", "Every team"} & set(found), found


def test_names_at_the_start_of_a_sentence_stay_names():
    found = names("Anna owns QA for Northwind.\nMark Chen joined Acme Corp in May.")
    assert {"Anna", "Mark Chen", "Acme Corp"} <= set(found)


def test_a_word_written_lower_case_elsewhere_is_ordinary_where_it_opens_a_sentence():
    found = names("Glad the Lisbon office opened. We are glad about it.")
    assert "Glad" not in found


def test_a_short_form_the_text_ties_to_a_full_name_is_the_same_entity():
    result = extract("Melanie Smith (Mel) leads the support rota. Mel also owns the Lisbon office budget.")
    people = [e for e in result.entities if e.type == "person"]
    assert [(e.name, sorted(set(e.aliases))) for e in people] == [("Melanie Smith", ["Mel", "Melanie Smith"])]
    assert [f.subject for f in result.facts] == ["Melanie Smith", "Melanie Smith"]
