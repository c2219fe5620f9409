"""Measure the answer card and the relevance floor on data laid out like eval_retrieval's.

Each corpus is loaded as ``eval_retrieval`` loads it (or, with --reuse, the organisations an
earlier run kept). Every question of the set goes through ``card_search`` and ``answer_card``,
what the search page and ask_company_memory show; every off-topic question is asked of every
corpus. Reported beside the search without the floor (what the page listed before):

- for the set's questions: how often the card's answer comes from a gold document and how often
  its line or sentence holds the labelled answer (the words of the set's ``answer`` field, or one
  of its ``gold_quotes``), against the top passage the page showed as its best match before;
  how many documents are listed, and how often a gold document is still among them;
- for the off-topic questions: how many cards claim an answer, and how many documents are listed.
"""

from __future__ import annotations

import re
import statistics
from pathlib import Path
from typing import Any

from django.contrib.auth.models import User
from django.core.management.base import BaseCommand, CommandParser
from django.test.utils import override_settings

from brain.core.actors import Actor
from brain.models import Organisation
from memory.management.commands.eval_no_evidence import OFF_TOPIC
from memory.management.commands.eval_retrieval import Command as Loader
from memory.management.commands.eval_retrieval import read_jsonl
from memory.models import Document
from memory.search.answer import Card, answer_card
from memory.search.evidence import CARD_SEARCH_TOP_K, card_search, said_when
from memory.search.passages import search_chunks

_WORD = re.compile(r"\w+")


def words(text: str) -> list[str]:
    return [w.casefold() for w in _WORD.findall(text)]


def holds(text: str, wanted: str) -> bool:
    """Whether ``wanted``'s words run inside ``text``, case and punctuation aside."""
    inner, outer = words(wanted), words(text)
    if not inner:
        return False
    return any(outer[i : i + len(inner)] == inner for i in range(len(outer) - len(inner) + 1))


class Command(BaseCommand):
    help = __doc__

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--docs", required=True, type=Path)
        parser.add_argument("--queries", required=True, type=Path)
        parser.add_argument("--off-topic", type=Path, default=OFF_TOPIC)
        parser.add_argument("--split", default="", help="Score only the queries of this split (e.g. dev)")
        parser.add_argument("--keep", action="store_true", help="Keep the throwaway organisations")
        parser.add_argument("--reuse", action="store_true", help="Score the organisations an earlier --keep loaded")
        parser.add_argument("--verbose", action="store_true", help="Print each question the card misses")

    def handle(self, *args: Any, **opts: Any) -> None:
        docs, queries, off_topic = read_jsonl(opts["docs"]), read_jsonl(opts["queries"]), read_jsonl(opts["off_topic"])
        corpora = sorted({row["corpus"] for row in docs})
        queries = [q for q in queries if q.get("corpus") in corpora and q.get("gold_doc_ids")]
        if opts["split"]:
            queries = [q for q in queries if q.get("split") == opts["split"]]
        loader = Loader()
        loader.stdout, loader.stderr = self.stdout, self.stderr
        loader.created, loader.users = [], []
        actors: dict[str, Actor] = {}
        try:
            for corpus in corpora:
                if opts["reuse"]:
                    actors[corpus] = loader._kept(corpus)
                    continue
                with override_settings(BRAIN_EXTRACT_FACTS=False):
                    actors[corpus] = loader._load(corpus, [row for row in docs if row["corpus"] == corpus])
            external: dict[int, str] = {}
            for actor in actors.values():
                external.update(dict(Document.objects.filter(org=actor.org).values_list("pk", "external_id")))
            real = [self._ask(actors[q["corpus"]], q, external, opts["verbose"]) for q in queries]
            unrelated = [self._ask(actor, q, external, opts["verbose"]) for actor in actors.values() for q in off_topic]
        finally:
            if not (opts["keep"] or opts["reuse"]):
                Organisation.objects.filter(slug__in=loader.created).delete()
                User.objects.filter(pk__in=loader.users).delete()
        self._report(real, unrelated)

    def _ask(self, actor: Actor, query: dict[str, Any], external: dict[int, str], verbose: bool) -> dict[str, Any]:
        question, gold = query["query"], set(query.get("gold_doc_ids", []))
        wanted = [w for w in [query.get("answer", ""), *query.get("gold_quotes", [])] if w]
        before = search_chunks(actor=actor, query=question, top_k=CARD_SEARCH_TOP_K, per_document=True).hits
        kept = card_search(actor=actor, question=question, as_of=None)
        card = answer_card(question, kept, [said_when(h) for h in kept])
        said = f"{card.line} {card.answer.sentence}" if card.answer else ""
        row = {
            "claims": card.status in ("answered", "disputed"),
            "disputed": card.status == "disputed",
            "listed": len(kept),
            "listed_before": len(before),
            "gold_listed": any(external.get(h.document_id) in gold for h in kept),
            "gold_card": card.answer is not None and external.get(card.answer.document_id) in gold,
            "answer_card": any(holds(said, w) for w in wanted),
            "gold_top": bool(before) and external.get(before[0].document_id) in gold,
            "answer_top": bool(before) and any(holds(before[0].text, w) for w in wanted),
        }
        if verbose and ((gold and not row["answer_card"]) or (not gold and row["claims"]) or row["disputed"]):
            self.stdout.write(f"- {query['qid']} {question!r}: wanted {wanted[:1]!r}; {self._shown(card)}")
            for other in card.others:
                self.stdout.write(f"    other source: {other.value!r} in {other.sentence!r}")
        return row

    @staticmethod
    def _shown(card: Card) -> str:
        return f"card {card.status}: {card.answer.sentence if card.answer else ''!r}"

    def _report(self, real: list[dict[str, Any]], unrelated: list[dict[str, Any]]) -> None:
        def share(rows: list[dict[str, Any]], key: str) -> str:
            return f"{sum(r[key] for r in rows)}/{len(rows)} ({sum(r[key] for r in rows) / max(len(rows), 1):.3f})"

        def listed(rows: list[dict[str, Any]], key: str) -> str:
            values = [r[key] for r in rows] or [0]
            return f"mean {statistics.mean(values):.1f}, median {statistics.median(values):g}"

        out = self.stdout
        out.write(f"{len(real)} questions with an answer, {len(unrelated)} off-topic")
        out.write(f"answer card: its source is a gold document {share(real, 'gold_card')}")
        out.write(f"             it holds the labelled answer {share(real, 'answer_card')}")
        out.write(f"             claims an answer {share(real, 'claims')}; disputed {share(real, 'disputed')}")
        out.write(f"best match before (top passage): gold document {share(real, 'gold_top')}")
        out.write(f"                                 holds the labelled answer {share(real, 'answer_top')}")
        out.write(f"documents listed: {listed(real, 'listed')} (before: {listed(real, 'listed_before')})")
        out.write(f"a gold document still listed: {share(real, 'gold_listed')}")
        out.write(f"off-topic: cards claiming an answer {share(unrelated, 'claims')}")
        before = listed(unrelated, "listed_before")
        out.write(f"off-topic: documents listed {listed(unrelated, 'listed')} (before {before})")
