from datetime import UTC, datetime
from typing import Annotated

import pytest
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from brain.mcp.limits import Clamped, Cut, Moment, describe_validation_error


class Args(BaseModel):
    model_config = ConfigDict(extra="forbid")
    top_k: Annotated[int, Clamped(1, 20)] = 5
    note: Annotated[str, Cut(10)] = ""
    intent: str = Field("", max_length=24)


@pytest.mark.parametrize(
    ("given", "expected"),
    [(100, 20), (0, 1), (-5, 1), (1, 1), (20, 20), (7.0, 7), ("12", 12), (2**64, 20), ("9" * 5000, 20), (1e308, 20)],
)
def test_numbers_outside_the_range_move_to_the_nearest_bound(given, expected):
    assert Args(top_k=given).top_k == expected


@pytest.mark.parametrize("given", [True, "many", 2.5, None, "²", "٣", float("nan"), float("inf"), "1_000", "1e3"])
def test_non_numbers_are_refused(given):
    with pytest.raises(ValidationError):
        Args(top_k=given)


def test_a_number_in_text_is_clamped_too_however_it_is_written():
    with pytest.raises(ValidationError) as info:
        Args(top_k="1_000")  # pydantic alone would read 1000 and skip the clamp
    assert "'top_k': must be a whole number written in ASCII digits" in describe_validation_error("s", info.value)


def test_text_over_a_cut_limit_is_cut():
    assert Args(note="x" * 11).note == "x" * 10
    assert Args(note="x" * 10).note == "x" * 10


def test_text_over_a_refusal_limit_is_refused_with_a_message_naming_the_field():
    Args(intent="x" * 24)
    with pytest.raises(ValidationError) as info:
        Args(intent="x" * 25)
    message = describe_validation_error("ask", info.value)
    assert "'intent' has 25 characters; the limit is 24" in message
    assert "refused, not cut" in message


def test_unknown_and_missing_arguments_are_named():
    class Needs(BaseModel):
        model_config = ConfigDict(extra="forbid")
        question: str

    with pytest.raises(ValidationError) as info:
        Needs.model_validate({"questoin": "typo"})
    message = describe_validation_error("ask", info.value)
    assert "'question' is required" in message
    assert "'questoin' is not an argument of ask" in message


class When(BaseModel):
    at: Moment


@pytest.mark.parametrize("given", ["9999-12-31T23:59:59-12:00", "0001-01-01T00:00:00+14:00"])
def test_a_moment_past_the_calendar_in_utc_is_refused_with_a_readable_message(given):
    with pytest.raises(ValidationError) as info:
        When(at=given)
    assert describe_validation_error("documents", info.value) == (
        "Invalid arguments for documents: 'at': the moment is outside the calendar once in UTC (years 1 to 9999). "
        "Fix the arguments and call again."
    )


def test_moments_at_the_edges_that_fit_are_kept_in_utc_and_naive_means_utc():
    assert When(at="9999-12-31T11:59:59-12:00").at == datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC)
    assert When(at="0001-01-01T14:00:00+14:00").at == datetime(1, 1, 1, tzinfo=UTC)
    assert When(at="2025-03-01T10:00:00").at == datetime(2025, 3, 1, 10, tzinfo=UTC)
