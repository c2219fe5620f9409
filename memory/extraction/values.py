"""Values in a sentence: money, percentages, counts, with their keys from context."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from price_parser import Price

from memory.extraction.shapes import ExtractedValue, _table

if TYPE_CHECKING:
    from spacy.tokens import Span

_CURRENCIES = _table("USD: $ us$ dollar dollars; EUR: € euro euros; GBP: £ pound pounds; JPY: ¥")
_MULTIPLIERS = {"k": 1e3, "thousand": 1e3, "m": 1e6, "mn": 1e6, "million": 1e6, "b": 1e9, "bn": 1e9, "billion": 1e9}
_ISO = r"USD|EUR|GBP|CHF|JPY|CAD|AUD"
_MONEY_RE = re.compile(
    rf"(?P<pre>US\$|[$€£¥]|\b(?:{_ISO})\s?)?(?P<num>\d{{1,3}}(?:,\d{{3}})+(?:\.\d+)?|\d+(?:\.\d+)?)"
    rf"(?:\s?(?P<mult>k|mn|m|bn|b|thousand|million|billion)\b)?(?:\s?(?P<post>{_ISO}|dollars?|euros?|pounds?)\b)?",
    re.I,
)


_PERCENT_RE = re.compile(r"(\d+(?:\.\d+)?)\s?(?:%|percent\b|per cent\b)", re.I)
_HEADCOUNT_RE = re.compile(r"\bheadcount\b\D{0,20}?(\d[\d,]*)|\b(\d[\d,]*)\s+(?:people|employees|staff|FTEs?)\b", re.I)


# Context words for a value's key; the nearest one wins. Any money word also makes a bare "40k" money.
_MONEY_KEYS = _table(
    "price: price cost fee plan subscription licence license; deal_value: deal contract arr worth acv sign;"
    "budget: budget; salary: salary pay; revenue: revenue"
)


_PERCENT_KEYS = _table("discount: discount off; churn: churn; growth: growth grow increase")
_DURATION_KEYS = _table("notice_period: notice; trial_period: trial; term: term")
_DATE_KEYS = _table("renewal_date: renew renewal; due_date: due deadline; launch_date: launch; start_date: start")


def _context_key(sent: Span, start: int, end: int, table: dict[str, str], default: str) -> str:
    """The key of the context word nearest to the value at sentence offsets ``start:end``."""
    best, distance = default, 10**6
    for token in sent:
        key = table.get(token.lower_) or table.get(token.lemma_.lower())
        offset = token.idx - sent.start_char
        gap = start - offset - len(token) if offset < start else offset - end
        if key and gap < distance:
            best, distance = key, gap
    return best


def _money_value(sent: Span, start: int, text: str, symbol: str, mult: str) -> ExtractedValue | None:
    price = Price.fromstring(text)
    if price.amount_float is None:
        return None
    symbol = symbol or price.currency or ""
    number = price.amount_float * _MULTIPLIERS.get(mult.lower(), 1.0)
    key = _context_key(sent, start, start + len(text), _MONEY_KEYS, "amount")
    return ExtractedValue(key, number=number, text=text, unit=_CURRENCIES.get(symbol.lower(), symbol.upper()))


def _money(sent: Span, ents: list[Span]) -> Iterator[tuple[int, ExtractedValue]]:
    money_context = any(t.lemma_.lower() in _MONEY_KEYS for t in sent)
    found: list[tuple[int, int, ExtractedValue | None]] = []
    for m in _MONEY_RE.finditer(sent.text):
        symbol = (m["pre"] or m["post"] or "").strip()
        if symbol or (m["mult"] and money_context):
            value = _money_value(sent, m.start(), m.group(0).strip(), symbol, m["mult"] or "")
            found.append((m.start(), m.end(), value))
    for ent in ents:  # worded amounts the pattern misses; spaCy's "48,500" in "$48,500" is caught already
        start, end = ent.start_char - sent.start_char, ent.end_char - sent.start_char
        if ent.label_ == "MONEY" and not any(s < end and start < e for s, e, _ in found):
            found.append((start, end, _money_value(sent, start, ent.text, "", "")))
    yield from ((start, value) for start, _, value in found if value is not None)


def _counts(sent: Span) -> Iterator[tuple[int, ExtractedValue]]:
    for m in _PERCENT_RE.finditer(sent.text):
        key = _context_key(sent, m.start(), m.end(), _PERCENT_KEYS, "percent")
        yield m.start(), ExtractedValue(key, number=float(m[1]), text=m.group(0), unit="%")
    for m in _HEADCOUNT_RE.finditer(sent.text):
        number = float((m[1] or m[2]).replace(",", ""))
        yield m.start(), ExtractedValue("headcount", number=number, text=m.group(0), unit="people")
