"""What counts as a promise in a sentence, and what does not: the word lists and patterns.

The extraction is tuned for precision: a sentence that hedges, asks, sets a condition, reports a
decision or narrates the meeting itself ("I'll go first", "I'll just put that there") gives nothing,
even when a person in it does go on to do something.
"""

from __future__ import annotations

import re

# A sentence is parsed only when one of these is in it; most transcript sentences have none.
CUE_RE = re.compile(
    r"(?i)\b(?:will|shall|going to|gonna|let me|with me|agreed to|agrees to|can take)\b|'ll\b"
    r"|^\s*(?:(?i:action(?: item)?s?)\s*[:\-]\s*)?[A-Z][\w'-]*(?: [A-Z][\w'-]*)? to [a-z]+"
)
ACTION_ITEM_RE = re.compile(
    r"^\s*(?:(?i:action(?: item)?s?|todo|to do|next steps?)\s*[:\-]\s*)?"
    r"(?P<owner>[A-Z][\w'-]*(?: [A-Z][\w'-]*){0,2}) to (?P<rest>[a-z].*)$"
)
ACTION_PREFIX_RE = re.compile(r"(?i)^\s*(?:action(?: item)?s?|todo|to do|next steps?)\s*[:\-]")
LEAVE_IT_WITH_ME_RE = re.compile(r"(?i)\bleave (?:it|that|this) with me\b")

# Whole-sentence rejections, read on the cleaned, lowercased sentence.
QUESTION_START_RE = re.compile(
    r"^(?:(?:so|and|but|okay|ok|right|well)\W+)*"
    r"(?:will|shall|can|could|would|should|do|did|does|are|is|am|was|were|won't|have|has)\s+"
    r"(?:you|we|i|they|he|she|it|someone|anyone|somebody|anybody)\b"
)
SENTENCE_REJECTS = ("question", "conditional", "decision")
REJECT_RES = {
    "conditional": re.compile(
        r"\b(?:if|unless|once|provided|providing|assuming|in case|soon as|depending|otherwise|worst comes)\b"
        r"|\bwhen (?:we|i|you|they|it|he|she)\b"
    ),
    "habit": re.compile(
        r"\b(?:typically|usually|generally|normally|often|sometimes|whenever|in which case)\b"
        r"|\b(?:every|each) (?:other )?(?:day|morning|evening|week|month|quarter|year|monday|tuesday|wednesday"
        r"|thursday|friday|saturday|sunday)\b"
    ),
    "hedge": re.compile(
        r"\b(?:maybe|perhaps|probably|possibly|hopefully|hope|hoping|wish|might|could|should|would|"
        r"i think|i guess|i suppose|i reckon|i imagine|i expect|not sure|wonder|try and see|sort of|kind of|"
        r"would like|'d like|(?:we|you|they) can)\b"
    ),
    "decision": re.compile(r"\b(?:decided|agreed that|we agreed|we've agreed|resolved|voted)\b"),
    "negation": re.compile(r"\b(?:won't|wont|will not|shan't|not going to|not gonna|never|no one|nobody)\b|n't\b"),
    "filler": re.compile(
        r"\b(?:will|'ll|gonna|going to) (?:just|only|also just)\b|\btell you what\b|\b(?:will|'ll) say\b"
        r"|\bbe honest\b|\bas i said\b"
    ),
}

# A verb that narrates talk or the meeting itself, or is no action at all.
NON_ACTION_LEMMAS = frozenset(
    [
        "be",
        "attend",
        "join",
        "participate",
        "say",
        "admit",
        "bet",
        "guess",
        "see",
        "stop",
        "start",
        "begin",
        "go",
        "carry",
        "continue",
        "move",
        "pass",
        "hand",
        "turn",
        "draw",
        "read",
        "use",
        "talk",
        "speak",
        "answer",
        "mention",
        "explain",
        "repeat",
        "summarise",
        "summarize",
        "agree",
        "remember",
        "think",
        "sit",
        "stand",
        "wrap",
        "finish",
        "close",
        "list",
        "keep",
        "skip",
        "need",
        "want",
        "like",
        "love",
        "hate",
        "leave",
        "echo",
        "pick",
        "jump",
        "return",
        "stick",
        "chat",
        "focus",
        "touch",
        "refer",
        "point",
        "introduce",
        "elaborate",
        "clarify",
        "sum",
        "open",
        "present",
        "demonstrate",
        "hear",
        "listen",
        "wait",
        "rephrase",
        "know",
    ]
)
NOT_DELIVERABLE_OBJECTS = frozenset(
    ["example", "try", "go", "idea", "overview", "flavour", "flavor", "sense", "bit", "chance", "word", "question"]
)
MEETING_ADVERBS = frozenset({"now", "first", "here"})
# What a meeting moves through ("move to the next item"), and the states a thing is had in when delivered.
MEETING_THINGS = frozenset(
    ["item", "point", "agenda", "topic", "question", "floor", "meeting", "call", "slide", "thing"]
)
DONE_WORDS = frozenset(["do", "done", "ready", "finish", "finished", "fix", "fixed", "sort", "sorted", "send", "sent"])
# An unqualified "we" is the speaker's own promise only when it hands something over; "we'll discuss",
# "we're going to do some training" is the group's plan, with no one in particular owning it.
DELIVERY_LEMMAS = frozenset(
    [
        "send",
        "issue",
        "deliver",
        "share",
        "publish",
        "provide",
        "ship",
        "submit",
        "circulate",
        "email",
        "mail",
        "forward",
        "return",
        "give",
        "get",
        "have",
        "pay",
        "refund",
        "release",
        "hand",
        "post",
        "upload",
        "report",
        "confirm",
    ]
)
PERSON_OBJECTS = frozenset({"you", "them", "him", "her", "everyone", "everybody", "all"})
# "Let me ..." is a promise only for work done after the conversation, not "let me see" or "let me ask".
LET_ME_VERBS = frozenset(
    [
        "check",
        "find",
        "get",
        "look",
        "follow",
        "send",
        "sort",
        "chase",
        "confirm",
        "dig",
        "email",
        "mail",
        "forward",
        "circulate",
        "draft",
        "fix",
        "write",
        "investigate",
        "review",
        "update",
        "arrange",
        "book",
        "schedule",
        "organise",
        "organize",
        "set",
        "call",
        "ping",
        "contact",
    ]
)
PRONOUNS = frozenset(
    [
        "i",
        "me",
        "we",
        "us",
        "you",
        "he",
        "him",
        "she",
        "her",
        "it",
        "they",
        "them",
        "this",
        "that",
        "these",
        "those",
        "who",
        "someone",
        "somebody",
        "anyone",
        "anybody",
        "everyone",
        "everybody",
        "nobody",
        "something",
        "everything",
        "one",
    ]
)
# First-person words in the promise, rewritten to the third person ("send you my notes" -> "their notes").
THIRD_PERSON = {"my": "their", "mine": "theirs", "me": "them", "myself": "themselves", "our": "their"}
THIRD_PERSON |= {"ours": "theirs", "us": "them", "ourselves": "themselves"}
FILLER_RE = re.compile(r"(?i)(?<![\w'])(?:um+|uh+|erm+|er|ah+|hmm+|mm+|mm-hmm|uh-huh)(?![\w'])[,.]?\s*")
REPEAT_RE = re.compile(r"(?i)(?<![\w'])([\w']+)(?:[\s,]+\1)+(?![\w'])")
BREAK_RE = re.compile(r"\s*(?:--+|—|–|~|\.\.\.+|…)\s*")
SENTENCE_END_RE = re.compile(r"(?<=[.!?])\s+(?=\S)|\n+")


def clean(sentence: str) -> str:
    """The sentence without fillers, stutters and broken-off dashes, for the parser only."""
    text = BREAK_RE.sub(" ", sentence)
    text = FILLER_RE.sub("", text)
    text = REPEAT_RE.sub(r"\1", text)
    return " ".join(text.split())


def rejection(cleaned: str, *, upto: int | None = None) -> str | None:
    """Why this sentence holds no promise, whatever its verbs say; None when it may hold one.

    Without ``upto`` only what spoils the whole sentence counts (a question, a condition, a decision);
    with it, also hedges, habits, negations and filler in the text up to the end of the promise, so
    "I'll give it to Brian and they can try it" keeps its promise.
    """
    text = cleaned.lower().strip()
    if text.endswith("?") or QUESTION_START_RE.match(text):
        return "question"
    if upto is not None:
        text, head = cleaned.lower(), cleaned[:upto].lower()
        return next((n for n, p in REJECT_RES.items() if p.search(text if n in SENTENCE_REJECTS else head)), None)
    return next((n for n, p in REJECT_RES.items() if n in SENTENCE_REJECTS and p.search(text)), None)
