"""The shapes of lines a source is made of: a mail's header lines, quoted replies and the line that
introduces them, signatures, greetings and sign-offs, a "Name: remark" label, an attendee list, and
written dates. Pure patterns, shared by the block reader and the reading of a source's moment."""

from __future__ import annotations

import re

HEADER = re.compile(r"^\s*(?P<name>from|to|cc|bcc|date|sent|subject|reply-to)\s*:\s*(?P<value>.*)$", re.I)
QUOTED = re.compile(r"^\s*>")
# "On Fri, 21 Nov 2025 at 17:03, Tom Becker wrote:" (a reply's quote follows) and its kin.
WROTE = re.compile(r"^\s*(?:on\b.{0,200}\bwrote|.{1,120}\bschrieb|le\b.{0,200}\ba écrit)\s*:\s*$", re.I)
ORIGINAL = re.compile(r"^\s*-{2,}\s*original message\s*-{2,}\s*$", re.I)
FORWARDED = re.compile(r"^\s*-{2,}\s*(?:forwarded message|begin forwarded message)\s*-{0,}\s*:?\s*$", re.I)
SIGNATURE = re.compile(r"^\s*--\s*$")
SENT_FROM = re.compile(r"^\s*(?:sent from my|get outlook for)\b.{0,60}$", re.I)
GREETING = re.compile(
    r"^\s*(?:hi|hello|hey|dear|hallo|hej|morning|good (?:morning|afternoon|evening))\b[\w .,'’-]{0,60}[,!:]?\s*$",
    re.I,
)
SIGN_OFF = re.compile(
    r"^\s*(?:best(?: regards| wishes)?|regards|kind regards|warm regards|many thanks|thanks(?: again| a lot)?|"
    r"thank you|cheers|all the best|br|thx|talk soon|speak soon|yours(?: sincerely| truly)?|sincerely)\s*[,.!]?\s*$",
    re.I,
)
# A line that is only a name ("Jonas,", "Priya", "Lena Fischer"): a mail's greeting or its signature.
NAME_LINE = re.compile(r"^\s*[A-Z][\w'’.-]*(?:\s+[A-Z][\w'’.-]*){0,2}\s*[,!]?\s*$")
HEADING = re.compile(r"^\s*#{1,6}\s")
# A one-word label followed by someone speaking for themselves is a turn ("Priya: I'll send it").
SPEECH = re.compile(r"\s*(?:i|i'm|i'll|i've|i'd|we|we'll|we're|we've|my|our)\b", re.I)
ATTENDEES = re.compile(
    r"^\s*[-*•]?\s*\**(?P<name>attendees|participants|present|attending|invitees|absent|apologies)\**\s*:\s*(?P<value>.*)$",
    re.I,
)


def word_set(words: str) -> frozenset[str]:
    return frozenset(words.split())


# Words that open a "Word: ..." line without being anyone's name.
LABELS = word_set(
    """note notes decision decisions action actions action items owner owners agenda update updates status summary
    next steps topic topics location time where when goal goals risk risks question questions answer q a todo
    follow-up follow up outcome outcomes result results background context problem impact cause fix tl;dr warning
    important reminder deadline budget price prices subject date to from cc re fwd fw ps p.s nb info fyi faq tip
    example step steps phase phases why what how who scope plan plans priority priorities done blocked
    blocker blockers in progress open closed minutes meeting call attendees participants present absent"""
) | {"action items", "next steps", "follow up", "in progress"}
MONTHS = {
    "jan": 1,
    "feb": 2,
    "mar": 3,
    "apr": 4,
    "may": 5,
    "jun": 6,
    "jul": 7,
    "aug": 8,
    "sep": 9,
    "oct": 10,
    "nov": 11,
    "dec": 12,
}
_MONTH = r"(?P<month>jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?"
DATES = (
    re.compile(r"\b(?P<year>(?:19|20)\d\d)-(?P<mm>\d{1,2})-(?P<day>\d{1,2})\b"),
    re.compile(rf"\b(?P<day>\d{{1,2}})(?:st|nd|rd|th)?\s+{_MONTH},?\s+(?P<year>(?:19|20)\d\d)\b", re.I),
    re.compile(rf"\b{_MONTH}\s+(?P<day>\d{{1,2}})(?:st|nd|rd|th)?,?\s+(?P<year>(?:19|20)\d\d)\b", re.I),
    re.compile(r"\b(?P<day>\d{1,2})[/.](?P<mm>\d{1,2})[/.](?P<year>(?:19|20)\d\d)\b"),
)
