"""The time rules of supersession, decided without a database."""

from __future__ import annotations

from datetime import date
from typing import Any

from memory.graph.supersession import Action, Claim, decide, value_order

ROLE: dict[str, Any] = {"object_id": 10, "relation": "head_of", "value_key": "", "values": ()}


def claim(subject: int = 1, start: date | None = None, end: date | None = None, **kw: Any) -> Claim:
    fields: dict[str, Any] = {"subject_id": subject, "object_id": None, "relation": "", "value_key": "price",
                              "values": ()}  # fmt: skip
    fields.update(kw)
    return Claim(valid_from=start, valid_to=end, **fields)


def test_a_later_start_closes_the_old_statement_there_and_supersedes_it():
    old, new = claim(2, date(2025, 1, 1), **ROLE), claim(3, date(2026, 3, 1), **ROLE)
    assert decide(old, new) == decide(old, new).__class__(Action.CLOSE_AND_SUPERSEDE, end=date(2026, 3, 1))


def test_a_late_arrival_about_an_earlier_time_is_closed_where_the_old_one_begins():
    old, new = (
        claim(start=date(2025, 6, 1), values=((1.0, None, ""),)),
        claim(start=date(2024, 1, 1), values=((2.0, None, ""),)),
    )
    decision = decide(old, new)
    assert (decision.action, decision.end) == (Action.CLOSE_NEW, date(2025, 6, 1))


def test_a_correction_with_the_same_start_supersedes_and_keeps_the_window():
    old = claim(start=date(2026, 1, 1), values=((10.0, None, ""),))
    new = claim(start=date(2026, 1, 1), values=((12.0, None, ""),))
    assert decide(old, new).action is Action.SUPERSEDE


def test_the_same_claim_again_changes_nothing():
    same = claim(start=date(2026, 1, 1), values=((10.0, None, ""),))
    assert decide(same, same).action is Action.NONE
    assert decide(claim(2, **ROLE), claim(2, **ROLE)).action is Action.NONE  # the same holder of a role


def test_windows_that_do_not_overlap_leave_each_other_alone():
    old = claim(start=date(2024, 1, 1), end=date(2024, 12, 31), values=((10.0, None, ""),))
    new = claim(start=date(2025, 1, 1), values=((12.0, None, ""),))
    assert decide(old, new).action is Action.NONE


def test_two_sources_disagreeing_about_the_same_period_are_a_contradiction_not_a_change():
    old = claim(values=((48.0, None, ""),), source=("document", 1))
    new = claim(values=((52.0, None, ""),), source=("document", 2))
    assert decide(old, new).action is Action.CONTRADICT
    dated_old = claim(start=date(2026, 1, 1), values=((48.0, None, ""),), source=("person", 7))
    dated_new = claim(start=date(2026, 1, 1), values=((52.0, None, ""),), source=("document", 2))
    assert decide(dated_old, dated_new).action is Action.CONTRADICT


def test_the_same_source_correcting_itself_or_a_statement_that_says_the_world_changed_supersedes():
    old = claim(values=((48.0, None, ""),), source=("document", "upload", "price-list"))
    again = claim(values=((52.0, None, ""),), source=("document", "upload", "price-list"))  # its next version
    assert decide(old, again).action is Action.SUPERSEDE
    changed = claim(values=((52.0, None, ""),), source=("document", 9), says_change=True)
    assert decide(old, changed).action is Action.SUPERSEDE
    later = claim(start=date(2026, 3, 1), values=((52.0, None, ""),), source=("document", 9))
    dated = claim(start=date(2026, 1, 1), values=((48.0, None, ""),), source=("document", 1))
    assert decide(dated, later).action is Action.CLOSE_AND_SUPERSEDE  # a new validity start is a change


def test_change_words_are_found_in_statements():
    from memory.extraction.vocabulary import CHANGE_WORDS

    assert CHANGE_WORDS.search("The enterprise plan is now $52,000 a year.")
    assert CHANGE_WORDS.search("Priya took over the BigCo account.")
    assert not CHANGE_WORDS.search("The enterprise plan costs $48,500 a year.")


def test_values_with_a_number_beside_values_with_a_date_are_put_in_one_order():
    price, renewal = (48000.0, None, "48k a year"), (None, date(2026, 3, 1), "1 March 2026")
    assert value_order([renewal, price]) == value_order([price, renewal]) == (price, renewal)
