"""Measure when ask_company_memory answers no_evidence, on data laid out like eval_retrieval's.

Each corpus is loaded as ``eval_retrieval`` loads it. Every question of the set (which its corpus
answers) and every off-topic question (asked of every corpus) goes through ``gather_evidence``
with ask_company_memory's defaults. Reported: how many real questions wrongly get no evidence and
how many off-topic ones still get some, at the threshold in use and at others, with the
closeness (``memory.search.evidence.closeness``) of both kinds of question.
"""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

from django.contrib.auth.models import User
from django.core.management.base import BaseCommand, CommandParser
from django.test.utils import override_settings

from brain.core.actors import Actor
from brain.models import Organisation
from memory.graph.entity_views import entities_named
from memory.graph.reads import search_facts
from memory.index.serving import query_vector
from memory.management.commands.eval_retrieval import Command as Loader
from memory.management.commands.eval_retrieval import read_jsonl
from memory.search.evidence import ON_TOPIC_SIMILARITY, Question, closeness, gather_evidence
from memory.search.passages import search_chunks

OFF_TOPIC = Path(__file__).resolve().parents[3] / "eval" / "off-topic" / "questions.jsonl"
THRESHOLDS = [0.15, 0.2, 0.25, 0.3, 0.35, 0.4]


class Command(BaseCommand):
    help = __doc__

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--docs", required=True, type=Path)
        parser.add_argument("--queries", required=True, type=Path)
        parser.add_argument("--off-topic", type=Path, default=OFF_TOPIC)
        parser.add_argument("--corpora", type=int, default=0, help="Use only the first N corpora (0 = all)")
        parser.add_argument("--facts", action="store_true", help="Extract facts while loading (slower)")

    def handle(self, *args: Any, **opts: Any) -> None:
        docs, queries, off_topic = read_jsonl(opts["docs"]), read_jsonl(opts["queries"]), read_jsonl(opts["off_topic"])
        corpora = sorted({row["corpus"] for row in docs})[: opts["corpora"] or None]
        queries = [q for q in queries if q.get("corpus") in corpora]
        loader = Loader()
        loader.stdout, loader.stderr = self.stdout, self.stderr
        loader.created, loader.users = [], []
        actors: dict[str, Actor] = {}
        try:
            for corpus in corpora:
                # Without facts, only passages can keep a question's evidence: the stricter test.
                with override_settings(BRAIN_EXTRACT_FACTS=bool(opts["facts"])):
                    actors[corpus] = loader._load(corpus, [row for row in docs if row["corpus"] == corpus])
            real = [self._ask(actors[q["corpus"]], q) for q in queries]
            unrelated = [self._ask(actor, q) for actor in actors.values() for q in off_topic]
        finally:
            Organisation.objects.filter(slug__in=loader.created).delete()
            User.objects.filter(pk__in=loader.users).delete()
        self._report(real, unrelated, len(corpora))

    def _ask(self, actor: Actor, query: dict[str, Any]) -> tuple[str, bool, float]:
        """The question's id, whether it got evidence, and its closeness (1.0 when it names an
        entity or a speaker, which keeps its evidence at any threshold)."""
        text = query["query"]
        found = gather_evidence(actor=actor, question=Question(text=text))
        vector = query_vector(actor.org, text)
        hits = search_chunks(actor=actor, query=text, top_k=5, vector=vector).hits
        facts = search_facts(actor=actor, query=text, limit=8, vector=vector)
        named = bool(entities_named(actor=actor, text=text, limit=5)) or any("speaker" in h.ranks for h in hits)
        return query["qid"], not found.empty, 1.0 if named else closeness(hits, facts)

    def _report(self, real: list[tuple[str, bool, float]], unrelated: list[tuple[str, bool, float]], n: int) -> None:
        out = self.stdout
        out.write(f"{len(real)} questions of the set and {len(unrelated)} off-topic ones over {n} corpora")
        for name, rows in (("set", real), ("off-topic", unrelated)):
            values = sorted(c for _, _, c in rows)
            if values:
                q = statistics.quantiles(values, n=20) if len(values) > 1 else values * 19
                median = statistics.median(values)
                out.write(
                    f"closeness, {name}: min {values[0]:.3f} p5 {q[0]:.3f} median {median:.3f} "
                    f"p95 {q[-1]:.3f} max {values[-1]:.3f}"
                )
        lost = [qid for qid, got, _ in real if not got]
        kept = sum(got for _, got, _ in unrelated)
        out.write(
            f"at {ON_TOPIC_SIMILARITY} (in use): set questions with no evidence {len(lost)}/{len(real)}"
            f" {lost[:20]}; off-topic questions given evidence {kept}/{len(unrelated)}"
        )
        for threshold in THRESHOLDS:
            lost_at = sum(c < threshold for _, _, c in real)
            kept_at = sum(c >= threshold for _, _, c in unrelated)
            out.write(f"at {threshold:.2f} : set lost {lost_at}/{len(real)}, off-topic kept {kept_at}/{len(unrelated)}")
