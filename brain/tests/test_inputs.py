"""The input rules every way in shares: storable text, bounded JSON, ASCII numbers and ids."""

from __future__ import annotations

import pytest

from brain.core.errors import InvalidArgument
from brain.core.inputs import MAX_DEPTH, first_problem, refuse_unstorable, storable, storable_json, whole_number
from brain.infra.ids import is_random_id, parse_numeric_id


def nested(depth: int) -> list[object]:
    top: list[object] = []
    current = top
    for _ in range(depth - 1):
        child: list[object] = []
        current.append(child)
        current = child
    return top


@pytest.mark.parametrize(
    ("arguments", "path", "reason"),
    [
        ({"title": "a\x00b"}, "title", "NUL character"),
        ({"title": "\ud800"}, "title", "unpaired surrogate (U+D800)"),
        ({"metadata": {"owner": {"name": "\x00"}}}, "metadata.owner.name", "NUL"),
        ({"metadata": {"a\x00": 1}}, "metadata.a\\x00", "has a key that contains a NUL"),
        ({"tags": ["ok", "bad\udfff"]}, "tags[1]", "unpaired surrogate (U+DFFF)"),
        ({"bad\x00name": 1}, "bad\\x00name", "is an argument name that contains a NUL"),
        ({"metadata": {"ratio": float("nan")}}, "metadata.ratio", "finite number"),
        ({"limit": float("inf")}, "limit", "finite number"),
        ({"document_ids": [2**64]}, "document_ids[0]", "outside the 64-bit range"),
        ({"metadata": {"n": -(2**63) - 1}}, "metadata.n", "outside the 64-bit range"),
    ],
)
def test_it_names_the_first_value_brain_cannot_store_and_why(arguments, path, reason):
    found = first_problem(arguments)
    assert found is not None
    assert found[0] == path
    assert reason in found[1]


def test_a_refusal_reads_like_the_other_argument_errors():
    with pytest.raises(InvalidArgument) as info:
        refuse_unstorable({"query": "budget\x00"}, what="search_company_memory")
    assert info.value.message == (
        "Invalid arguments for search_company_memory: 'query' contains a NUL character (U+0000), which Brain "
        "cannot store. Fix the arguments and call again."
    )


def test_json_nested_50000_deep_is_refused_without_recursion():
    found = first_problem({"metadata": {"x": nested(50_000)}})
    assert found is not None
    assert f"more than {MAX_DEPTH} levels" in found[1]
    assert first_problem({"metadata": {"x": nested(MAX_DEPTH - 1)}}) is None


def test_ordinary_values_and_top_level_numbers_pass():
    # A top-level number is its field's business: numeric limits clamp it there.
    arguments = {"top_k": 10**30, "ratio": -1.5e308, "flag": True, "none": None, "text": "Ünïcödé \t\n 😀"}
    assert first_problem({**arguments, "metadata": {"n": 2**63 - 1, "list": [1, "a", None, False]}}) is None


@pytest.mark.parametrize(
    ("text", "number"),
    [("12", 12), (" -7 ", -7), ("+007", 7), ("9" * 5000, 10**19), ("-" + "9" * 30, -(10**19))],
)
def test_whole_numbers_are_read_from_ascii_digits(text, number):
    assert whole_number(text) == number


@pytest.mark.parametrize("text", ["²", "٣", "١٢", "1_000", "1e3", "1.0", "", "-", "0x10", "12\x00"])
def test_anything_else_is_not_a_whole_number(text):
    assert whole_number(text) is None


def test_extracted_text_loses_nul_and_keeps_its_place_for_broken_characters():
    assert storable("a\x00b\ud800c") == "ab\ufffdc"
    assert storable_json({"k\x00": ["v\x00", 3, {"x": "\udc80"}]}) == {"k": ["v", 3, {"x": "\ufffd"}]}


@pytest.mark.parametrize(("value", "expected"), [("doc_12", 12), (" doc_12 ", 12), ("doc_" + "9" * 18, 10**18 - 1)])
def test_a_numeric_id_is_its_prefix_and_ascii_digits(value, expected):
    assert parse_numeric_id(value, "doc") == expected


@pytest.mark.parametrize(
    "value",
    ["con_²", "con_٣", "con_١٢", "con_" + "9" * 19, "con_", "con_1\x00", "con_-1", "con_1_2", "CON_1", "doc_1", 12],
)
def test_anything_else_is_not_an_id(value):
    assert parse_numeric_id(value, "con") is None
    assert parse_numeric_id(value, "con", bare=True) is None


def test_a_bare_number_is_an_id_only_where_the_tool_accepts_one():
    assert parse_numeric_id("12", "mem") is None
    assert parse_numeric_id("12", "mem", bare=True) == 12
    assert parse_numeric_id("٣", "mem", bare=True) is None


def test_random_ids_are_checked_for_their_shape():
    assert is_random_id("act_0123456789abcdef0123", "act")
    assert not is_random_id("act_0123\x00", "act")
    assert not is_random_id("req_0123456789abcdef", "act")
    assert not is_random_id(None, "act")
    assert not is_random_id("act_nope", "act")
