"""Measure retrieval quality on JSONL data laid out like shared/eval/qmsum-test.

docs.jsonl: one document a line: doc_id, corpus, text, and optionally speaker, title, timestamp
(ISO 8601, a written date, or seconds since 1970: ``memory.search.when.parse_moment``), session,
conversation and kind. queries.jsonl: qid, corpus, query, gold_doc_ids, and optionally category
and split (``--split`` scores one split only, e.g. dev while the test split is kept apart).

Each corpus is loaded into a throwaway organisation of its own (deleted afterwards unless
--keep) through add_document. A line whose kind is a written document (page, policy, mail,
note) is saved as one, in markdown, with its title and date; any other line is a message with its
speaker, time and session, of the conversation it names (the corpus when it names none), in the
order of the file. It is ingested with the production pipeline, and every
query runs through the same selector as search_company_memory. Scores: recall_any@k (any gold document in the top k) and
fraction-recall@k (share of the gold documents in the top k), overall and per category.
"""

from __future__ import annotations

import json
import secrets
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from django.contrib.auth.models import User
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction
from django.test.utils import override_settings
from django.utils import timezone

from brain.core.actors import Actor
from brain.core.services import add_member, create_organisation
from brain.models import Organisation
from memory.documents.ingestion import ingest_documents
from memory.documents.saving import Saved, add_document
from memory.graph.reads import search_facts
from memory.models import Document
from memory.search.passages import search_chunks
from memory.search.when import parse_moment

SHALLOW = 10  # the cut-off scored as a caller asking for that many passages sees it


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    try:
        with path.open() as handle:
            return [json.loads(line) for line in handle if line.strip()]
    except (OSError, json.JSONDecodeError) as exc:
        raise CommandError(f"cannot read {path}: {exc}") from None


class Command(BaseCommand):
    help = __doc__

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--docs", required=True, type=Path)
        parser.add_argument("--queries", required=True, type=Path)
        parser.add_argument("--k", default="5,10,25,50", help="Cut-offs, comma-separated")
        parser.add_argument("--modes", default="auto,vector,keyword", help="Retrieval modes to score")
        parser.add_argument("--out", type=Path, help="Write each query's ranked document ids (JSONL)")
        parser.add_argument("--corpora", type=int, default=0, help="Use only the first N corpora (0 = all)")
        parser.add_argument("--split", default="", help="Score only the queries of this split (e.g. dev)")
        parser.add_argument("--keep", action="store_true", help="Keep the throwaway organisations")
        parser.add_argument(
            "--reuse",
            action="store_true",
            help="Score the organisations an earlier run with --keep loaded for these corpora (kept again)",
        )
        parser.add_argument(
            "--facts",
            action="store_true",
            help="Extract facts while loading and add the mode auto+facts (passages and facts fused)",
        )

    def handle(self, *args: Any, **opts: Any) -> None:
        self.created: list[str] = []
        self.users: list[int] = []
        cutoffs = sorted({int(k) for k in opts["k"].split(",") if k.strip()})
        modes = [m.strip() for m in opts["modes"].split(",") if m.strip()]
        if opts["facts"] and "auto+facts" not in modes:
            modes.append("auto+facts")
        docs, queries = read_jsonl(opts["docs"]), read_jsonl(opts["queries"])
        for i, row in enumerate(docs):
            if not {"doc_id", "corpus", "text"} <= row.keys():
                raise CommandError(f"docs line {i + 1} needs doc_id, corpus and text")
        corpora = sorted({row["corpus"] for row in docs})
        if opts["corpora"]:
            corpora = corpora[: opts["corpora"]]
        queries = [q for q in queries if q.get("corpus") in corpora and q.get("gold_doc_ids")]
        if opts["split"]:
            queries = [q for q in queries if q.get("split") == opts["split"]]
            if not queries:
                raise CommandError(f"no query has the split {opts['split']!r}")
        started = time.perf_counter()
        actors: dict[str, Actor] = {}
        try:
            for corpus in corpora:
                if opts["reuse"]:
                    actors[corpus] = self._kept(corpus)
                    continue
                # Extraction is slow and changes nothing for passage modes: only run it when facts are scored.
                with override_settings(BRAIN_EXTRACT_FACTS=bool(opts["facts"])):
                    actors[corpus] = self._load(corpus, [row for row in docs if row["corpus"] == corpus])
            load_seconds = time.perf_counter() - started
            runs = {mode: self._run(actors, queries, mode, max(cutoffs)) for mode in modes}
        finally:
            if not (opts["keep"] or opts["reuse"]):
                # Also an organisation whose load failed half way (it has no actor yet).
                Organisation.objects.filter(slug__in=self.created).delete()
                Organisation.objects.filter(pk__in=[a.org.pk for a in actors.values()]).delete()
                # Only its own users: another evaluation may be running beside this one.
                User.objects.filter(pk__in=self.users).delete()
        self._report(runs, queries, cutoffs, len(corpora), load_seconds)
        if opts["out"]:
            with opts["out"].open("w") as handle:
                for mode, ranked in runs.items():
                    for qid, ids in ranked.items():
                        handle.write(json.dumps({"qid": qid, "mode": mode, "ranked": ids}) + "\n")

    def _load(self, corpus: str, rows: list[dict[str, Any]]) -> Actor:
        suffix = secrets.token_hex(3)
        org = create_organisation(slug=f"eval-{suffix}", name=f"eval {corpus}", plan="unlimited")
        self.created.append(org.slug)
        user = User.objects.create_user(f"eval-{suffix}")
        self.users.append(user.pk)
        add_member(org=org, user=user, role="admin")
        writer = Actor(org=org, user=user, scopes=frozenset({"read", "write"}), via="command", role="admin")
        # Saved while ingestion is paused (nothing is queued for a worker), then ingested here in batches.
        Organisation.objects.filter(pk=org.pk).update(ingestion_paused_at=timezone.now())
        org.refresh_from_db()
        unread = sum(1 for row in rows if row.get("timestamp") and moment(row["timestamp"]) is None)
        if unread:
            self.stderr.write(f"{corpus}: {unread} timestamps could not be read and are left empty")
        ids = []
        empty = [row for row in rows if not str(row["text"]).strip()]
        if empty:  # a document needs some text; these can be nobody's answer
            self.stderr.write(f"{corpus}: {len(empty)} lines without text are left out")
        with transaction.atomic():
            for row in rows:
                if row in empty:
                    continue
                ids.append(_save(writer, corpus, row).document.pk)
        Organisation.objects.filter(pk=org.pk).update(ingestion_paused_at=None)
        Document.objects.filter(pk__in=ids).update(status=Document.Status.QUEUED)
        for start in range(0, len(ids), 256):
            ingest_documents(document_ids=ids[start : start + 256])
        self.stderr.write(f"loaded {corpus}: {len(ids)} documents")
        return Actor(org=org, user=user, scopes=frozenset({"read"}), via="command", role="admin")

    def _kept(self, corpus: str) -> Actor:
        org = Organisation.objects.filter(name=f"eval {corpus}", slug__startswith="eval-").order_by("-pk").first()
        member = org.memberships.filter(role="admin").select_related("user").first() if org else None
        if org is None or member is None:
            raise CommandError(f"no kept organisation for {corpus}: load it once with --keep")
        return Actor(org=org, user=member.user, scopes=frozenset({"read"}), via="command", role="admin")

    def _run(self, actors: dict[str, Actor], queries: list[dict[str, Any]], mode: str, depth: int) -> dict[str, list]:
        ranked: dict[str, list[str]] = {}
        external = {}
        for actor in actors.values():
            external.update(dict(Document.objects.filter(org=actor.org).values_list("pk", "external_id")))
        for query in queries:
            actor = actors[query["corpus"]]
            # The first ten are what a caller asking for ten gets (a deeper search gathers more
            # candidates, which reorders them a little); deeper cut-offs continue from a deep search.
            documents = []
            for top_k in dict.fromkeys([min(SHALLOW, depth), depth]):
                result = search_chunks(
                    actor=actor, query=query["query"], top_k=top_k, mode=mode.split("+")[0], per_document=True
                )
                documents += [hit.document_id for hit in result.hits if hit.document_id not in documents]
            if mode == "auto+facts":
                facts = search_facts(actor=actor, query=query["query"], limit=depth)
                documents = fuse([documents, [f.fact.document_id for f in facts if f.fact.document_id]])
            ranked[query["qid"]] = list(dict.fromkeys(external[d] for d in documents if d in external))
        return ranked

    def _report(
        self,
        runs: dict[str, dict[str, list]],
        queries: list[dict[str, Any]],
        cutoffs: list[int],
        corpora: int,
        load_seconds: float,
    ) -> None:
        out = self.stdout
        out.write(f"{len(queries)} queries over {corpora} corpora (loaded and ingested in {load_seconds:.0f} s)")
        categories = sorted({q.get("category") or "all" for q in queries})
        out.write("mode     category       n  " + "  ".join(f"any@{k:<3} frac@{k:<3}" for k in cutoffs))
        # A set whose questions name the kind of document that answers them is also scored by that kind.
        kinds = sorted({q["source_kind"] for q in queries if q.get("source_kind")})
        groups = [
            ("overall", "", ""),
            *((c, "category", c) for c in categories),
            *((f"from {k}", "source_kind", k) for k in kinds),
        ]
        for mode, ranked in runs.items():
            for name, field, value in groups:
                chosen = [q for q in queries if not field or (q.get(field) or "all") == value]
                if chosen:
                    cells = ["{:6.1f}  {:6.1f} ".format(*score(ranked, chosen, k)) for k in cutoffs]
                    out.write(f"{mode:<8} {name:<12} {len(chosen):>3}  " + "  ".join(cells))
        if "auto" in runs and queries:
            any10, frac10 = score(runs["auto"], queries, SHALLOW)
            for baseline, name in (("keyword", "BM25 (keyword only)"), ("vector", "dense (vector only)")):
                if baseline in runs:
                    base_any, base_frac = score(runs[baseline], queries, SHALLOW)
                    out.write(
                        f"auto against {name} on this data: any@10 {any10:.1f} vs {base_any:.1f} "
                        f"({any10 - base_any:+.1f}), fraction@10 {frac10:.1f} vs {base_frac:.1f} "
                        f"({frac10 - base_frac:+.1f})"
                    )


WRITTEN = ("page", "policy", "mail", "note")  # kinds saved as documents, not as messages


def _save(writer: Actor, corpus: str, row: dict[str, Any]) -> Saved:
    kind = str(row.get("kind") or "")
    if kind in WRITTEN:
        return add_document(
            actor=writer,
            title=str(row.get("title") or corpus)[:240],
            content=row["text"],
            content_type="text/markdown",
            source_kind=kind,
            external_id=str(row["doc_id"])[:240],
            occurred_at=moment(row.get("timestamp")),
        )
    speaker = str(row.get("speaker") or "")
    return add_document(
        actor=writer,
        title=str(row.get("title") or speaker or corpus)[:240],
        content=row["text"],
        source_kind=kind or "eval",
        external_id=str(row["doc_id"])[:240],
        occurred_at=moment(row.get("timestamp")),
        speaker=speaker,
        conversation=str(row.get("conversation") or corpus),
        session=str(row.get("session") or ""),
    )


def moment(value: Any) -> datetime | None:
    """A line's timestamp (ISO 8601, a written date such as "1:56 pm on 8 May, 2023", or a number
    of seconds since 1970; UTC when no zone is given), or None when there is none or it cannot be
    read."""
    return parse_moment(str(value)) if value else None


def fuse(rankings: list[list[int]], k: int = 60) -> list[int]:
    """Reciprocal-rank fusion of document rankings (a document counts once per ranking)."""
    scores: dict[int, float] = {}
    for ranking in rankings:
        for rank, document in enumerate(dict.fromkeys(ranking), start=1):
            scores[document] = scores.get(document, 0.0) + 1.0 / (k + rank)
    return sorted(scores, key=lambda d: -scores[d])


def score(ranked: dict[str, list], queries: list[dict[str, Any]], k: int) -> tuple[float, float]:
    """recall_any@k and fraction-recall@k, in percent."""
    any_hits = fraction = 0.0
    for query in queries:
        gold, top = set(map(str, query["gold_doc_ids"])), set(ranked[query["qid"]][:k])
        any_hits += bool(gold & top)
        fraction += len(gold & top) / len(gold)
    return 100 * any_hits / len(queries), 100 * fraction / len(queries)
