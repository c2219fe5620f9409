"""Relations as an entity page names them: the words people use, not the stored lemma."""

from __future__ import annotations

import pytest

from memory.web.facts import relation_words


@pytest.mark.parametrize(
    ("stored", "shown"),
    [
        ("works_at", "works at"),
        ("work_at", "works at"),
        ("owns", "owns"),
        ("host", "hosts"),
        ("be", "is"),
        ("ask", "asked"),
        ("eur_per", "price"),
        ("usd", "price"),
        ("start", "starts"),
        ("sign_with", "signs with"),
        ("signed", "signed"),
        ("ceo", "CEO"),
        ("ceo_of", "CEO of"),
        ("fix", "fixes"),
        ("apply", "applies"),
        ("controller", "controller"),
        ("", ""),
    ],
)
def test_relation_words(stored, shown):
    assert relation_words(stored) == shown
