"""The extraction evaluation's checks beside the labels (junk entities, table and list syntax, years
nobody wrote, values, answers in passages), on their own and through the command run over a set
folder of three short documents written here: a page with a table, a page with a list, a chat
message."""

from __future__ import annotations

import json
from datetime import date
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from registers.evaluation.checks import common_word, has_markup, holds_answer, invented_years, junk_reason, match_values
from registers.evaluation.matching import DerivedFact, DerivedValue
from registers.evaluation.sets import Part, load, parts_of

SAVED_AT = "2026-12-01T09:00:00+00:00"
TABLE_PAGE = """# Support rota

The support team covers the queue in shifts.

| Engineer | Shift |
|---|---|
| Priya Shah | 07:00-15:00 UTC |
| Tom Becker | 15:00-23:00 UTC |

Priya Shah leads the Support team in Rotterdam since March 2025.
"""
LIST_PAGE = """# Laptop policy

Every employee follows these rules:

- Laptops are replaced every three years.
- Lost laptops are reported to IT within 24 hours.
- Encryption is required on every laptop.
"""
DOCS: list[dict[str, Any]] = [
    {"id": "handbook-01", "kind": "handbook", "split": "dev", "title": "Support rota", "saved_at": SAVED_AT,
     "format": "markdown", "text": TABLE_PAGE},
    {"id": "policy-01", "kind": "policy", "split": "heldout", "title": "Laptop policy", "saved_at": SAVED_AT,
     "format": "markdown", "text": LIST_PAGE},
    {"id": "chat-01", "kind": "chat", "split": "dev", "title": "#ops", "saved_at": SAVED_AT, "format": "chat",
     "occurred_at": "2025-11-24T10:02:00+00:00", "speaker": "Marta Ruiz", "conversation": "slack:#ops",
     "session": "slack:#ops:2025-11-24", "text": "I'll send the signed order form to Northwind by Friday.\n"},
]  # fmt: skip
LABELS: list[dict[str, Any]] = [
    {"id": "handbook-01",
     "facts": [{"statement": "Priya Shah leads the Support team in Rotterdam since March 2025.",
                "subject": "Priya Shah", "kind": "fact", "valid_from": "2025-03-01", "valid_to": None}],
     "times": [{"text": "since March 2025", "value": "2025-03-01"}],
     "entities": [{"name": "Priya Shah", "kind": "person"}, {"name": "Tom Becker", "kind": "person"},
                  {"name": "Rotterdam", "kind": "place"}],
     "not_entities": ["Engineer", "Shift"],
     "values": [{"entity": "Priya Shah", "attribute": "Shift", "value": "07:00-15:00 UTC", "as_of": None}],
     "promises": []},
    {"id": "policy-01",
     "facts": [{"statement": "Lost laptops are reported to IT within 24 hours.", "subject": None,
                "kind": "procedure", "valid_from": None, "valid_to": None}],
     "times": [], "entities": [], "not_entities": ["Every"], "values": [], "promises": []},
    {"id": "chat-01",
     "facts": [{"statement": "Marta Ruiz will send the signed order form to Northwind by Friday.",
                "subject": "Marta Ruiz", "kind": "fact", "valid_from": None, "valid_to": "2025-11-28"}],
     "times": [{"text": "by Friday", "value": "2025-11-28"}],
     "entities": [{"name": "Marta Ruiz", "kind": "person"},
                  {"name": "Northwind", "kind": ["customer", "organisation"]}],
     "not_entities": [], "values": [],
     "promises": [{"owner": "Marta Ruiz", "what": "Marta Ruiz will send the signed order form to Northwind",
                   "due_on": "2025-11-28"}]},
]  # fmt: skip
QUESTIONS: list[dict[str, Any]] = [
    {"id": "q-1", "doc": "handbook-01", "question": "Which hours does Tom Becker cover?",
     "answer": "| Tom Becker | 15:00-23:00 UTC |"},
    {"id": "q-2", "doc": "policy-01", "question": "How soon must a lost laptop be reported?",
     "answer": "Lost laptops are reported to IT within 24 hours."},
    {"id": "q-3", "doc": "chat-01", "question": "When will the order form go to Northwind?",
     "answer": "I'll send the signed order form to Northwind by Friday."},
    # An answer the memory does not hold: the passage figures can miss.
    {"id": "q-4", "doc": "chat-01", "question": "Who signs the order form for Northwind?",
     "answer": "Jonas Weber countersigns every order form."},
]  # fmt: skip


def write_set(folder: Path, **files: list[dict[str, Any]]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, rows in files.items():
        (folder / f"{name}.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    return folder


def test_table_and_list_syntax_is_found_at_any_line_start_and_a_dash_inside_words_is_not():
    assert has_markup("| Priya Shah | 07:00-15:00 UTC |")
    assert has_markup("Rules:\n- Laptops are replaced every three years.")
    assert has_markup("1. Open a ticket")
    assert has_markup("Header\n---")
    assert not has_markup("Priya Shah works 07:00-15:00 UTC, a well-known shift.")
    assert has_markup("Team | 29 EUR |")
    assert has_markup("| Team")
    assert has_markup("Plan Price |---| Team")
    assert not has_markup("Notmuch works fine with maildir---it's what it likes best.")  # an em dash
    assert not has_markup("The obvious invocation, notmuch help | less, shows nothing.")  # a pipe


def test_a_single_capitalised_common_word_is_junk_and_a_labelled_name_never_is():
    labels = {"entities": [{"name": "Support", "kind": "team", "aliases": ["Support desk"]}], "not_entities": ["TBD"]}
    text = "Two people are on duty. Duty starts at 7."
    assert common_word("Duty", text)  # the page writes "duty" in lower case
    assert common_word("But", text)
    assert common_word("March", text)
    assert not common_word("Rakesh", text)
    assert not common_word("ACME", text)
    assert not common_word("Google", "The notes: <https://docs.google.com/document/d/1hD3>")  # a link's words
    assert junk_reason(("Duty",), labels, text) == "'Duty' is a single common word"
    assert junk_reason(("tbd",), labels, text) == "'tbd' is labelled as no entity"
    assert junk_reason(("| Priya Shah",), labels, text) == "'| Priya Shah' holds table or list syntax"
    assert junk_reason(("Support", "support"), labels, "the support queue") is None
    assert junk_reason(("Support desk",), labels, text) is None
    assert junk_reason(("backlog",), labels, text) == "'backlog' is an everyday word in lower case"
    assert junk_reason(("notmuch",), labels, text) is None  # software its makers write in lower case
    assert junk_reason(("gh2md",), labels, text) is None


def test_a_year_is_invented_when_neither_the_text_nor_the_documents_moment_gives_it():
    text = "On 27 May 2006: the release is TEN days away."
    fact = DerivedFact("The release is on 2026-06-06.", valid_from=date(2026, 6, 6), dates=(date(2006, 6, 6),))
    assert invented_years(fact, text, date(2006, 5, 27)) == [2026]
    assert invented_years(fact, text + " Planned for 2026.", date(2006, 5, 27)) == []
    assert invented_years(DerivedFact("No date."), text, None) == []


def test_a_value_needs_its_entity_its_attribute_and_its_value():
    labels = [{"entity": "Alex", "attribute": "UTC hours", "value": "14:00–22:00"}]
    assert match_values([DerivedValue("Alex", "utc_hours", "14:00–22:00")], labels) == {0: 0}
    assert match_values([DerivedValue("Gabe", "utc_hours", "14:00–22:00")], labels) == {}
    assert match_values([DerivedValue("Alex", "price", "14:00–22:00")], labels) == {}
    assert match_values([DerivedValue("Alex", "hours", "10:00–18:00")], labels) == {}


def test_a_passage_holds_an_answer_by_its_words_or_lies_inside_it():
    answer = "| 1.2     | 17-Aug-2023 | Minor update  | André Eleuterio |"
    assert holds_answer("Versions:\n| 1.2 | 17-Aug-2023 | Minor update | André Eleuterio | Diego |", answer)
    assert holds_answer("17-Aug-2023 | Minor update", answer)  # a short passage cut from the row
    assert not holds_answer("Minor", answer)  # too short to say it is the row
    assert not holds_answer("| 1.3 | 02-Jan-2024 | Minor update |", answer)


def test_a_link_in_an_answer_reads_as_its_text_as_a_passage_shows_it():
    answer = "Co-Working Space: [Smartspace](https://smartspace.example) <-- Highly recommend!"
    assert holds_answer("Vendors we used:\nCo-Working Space: Smartspace <-- Highly recommend!", answer)
    assert not holds_answer("Co-Working Space: Deskhub <-- Highly recommend!", answer)


def test_a_set_folder_of_two_parts_is_read_with_built_texts_files_and_questions(tmp_path):
    pages = write_set(tmp_path / "pages", docs=[{**DOCS[0], "text": None, "file": "files/page.md"}], labels=LABELS[:1])
    (pages / "files").mkdir()
    (pages / "files" / "page.md").write_text(TABLE_PAGE)
    talk = write_set(tmp_path / "talk", docs=[{**DOCS[2], "text": None}], labels=LABELS[2:], questions=QUESTIONS)
    write_set(talk / "built", docs=[DOCS[2]])
    loaded = load(parts_of(tmp_path), "all")
    assert [row["id"] for row in loaded.rows] == ["handbook-01", "chat-01"]
    assert loaded.rows[0]["file"] == pages / "files" / "page.md"
    assert loaded.rows[1]["text"] == DOCS[2]["text"]  # from built/docs.jsonl
    assert [q["id"] for q in loaded.rows[1]["questions"]] == ["q-3", "q-4"]
    assert loaded.unbuilt == []
    unbuilt = load([Part(talk / "docs.jsonl", talk / "labels.jsonl")], "all")
    assert (unbuilt.rows, unbuilt.unbuilt) == ([], ["chat-01"])


def test_a_set_folder_without_labels_is_refused_with_what_it_lacks(tmp_path):
    with pytest.raises(CommandError, match="neither it nor a folder inside it holds labels.jsonl"):
        parts_of(tmp_path)


def run(*args: str) -> dict[str, Any]:
    out = StringIO()
    call_command("eval_extraction", *args, "--json", stdout=out, stderr=StringIO())
    return json.loads(out.getvalue())


@pytest.mark.django_db
def test_the_command_counts_syntax_junk_and_passages_on_a_handmade_set(tmp_path):
    folder = write_set(tmp_path / "set", docs=DOCS, labels=LABELS, questions=QUESTIONS)
    report = run("--set", str(folder))
    handbook, chat, whole = (report["figures"]["all"][k] for k in ("handbook", "chat", "all"))
    assert handbook["markup_facts"] == 0  # a table row is read as a record, never with its pipes
    assert report["details"]["handbook-01"]["fact with markup"] == []
    assert "'Engineer' is labelled as no entity" not in report["details"]["handbook-01"]["junk entity"]
    assert 0 <= handbook["junk_entity_share"] < 1
    assert whole["labelled"]["values"] == 1
    assert whole["values_found"] is not None
    assert whole["invented_year_facts"] == 0
    assert chat["promise_recall"] == 1.0
    assert chat["time_accuracy"] == 1.0
    assert whole["labelled"]["questions"] == 4
    assert whole["answer_top3"] == 0.75  # all but the answer nobody wrote
    assert whole["answer_top1"] <= whole["answer_top3"]
    assert whole["answer_in_snippets"] == 0.75
    assert whole["markup_snippets"] == 0  # rows and list items are shown without their syntax
    assert report["figures"]["heldout"]["all"]["documents"] == 1
    assert report["order"] == "saved by saved_at, then id; questions in file order"


@pytest.mark.django_db
def test_the_command_gives_the_same_figures_when_run_twice(tmp_path):
    folder = write_set(tmp_path / "set", docs=DOCS[:2], labels=LABELS[:2], questions=QUESTIONS[:2])
    first, second = run("--set", str(folder)), run("--set", str(folder))
    assert first["figures"] == second["figures"]
    assert first["input"] == second["input"]
