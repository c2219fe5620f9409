from typing import Annotated

import pytest
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from brain.mcp.limits import Clamped, Cut, describe_validation_error


class Args(BaseModel):
    model_config = ConfigDict(extra="forbid")
    top_k: Annotated[int, Clamped(1, 20)] = 5
    note: Annotated[str, Cut(10)] = ""
    intent: str = Field("", max_length=24)


@pytest.mark.parametrize(("given", "expected"), [(100, 20), (0, 1), (-5, 1), (1, 1), (20, 20), (7.0, 7), ("12", 12)])
def test_numbers_outside_the_range_move_to_the_nearest_bound(given, expected):
    assert Args(top_k=given).top_k == expected


@pytest.mark.parametrize("given", [True, "many", 2.5, None])
def test_non_numbers_are_refused(given):
    with pytest.raises(ValidationError):
        Args(top_k=given)


def test_text_over_a_cut_limit_is_cut():
    assert Args(note="x" * 11).note == "x" * 10
    assert Args(note="x" * 10).note == "x" * 10


def test_text_over_a_refusal_limit_is_refused_with_a_message_naming_the_field():
    Args(intent="x" * 24)
    with pytest.raises(ValidationError) as info:
        Args(intent="x" * 25)
    message = describe_validation_error("ask", info.value)
    assert "'intent' has 25 characters; the limit is 24" in message and "refused, not cut" in message


def test_unknown_and_missing_arguments_are_named():
    class Needs(BaseModel):
        model_config = ConfigDict(extra="forbid")
        question: str

    with pytest.raises(ValidationError) as info:
        Needs.model_validate({"questoin": "typo"})
    message = describe_validation_error("ask", info.value)
    assert "'question' is required" in message and "'questoin' is not an argument of ask" in message
