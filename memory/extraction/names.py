"""What a name plainly is, whoever reads it: software, a well-known place, a team, a company or a
product by the word its name ends with. The reading of a source (``memory.documents.source``) and
entity kinds (``memory.extraction.kinds``) both ask; the words live here, once."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING

from memory.extraction.lines import word_set

if TYPE_CHECKING:
    from spacy.tokens import Doc, Span, Token


# Software and services a team uses: the model calls them people or companies.
TECHNOLOGIES = word_set(
    """django postgres postgresql mysql mariadb sqlite mongodb redis kafka rabbitmq celery elasticsearch
    kubernetes k8s docker terraform ansible nginx linux windows macos ios android python java javascript
    typescript react node.js nodejs rust golang aws azure gcp heroku vercel cloudflare github gitlab bitbucket
    jira confluence slack teams zoom notion trello asana linear figma salesforce hubspot zendesk freshdesk
    intercom grafana datadog sentry prometheus pagerduty opsgenie statuspage okta yubikey 1password bitwarden
    stripe xero quickbooks sap netsuite workday personio bamboohr pleo navan docusign dropbox gmail outlook
    excel sharepoint tableau looker snowflake bigquery airflow dbt twilio sendgrid mailchimp shopify"""
)
# The ones that are no ordinary English word as well, so a capitalised one is always the software.
SOFTWARE_NAMES = TECHNOLOGIES - word_set("teams linear windows rust node zoom notion excel outlook sentry okta xero")
# Places the small model most often calls people: countries and large cities, as a floor under NER.
PLACES = word_set(
    """rotterdam amsterdam lyon paris porto lisbon braga bergen oslo stockholm malmö malmo copenhagen warsaw
    london berlin munich hamburg madrid barcelona rome milan vienna zurich geneva brussels dublin prague
    budapest helsinki athens istanbul boston chicago toronto tokyo singapore sydney
    portugal france spain germany italy sweden norway denmark finland poland netherlands belgium
    ireland austria switzerland"""
)
# The last word of a company's name ("Brightline Logistics", "Verdant Cloud"): the small model calls
# many of these people.
COMPANY_WORDS = word_set(
    """logistics foods food print printing systems labs lab group holdings industries solutions software
    technologies technology partners consulting consultants capital media services networks retail bank
    insurance energy health healthcare pharma airlines airways motors studios press freight shipping transport
    cloud telecom electronics manufacturing ventures hotels robotics agency associates brewery
    bakery farms markets supermarkets stores fresh trading imports exports supplies"""
)
# The last word of a product's name ("Kestrel Ledger", "Kestrel Dispatch").
PRODUCT_WORDS = word_set(
    """ledger dispatch desk hub suite app portal console pay connect dashboard tracker planner calendar analytics
    platform"""
)


# A company's departments, named alone ("joins Finance", "ask Legal"): teams.
DEPARTMENTS = word_set(
    """finance sales marketing legal engineering operations procurement accounting hr recruiting support
    facilities compliance"""
)


# Words that make a name an organisation wherever they stand in it ("Cloud Native Computing
# Foundation", "Harvard University School of ...", "Center for Internet Security").
INSTITUTION_WORDS = word_set(
    """foundation university institute alliance association council society federation consortium commission
    college academy llp"""
)
# The last word of a body inside an organisation ("Technical Steering Committee", "Tech Ops").
BODY_WORDS = word_set("committee board department ops division")
# The last word of a rule, a benefit or a document people refer to by name: a term, never a person.
TERM_WORDS = word_set(
    """policy policies plan procedure procedures standard standards guideline guidelines agreement act license licence
    insurance leave allowance stipend benefit benefits matrix framework charter regulation register handbook"""
)
# Time zones ("UTC", "PST"): a term, though the model calls them companies.
TIME_ZONES = word_set("utc gmt bst cet cest eet eest wet west pst pdt mst mdt cst cdt est edt ist jst aest aedt nzst")
# Job titles ("VP of Engineering", "Senior Accountant", "People Partner"): a role, not the person holding it.
TITLE_WORDS = word_set(
    """vp svp evp head director manager accountant controller engineer officer partner president chief counsel
    analyst architect coordinator specialist administrator recruiter designer technologist"""
)


def plain_kind(name: str) -> str | None:
    """The kind a name plainly has whatever the model says: software, a well-known place, a team, a
    company or an institution by its words, a product by the word its name ends with, a policy, a
    benefit or a job title (a term)."""
    folded = name.casefold().strip()
    words = folded.replace("-", " ").split()
    if folded in TECHNOLOGIES or words and words[0] in TECHNOLOGIES and len(words) == 1:
        return "system"
    if folded in PLACES:
        return "place"
    if folded in TIME_ZONES and name.strip().isupper():
        return "term"
    if folded.endswith(" team") or folded in DEPARTMENTS:
        return "team"
    if not words or not name.strip()[:1].isupper():
        return None
    titled = words[0] in TITLE_WORDS and len(words) >= 3 and words[1] == "of"  # "Head of Security"
    if titled or words[-1] in TERM_WORDS or (words[-1] in TITLE_WORDS and words[0] not in COMPANY_WORDS):
        return "term"
    if len(words) >= 2 and (words[-1] in BODY_WORDS or (words[0] in DEPARTMENTS and words[-1] in COMPANY_WORDS)):
        return "team"  # "Finance Group", "Customer Support" is a team; "Acme Group" a company
    if len(words) >= 2 and (words[-1] in DEPARTMENTS or words[-1] == "success"):
        return "team"
    if any(w in INSTITUTION_WORDS for w in words) or (len(words) >= 3 and words[0] in ("center", "centre")):
        return "organisation"
    if len(words) >= 2:
        if words[-1] in COMPANY_WORDS:
            return "organisation"
        if words[-1] in PRODUCT_WORDS:
            return "product"
    return None


# How common a word must be in English (wordfreq's Zipf scale) to be read as an ordinary word.
COMMON_ZIPF = 3.0
_JOINING = frozenset({"of", "and", "for", "the", "&", "in", "by", "to", "a", "on", "per"})


@lru_cache(maxsize=8192)
def common_word(word: str) -> bool:
    """A word of everyday English ("owner", "hotels"), in any case; most names are not."""
    import wordfreq

    lower = word.casefold()
    forms = {lower, lower.removesuffix("s"), lower.removesuffix("es")}
    return any(wordfreq.zipf_frequency(form, "en") >= COMMON_ZIPF for form in forms if len(form) > 1)


def field_words(label: str, lower_words: frozenset[str] | set[str]) -> bool:
    """Words that name a field or a column ("Policy Owner", "Effective Date", "Food Tour"), not a
    person or a thing: every one an everyday word, and one at least written in lower case elsewhere
    in the same text ("the owner of the policy"). "Mark Brown" is common words too, but a text about
    him seldom writes "brown"."""
    words = [w for w in label.replace("-", " ").split() if w.casefold() not in _JOINING]
    if not words or not all(w.isalpha() and common_word(w) for w in words):
        return False
    return any(w.casefold() in lower_words or w.casefold().removesuffix("s") in lower_words for w in words)


# A name written in lower case ("quillpad", "gh2md"): a word no dictionary has, one token.
_LOWER_NAME = re.compile(r"[a-z][a-z0-9]{2,}")
_CODED_NAME = re.compile(r"[a-z][a-z0-9]*(?:[-_][a-z0-9]+)*")  # "`orchestrion-js`" in code formatting
# What may stand right beside a name: not a path's, an address's or an identifier's other part.
_JOINED_BEFORE = frozenset("/.@$~#=-_\\")
_JOINED_AFTER = frozenset("/@(=_\\")


def lower_case_names(doc: Doc, taken: set[int]) -> list[tuple[Span, str]]:
    """Names a text writes in lower case, as their owners write them, with their kind: software
    ("quillpad", "gh2md": a product) and people's handles ("tobwen mentions ...": a person). A word
    that is no everyday English word is a name where the text uses it as one: in code formatting,
    as the subject of a verb ("quillpad indexes ..."), or twice as a noun in different words; the
    subject of what people do (``PEOPLE_VERBS``) is a person. Every place it is written is a
    mention. A word before a colon or a comma where a line or an item opens is someone spoken to
    or a label ("tobwen: it's flaky", "zarvok: drop ..."), never one of these; nor is a word of a
    change's title (``_change_titles``)."""
    places: dict[str, list[int]] = {}
    settings: dict[str, set[str]] = {}
    named: dict[str, str] = {}
    labels: set[str] = set()
    unheard: set[str] = set()
    titles = _change_titles(doc)
    text = doc.text  # built from every token each time it is asked for: once, not once a token
    for token in doc:
        word = token.text
        coded = _between(text, token.idx, len(word), "`")
        if token.i in taken or not (_LOWER_NAME.fullmatch(word) or (coded and _CODED_NAME.fullmatch(word))):
            continue
        if token.like_url or token.like_email or _joined(text, token.idx, len(word)) or common_word(word):
            continue
        if _label(doc, token):
            labels.add(word)
            continue
        if (token.pos_ not in ("NOUN", "PROPN", "X") and not coded) or token.i in titles:
            continue
        places.setdefault(word, []).append(token.i)
        settings.setdefault(word, set()).add(doc[max(token.i - 2, 0) : token.i + 3].text.casefold())
        if _does_what_people_do(token):
            named[word] = "person"
        elif coded or _subject(token):
            named.setdefault(word, "product")
        if token.pos_ == "PROPN" or _zipf(word) < _UNHEARD_OF:
            unheard.add(word)
    # Written twice, it is a name if the model reads it as one or English has no such word at all:
    # "receivables" and "tooling" are rare words, not names. Twice in the same words is once: a
    # list's lead-in said again before each of its items ("some wibbler areas: ...").
    for word in unheard:
        if len(settings[word]) > 1:
            named.setdefault(word, "product")
    return [(doc[i : i + 1], kind) for word, kind in named.items() if word not in labels for i in places[word]]


# What people do and things do not: the subject of one of these is someone.
PEOPLE_VERBS = word_set(
    """say write ask come reply answer agree disagree think suggest propose mention explain note want prefer
    promise review approve object comment volunteer offer wonder plan applaud thank announce"""
)


_SUBJECT = ("nsubj", "nsubjpass")
_UNHEARD_OF = 1.5  # Zipf: "notmuch" 0, "pandoc" 1.1; "timestamp", "lifecycle" and "config" are above 2


def _zipf(word: str) -> float:
    import wordfreq

    return float(wordfreq.zipf_frequency(word, "en"))


def _subject(token: Token) -> bool:
    """The subject of a verb, standing bare as a name does ("quillpad indexes ..."); a word English
    has heard of with an article or a word before it ("the team offsite is ...") is a noun."""
    if token.dep_ not in _SUBJECT or token.head.pos_ not in ("VERB", "AUX"):
        return False
    # Not ``token.sent``: spaCy reads the whole document to answer it, which made long texts quadratic.
    before = token.nbor(-1) if token.i > 0 and not token.is_sent_start else None
    bare = before is None or not (before.pos_ in _BEFORE_A_NOUN or before.tag_ == "PRP$")
    return bare or _zipf(token.text) < _UNHEARD_OF


_BEFORE_A_NOUN = ("DET", "ADJ", "NOUN", "PROPN", "NUM")


def _does_what_people_do(token: Token) -> bool:
    """The subject of a verb of ``PEOPLE_VERBS``; the small model reads "pnkfelix mentions" as a
    compound noun, so the word after it counts too."""
    head = token.head
    if token.dep_ in ("compound", *_SUBJECT) and head.i == token.i + 1 and head.tag_ in ("NNS", "VBZ"):
        return head.lemma_.lower() in PEOPLE_VERBS
    return token.dep_ in _SUBJECT and head.pos_ in ("VERB", "AUX") and head.lemma_.lower() in PEOPLE_VERBS


def _between(text: str, start: int, length: int, mark: str) -> bool:
    return text[start - 1 : start] == mark and text[start + length : start + length + 1] == mark


def _joined(text: str, start: int, length: int) -> bool:
    before, after = text[start - 1 : start], text[start + length : start + length + 2]
    return (
        (start > 0 and before in _JOINED_BEFORE)
        or (after[:1] in _JOINED_AFTER)
        or (after[:1] == "." and after[1:2].isalnum())
    )


def _change_titles(doc: Doc) -> set[int]:
    """The tokens of list items that open with a lower-case area and a colon, as changes are titled
    ("- ci: move the default cfg to settings.json"): written in lower case throughout, in clipped
    words ("cfg", "repo") a dictionary may lack, so their words' shape tells nothing."""
    inside: set[int] = set()
    for token in doc:
        if not (_CODED_NAME.fullmatch(token.text) and _label(doc, token) and _bulleted(doc, token)):
            continue
        at = token.i + 1
        while at < len(doc) and "\n" not in doc[at - 1].text_with_ws:
            inside.add(at)
            at += 1
    return inside


def _bulleted(doc: Doc, token: Token) -> bool:
    before = doc[token.i - 1] if token.i else None
    return before is not None and before.text in ("-", "*", "+", "•") and "\n" not in before.text_with_ws


def _label(doc: Doc, token: Token) -> bool:
    """The word opens its line or list item and a colon or a comma follows it."""
    at = token.i - 1
    while at >= 0 and "\n" not in doc[at].text_with_ws and not any(c.isalnum() for c in doc[at].text):
        at -= 1  # a bullet ("*", "-") before it
    opens = at < 0 or "\n" in doc[at].text_with_ws
    return opens and token.i + 1 < len(doc) and doc[token.i + 1].text in (":", ",")
