"""A run's report without a language model: a short digest a person reads in a minute.

What memory holds on the prompt (per source, at most two whole sentences that share the most
words with the prompt), the facts behind it, what changed since the last run, and a registers
section where the prompt asks about promises or contradictions. Every source is a link to its
document page on this Brain (never a ``doc_1``-style id), and every time is in the organisation's
zone, named. Sentences are never cut: a passage's first words that start inside a sentence, and
last words whose sentence the passage cut, are left out.

Everything is read through the tools (``execute``), as the run's actor: the same access rules,
limits and charges as an assistant's calls.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import date, datetime, timedelta
from typing import Any

from django.conf import settings
from django.urls import reverse

from brain.core.actors import Actor
from brain.core.selectors import enabled_features
from brain.faces.refusals import for_people
from brain.faces.times import local_day, local_time
from brain.infra.ids import parse_numeric_id
from brain.mcp.invoke import execute
from brain.mcp.registry import TOOLS, is_visible
from jobs.models import Job, Run

DIGEST_ITEMS = 5  # sources under "What memory holds"
SENTENCES_PER_SOURCE = 2
SENTENCE_CHARS = 400  # a longer sentence is shown only when a source has nothing shorter
CHANGES_SHOWN = 10
REGISTER_ITEMS = 10

# What a prompt says when it asks for a register: the tool that reads it, and its name in words.
REGISTERS: list[tuple[str, str, frozenset[str]]] = [
    (
        "list_commitments",
        "Commitments",
        frozenset(
            {
                "commitment",
                "commitments",
                "committed",
                "promise",
                "promises",
                "promised",
                "owe",
                "owes",
                "owed",
                "deadline",
                "deadlines",
                "overdue",
            }
        ),
    ),
    (
        "list_contradictions",
        "Contradictions",
        frozenset(
            {
                "contradiction",
                "contradictions",
                "contradict",
                "contradicts",
                "conflict",
                "conflicts",
                "conflicting",
                "disagree",
                "disagrees",
                "inconsistent",
                "inconsistency",
                "inconsistencies",
            }
        ),
    ),
]
# Words of a prompt that say nothing about what it is about.
PLAIN = frozenset(
    {
        "what",
        "when",
        "which",
        "where",
        "about",
        "this",
        "that",
        "these",
        "those",
        "week",
        "month",
        "today",
        "changed",
        "change",
        "changes",
        "with",
        "from",
        "have",
        "does",
        "were",
        "there",
        "their",
        "they",
        "them",
        "tell",
        "give",
        "list",
        "show",
        "summary",
        "digest",
        "open",
        "still",
        "every",
        "since",
        "last",
        "new",
        "latest",
    }
)
_WORD = re.compile(r"[\w'’-]+")
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"'”’)\]]*\s+(?=[\"'“‘(\[]?[A-Z0-9])")
_ENDS = re.compile(r"[.!?…][\"'”’)\]]*$")
_MARKER = re.compile(r"^\s*(?:[-*+>]|\d+[.)])\s+")
_CITED = re.compile(r"^(?P<title>.*?)\s*\((?P<id>doc_\d+)\)\s*$")


def words_of(text: str) -> set[str]:
    """The words of ``text`` that can say what it is about: lower case, four letters or more."""
    return {w.lower().strip("'’-") for w in _WORD.findall(text) if len(w) > 3}


def _lines(piece: str) -> list[str]:
    """A piece of text as lines of one thought each: a soft-wrapped line (the next starts in lower
    case, this one has no full stop) is joined to the next; headings and table rows are left out."""
    joined: list[str] = []
    for raw in piece.splitlines():
        line = " ".join(raw.split())
        if not line:
            joined.append("")
            continue
        starts_item = bool(_MARKER.match(line)) or line.startswith(("#", "|"))
        if joined and joined[-1] and not starts_item and line[0].islower() and not _ENDS.search(joined[-1]):
            joined[-1] += " " + line
        else:
            joined.append(line)
    return [_MARKER.sub("", line) for line in joined if line and not line.startswith(("#", "|"))]


def sentences(text: str, *, truncated: bool = False) -> list[str]:
    """The whole sentences of an excerpt, in reading order. An excerpt is passages joined by "…"
    where it skips: a passage's first words that start in lower case begin inside a sentence, and
    its last words without a full stop end inside one. The end of a cut excerpt is always left out;
    the others when the passage has anything else."""
    pieces = re.split(r"(?:^|\n)…\n", text)
    found: list[str] = []
    for index, piece in enumerate(pieces):
        units = [s.strip() for line in _lines(piece) for s in _SENTENCE_END.split(line) if s.strip()]
        last = index == len(pieces) - 1
        cut_short = bool(units) and not _ENDS.search(units[-1])
        if cut_short and ((last and truncated) or (not last and len(units) > 1)):
            units = units[:-1]  # the end of a passage that was cut: never a word cut in two
        if units and units[0][0].islower() and (index > 0 or len(units) > 1):
            units = units[1:]  # begins inside a sentence (always so after a skip)
        found += units
    return found


def best_sentences(text: str, prompt_words: set[str], *, truncated: bool = False) -> list[str]:
    """Up to ``SENTENCES_PER_SOURCE`` whole sentences of ``text``, those sharing most words with the
    prompt (the first ones when none does), in reading order."""
    found = sentences(text, truncated=truncated)
    short = [s for s in found if len(s) <= SENTENCE_CHARS] or [_shortened(s) for s in found[:1]]
    ranked = sorted(range(len(short)), key=lambda i: (-len(words_of(short[i]) & prompt_words), i))
    return [short[i] for i in sorted(ranked[:SENTENCES_PER_SOURCE])]


def _shortened(sentence: str) -> str:
    """A sentence too long to show whole, ended at a word before the limit (never inside one)."""
    if len(sentence) <= SENTENCE_CHARS:
        return sentence
    return sentence[:SENTENCE_CHARS].rsplit(" ", 1)[0].rstrip(",;:") + " …"


def _untitled(text: str, title: str) -> str:
    """An excerpt without the document's title at its start: a title is not a sentence, and
    passages often begin with it run into the first sentence."""
    flat = text.lstrip()
    return flat[len(title) :].lstrip(" :.-–—\n") if title and flat.startswith(title) else text


def _escaped(text: str) -> str:
    return re.sub(r"([\[\]\\*_`])", r"\\\1", text)


def document_link(document_id: str | None, title: str) -> str:
    """The source as a markdown link to its document page on this Brain, by its title."""
    key = parse_numeric_id(document_id, "doc") if document_id else None
    if key is None:
        return _escaped(title)
    return f"[{_escaped(title)}]({settings.BRAIN_BASE_URL}{reverse('memory-document', args=[key])})"


def cited(source: str) -> str:
    """A source written as "Title (doc_3)" by the registers, as a link; any other as it is."""
    match = _CITED.match(source)
    return document_link(match["id"], match["title"]) if match else _escaped(source)


class Digest:
    """Reads through the tools as the run's actor and writes the report's lines."""

    def __init__(self, actor: Actor, job: Job, run: Run) -> None:
        self.actor, self.job, self.run = actor, job, run
        self.calls: list[dict[str, Any]] = []
        self.prompt_words = words_of(job.prompt)
        self.subject_words = self.prompt_words - PLAIN - {w for _, _, said in REGISTERS for w in said}

    def call(self, tool: str, arguments: dict[str, Any]) -> Any:
        outcome = execute(self.actor, TOOLS[tool], arguments)
        self.calls.append({"tool": tool, "arguments": arguments, "ok": outcome.output is not None})
        if outcome.output is None:  # the run fails, its report saying why in words (the call record keeps the code)
            raise RuntimeError(for_people(tool, arguments, outcome).message)
        return outcome.output

    def when(self, moment: datetime) -> str:
        return local_time(moment, self.actor.org)

    def day(self, moment: datetime | date) -> str:
        day = local_day(moment, self.actor.org) if isinstance(moment, datetime) else moment
        return f"{day:%Y-%m-%d}"

    def write(self) -> str:
        lines = [
            f"# {self.job.name}",
            f"Evidence digest for {self.when(self.run.scheduled_for)}. No language model wrote this: it shows "
            "what Brain's memory holds on the prompt and what changed since the last run, with links to the sources.",
        ]
        lines += self.holds()
        lines += self.changed()
        lines += self.registers()
        return "\n".join(lines)

    def holds(self) -> list[str]:
        activity = self.run.activity.public_id if self.run.activity else None
        asked = self.call(
            "ask_company_memory",
            {"question": self.job.prompt[:4000], "activity_id": activity, "max_evidence_documents": DIGEST_ITEMS},
        )
        lines = ["", "## What memory holds"]
        if not asked.evidence:
            lines.append("Nothing in memory answers the prompt yet.")
        said: set[str] = set()
        for page in asked.evidence[:DIGEST_ITEMS]:
            chosen = best_sentences(_untitled(page.excerpt, page.title), self.prompt_words, truncated=page.truncated)
            said.update(chosen)
            moment = page.occurred_at or page.recorded_at
            dated = f", {self.day(moment)}" if isinstance(moment, datetime | date) else ""
            text = " ".join(chosen) or "(no whole sentence to quote: open the source)"
            lines.append(f"- **{document_link(page.document_id, page.title)}**{dated}: {text}")
        facts = [c for c in asked.claims[:DIGEST_ITEMS] if not any(c.statement in s for s in said)]
        if facts:
            lines += ["", "Facts behind it:"]
            lines += [f"- {self.fact_line(fact)}" for fact in facts]
        return lines

    def fact_line(self, fact: Any) -> str:
        statement = _escaped(fact.statement.strip())
        statement += "" if _ENDS.search(statement) else "."
        source = f"From {document_link(fact.source_document_id, fact.source_title)}, r" if fact.source_title else "R"
        replaced = f"; replaced on {self.day(fact.superseded_at)}" if fact.superseded and fact.superseded_at else ""
        replaced = replaced or ("; since replaced" if fact.superseded else "")
        return f"{statement} {source}ecorded {self.when(fact.recorded_at)}{replaced}."

    def changed(self) -> list[str]:
        since = self.job.last_run_at or (self.run.scheduled_for - timedelta(days=7))
        day = local_day(since, self.actor.org)
        changed = self.call("memory_timeline", {"from": day.isoformat(), "limit": 40})
        related = [f for f in changed.facts if self.prompt_words & words_of(f.statement)]
        shown = related or changed.facts
        lines = ["", f"## What changed since {self.when(since)}"]
        if not shown:
            lines.append("No fact was recorded or replaced in that time.")
        lines += [f"- {self.fact_line(fact)}" for fact in shown[:CHANGES_SHOWN]]
        return lines

    def registers(self) -> list[str]:
        asked = [(tool, name) for tool, name, said in REGISTERS if self.prompt_words & said]
        if not asked:
            return []
        lines = ["", "## Registers"]
        features = enabled_features(actor=self.actor)
        for tool, name in asked:
            lines += ["", f"### {name}"]
            if not is_visible(TOOLS[tool], scopes=self.actor.scopes, features=features):
                lines.append(f"The {name.lower()} register is switched off in this organisation.")
                continue
            if tool == "list_commitments":
                entries = self.call(tool, {"state": "open", "limit": 100}).commitments
                lines += self.entries(entries, self.commitment_line, "open commitments")
            else:
                entries = self.call(tool, {"state": "open", "limit": 100}).contradictions
                lines += self.entries(entries, self.contradiction_line, "open contradictions")
        return lines

    def entries(self, entries: list[Any], line: Any, what: str) -> list[str]:
        if not entries:
            return [f"There are no {what}."]
        related = [e for e in entries if self.subject_words & words_of(" ".join(_texts(e)))]
        lines = []
        if self.subject_words and not related:
            lines.append(f"None of the {what} mentions {', '.join(sorted(self.subject_words))}; all of them:")
        lines += [f"- {line(entry)}" for entry in (related or entries)[:REGISTER_ITEMS]]
        return lines

    def commitment_line(self, entry: Any) -> str:
        due = f"due {entry.due_on:%Y-%m-%d}" if entry.due_on else "no due date given"
        late = ", overdue" if entry.overdue else ""
        where = f", in {cited(entry.made_in)}" if entry.made_in else ""
        return (
            f"**{_escaped(entry.owner)}**: {_escaped(entry.what)} ({due}{late}; promised "
            f"{entry.promised_on:%Y-%m-%d}{where})"
        )

    def contradiction_line(self, entry: Any) -> str:
        sides = [
            f"{_escaped(side.claim)} ({cited(side.source)}{f', {side.date:%Y-%m-%d}' if side.date else ''})"
            for side in (entry.a, entry.b, *entry.more)
        ]
        return f"**{_escaped(entry.about)}**: " + " / ".join(sides)


def _texts(entry: Any) -> Iterable[str]:
    for name in ("owner", "what", "made_in", "about", "subject", "question"):
        value = getattr(entry, name, None)
        if isinstance(value, str):
            yield value
    for side in (getattr(entry, "a", None), getattr(entry, "b", None)):
        if side is not None:
            yield side.claim


def digest(actor: Actor, job: Job, run: Run) -> tuple[str, list[dict[str, Any]]]:
    """The report of a run without a model, and the tool calls it made."""
    written = Digest(actor, job, run)
    return written.write(), written.calls
