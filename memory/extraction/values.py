"""Values in a sentence: money, percentages, counts, with their keys from context."""

from __future__ import annotations

import datetime
import re
from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, TypeVar

from price_parser import Price

from memory.extraction.shapes import ExtractedFact, ExtractedValue, _table

if TYPE_CHECKING:
    from spacy.tokens import Span, Token

T = TypeVar("T")

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


# --- records: a table row's cells as values of what the row is about -----------------------------------

# Words around a cell's amount that leave it one amount: "over $30M", "29 EUR a month", "10,000+".
_QUALIFIER_RE = re.compile(
    r"^(?:about|around|approx\.?|approximately|over|under|at least|at most|up to|minimum|maximum|min\.?|max\.?|~)\s*",
    re.I,
)
_PER_RE = re.compile(r"^\+?\s*(?:(?:a|an|per|each|/)\s*[A-Za-z]+(?:\s+[A-Za-z]+)?)?\s*$", re.I)
_CELL_NUMBER_RE = re.compile(
    r"^(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)\s?(?P<mult>k|m|bn|thousand|million|billion)?\+?"
    r"(?:\s+(?P<unit>[A-Za-z]+))?$",
    re.I,
)
_CELL_DATE_RE = re.compile(
    r"^(?:\d{4}-\d\d-\d\d|\d{1,2}[-/ ][A-Za-z]{3,9}\.?[-/ ,]+\d{4}|[A-Za-z]{3,9}\.? \d{1,2}(?:st|nd|rd|th)?,? \d{4}"
    r"|\d{1,2}/\d{1,2}/\d{4})$"
)
_DURATION_UNITS = {"day": "days", "week": "weeks", "month": "months", "year": "years", "hour": "hours"}
_NOT_SAID = frozenset({"", "-", "–", "—", "n/a", "na", "none", "tbd", "?"})


def record_key(header: str) -> str:
    """A column's name as a value key: "Price per seat" -> price_per_seat, "Who has access?" -> who_has_access."""
    return re.sub(r"[^a-z0-9]+", "_", header.casefold()).strip("_")[:80]


def record_values(header: Sequence[str], cells: Sequence[str], subject: int) -> list[ExtractedValue]:
    """The values a table row states of what it is about: each other cell, keyed by its column's name,
    with its amount, percentage, count or full date read from the cell alone, and its words as written.
    A cell without a column name or with nothing in it ("-", "n/a") states nothing."""
    values = []
    for index, cell in enumerate(cells):
        cell = " ".join(cell.split())
        name = header[index].strip() if index < len(header) else ""
        key = record_key(name)
        if index == subject or not key or cell.casefold() in _NOT_SAID:
            continue
        values.append(cell_value(key, cell))
    return values


def cell_value(key: str, cell: str) -> ExtractedValue:
    """One cell's value: an amount with its currency, a percentage, a number with its unit, or a date
    that gives its year; else its words alone."""
    text, amount = cell[:500], _QUALIFIER_RE.sub("", cell.strip())
    money = _MONEY_RE.match(amount)
    if money and (money["pre"] or money["post"]) and _PER_RE.match(amount[money.end() :]):
        symbol = (money["pre"] or money["post"] or "").strip()
        price = Price.fromstring(money.group(0))
        if price.amount_float is not None:
            worth = price.amount_float * _MULTIPLIERS.get((money["mult"] or "").lower(), 1.0)
            return ExtractedValue(key, number=worth, text=text, unit=_CURRENCIES.get(symbol.lower(), symbol.upper()))
    percent = _PERCENT_RE.fullmatch(amount)
    if percent:
        return ExtractedValue(key, number=float(percent[1]), text=text, unit="%")
    number = _CELL_NUMBER_RE.match(amount)
    if number:
        figure = float(number["num"].replace(",", "")) * _MULTIPLIERS.get((number["mult"] or "").lower(), 1.0)
        word = (number["unit"] or "").casefold()
        unit = _DURATION_UNITS.get(word.removesuffix("s"), word)
        return ExtractedValue(key, number=figure, text=text, unit=unit[:20])
    day = _cell_date(cell.strip())
    if day is not None:
        return ExtractedValue(key, date=day, text=text)
    return ExtractedValue(key, text=text)


def _cell_date(cell: str) -> datetime.date | None:
    if not _CELL_DATE_RE.match(cell):
        return None
    import dateparser

    settings = {"REQUIRE_PARTS": ["day", "month", "year"], "DATE_ORDER": "DMY", "PREFER_LOCALE_DATE_ORDER": False}
    found = dateparser.parse(cell, languages=["en"], settings=settings)
    return found.date() if found else None


# --- whose value it is -----------------------------------------------------------------------------

# Verbs that report what someone else's clause states: "BigCo renews on 1 March, Priya said".
REPORTING = frozenset(
    "say tell mention confirm note report write add explain think believe expect hear reckon claim suggest state "  # noqa: SIM905
    "announce reply ask remind warn agree estimate guess".split()
)
_ATTACHED = ("compound", "poss", "appos", "amod", "conj", "pobj", "prep", "nmod", "det", "case")


def _clause_of(token: Token) -> Token | None:
    """The verb whose subject ``token`` is part of ("BigCo" in "the BigCo contract is worth 45k": "is")."""
    while token.dep_ in _ATTACHED and token.head.i != token.i:
        token = token.head
    return token.head if token.dep_ in ("nsubj", "nsubjpass", "expl") else None


def value_holder(sent: Span, mentions: list[tuple[Span, T]], at: int) -> tuple[tuple[Span, T] | str | None, list[T]]:
    """Whose is the value at sentence offset ``at`` when the sentence reports it ("BigCo renews on 1
    March, Priya said", "Priya said the BigCo contract is worth 45k"): the subject of the reported
    clause around the value, when it is named (a mention, or a proper noun the name finder missed,
    given as its words), else None; and the mentions that only report it, which are never its holder.
    ([], the sentence's own subject stands) when nobody reports the value: "Priya asked for a forecast
    by 12 December" and "Priya Shah starts on 1 December" are about Priya."""
    where = sent.start_char + at
    token = next((t for t in sent if t.idx <= where < t.idx + max(len(t), 1)), None)
    chain: list[Token] = []
    while token is not None:
        chain.append(token)
        if token.dep_ in ("ccomp", "parataxis") and token.head.lemma_.lower() in REPORTING:
            break
        token = token.head if token.head.i != token.i else None
    if token is None:
        return None, []
    clauses = [_clause_of(span.root) for span, _ in mentions]
    reporters = [
        c for (_, c), verb in zip(mentions, clauses, strict=True) if verb is not None and verb.i == token.head.i
    ]
    for step in chain:
        named = [m for m, verb in zip(mentions, clauses, strict=True) if verb is not None and verb.i == step.i]
        if named:
            return named[0], reporters
        subject = next((c for c in step.children if c.dep_ in ("nsubj", "nsubjpass")), None)
        if subject is not None:
            if subject.pos_ != "PROPN":
                return None, reporters
            words = [t for t in subject.subtree if t.dep_ == "compound" or t.i == subject.i]
            return " ".join(t.text for t in words), reporters
    return None, reporters


# --- what it used to be ------------------------------------------------------------------------------

# "used to be 8,000 EUR", "previously 25 EUR"; "was 25 EUR" only where the sentence goes on to say
# what it is now ("Revenue for October was EUR 412,000" is a report, not an earlier state).
_EARLIER = re.compile(
    r"\b(?:used to (?:be|cost|start|run|open)|previously|formerly)\s+(?:at\s+|only\s+|just\s+)?$", re.I
)
_WAS = re.compile(r"\b(?:was|were|had been)\s+(?:at\s+|only\s+|just\s+)?$", re.I)
_NOW = re.compile(r"\bnow\b", re.I)
_CLOCK_RE = re.compile(r"\b\d{1,2}[:.]\d\d\s*(?:am|pm)?\b|\b\d{1,2}\s*(?:am|pm)\b", re.I)
_CLAUSE_END = re.compile(r"\s*(?:[;,—–]|\s-\s|\bbut\b|\band\b|\bnow\b)")
_UNTIL = re.compile(r"\b(?:until|till|through|to|before)\s+(?:the\s+)?$", re.I)
_SINCE = re.compile(r"\b(?:since|from|as of)\s+(?:the\s+)?$", re.I)


def _stated_at(statement: str, value: ExtractedValue) -> int:
    return statement.find(value.text) if value.text else -1


def earlier_state(fact: ExtractedFact) -> list[ExtractedFact]:
    """ "The stand-up used to be at 8:30; it is now 9:00", "the Team plan was 25 EUR, now 29 EUR": the
    earlier value is a statement of its own, its clause, which held until the period it gives (if it
    gives one) and comes before the sentence that states the value now, which supersedes it. A sentence
    that states no earlier value is left as it is."""
    text = fact.statement
    values = fact.values or [ExtractedValue("time", text=m.group(0).strip()) for m in _CLOCK_RE.finditer(text)]
    said = [(_stated_at(text, v), v) for v in values if not v.date]
    earlier = [
        v
        for at, v in said
        if at > 0 and (_EARLIER.search(text[:at]) or (_WAS.search(text[:at]) and _NOW.search(text, at)))
    ]
    current = [v for at, v in said if v not in earlier and at > 0]
    if not earlier or not current:
        return [fact]
    start = _stated_at(text, earlier[0]) + len(earlier[0].text)
    end = _CLAUSE_END.search(text, start)
    clause = text[: end.start() if end else len(text)].strip()
    dated = [(_stated_at(text, v), v) for v in fact.values if v.date]
    until = next((v.date for at, v in dated if 0 < at < len(clause) and _UNTIL.search(text[:at])), None)
    since = next((v.date for at, v in dated if 0 < at < len(clause) and _SINCE.search(text[:at])), None)
    key = current[0].key
    before = ExtractedFact(
        statement=clause,
        kind="fact",
        subject=fact.subject,
        object=fact.object,
        relation=fact.relation,
        single_valued=True,
        valid_from=since,
        valid_to=until,
        values=[replace(v, key=key) for v in earlier],
        char_start=fact.char_start,
        char_end=fact.char_start + len(clause),
        topic=fact.topic,
    )
    now = replace(fact, values=[*current, *(v for v in fact.values if v.date and v.date not in (until, since))])
    now.single_valued = True
    if until is not None and now.valid_to == until:
        now.valid_from, now.valid_to = until, None
    elif until is not None and now.valid_from in (until, since):
        now.valid_from = until
    return [before, now]
