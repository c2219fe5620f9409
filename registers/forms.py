"""The forms people fill in about register entries, on the admin's pages and the members' page."""

from __future__ import annotations

from typing import Any

from django import forms

from registers.contradictions.services import ANSWERS
from registers.models import Contradiction


class AnswerForm(forms.Form):
    answer = forms.ChoiceField(choices=[(a, Contradiction.Answer(a).label) for a in ANSWERS], widget=forms.RadioSelect)
    note = forms.CharField(max_length=500, help_text="What the answer rests on: the system checked, or who said so.")

    def __init__(self, *args: Any, statements: int = 2, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Only the letters of the entry's own statements: a and b, then c, d... on one naming more.
        offered = [a for a in ANSWERS if len(a) > 1 or "abcdef".index(a) < statements]
        labels = {a: str(Contradiction.Answer(a).label) for a in offered}
        if statements > 2:
            labels.update({a: f"{a} stands, the others are superseded" for a in offered if len(a) == 1})
        self.fields["answer"].choices = list(labels.items())  # type: ignore[attr-defined]


class ProposeForm(forms.Form):
    """A member's proposed term: the word, what it means here, and optionally the passage it rests on."""

    term = forms.CharField(max_length=120)
    definition = forms.CharField(max_length=500, help_text="What it points at here, in one sentence.")
    passage = forms.CharField(
        max_length=300,
        required=False,
        help_text="Optional: the link of a passage that uses it, as a document page or the search page gives it.",
    )
