"""How fast documents are read for facts without an LLM: the extraction alone, and the whole ingestion.

    .venv/bin/python -m bench.extraction_speed [--docs eval/extraction/docs.jsonl] [--mix 200]

Two sets of documents: the labelled evaluation documents (mail, meeting notes, chat,
transcripts, wiki pages) and a generic mix (``--mix`` documents: 300-word company notes from
``bench.extract`` and one-line chat messages, half each). For each it prints documents/s of:

- the deterministic extraction alone (``memory.extraction.sentences.extract``: spaCy, the
  date and value readers, the entity clusters), in one process and in two (the two cores);
- the extraction step of ingestion (``extract_document``: the above plus entity linking, the
  facts' vectors, the writes and supersession), with where its time goes;
- the whole ingestion (saving, passages, their vectors, extraction), one document at a time;
- ``manage.py reextract`` over the documents just ingested, twice (the second finds everything
  derived already and only reads).

The ingestion runs in a throwaway organisation, deleted afterwards.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import ExitStack, contextmanager
from datetime import date
from pathlib import Path
from typing import Any
from unittest import mock

from bench.extract import document as company_note
from bench.mcp_calls import ROOT, setup_environment

CHAT = [
    "I'll send the revised quote to Northwind tomorrow.",
    "Deploys happen every Friday after 14:00.",
    "Can someone check the Lisbon invoice before Monday?",
    "Priya moved the kickoff with Globex to 12 March.",
    "The support rota changes every Monday at 10:00.",
    "Thanks, looks good to me.",
]


def eval_texts(path: Path) -> list[str]:
    return [json.loads(line)["text"] for line in path.read_text().splitlines() if line.strip()]


def mix_texts(n: int) -> list[str]:
    rng = random.Random(31)
    return [company_note(rng, 300) if i % 2 == 0 else rng.choice(CHAT) for i in range(n)]


def _warm() -> None:
    import django

    django.setup()


def _extract(text: str) -> int:
    from memory.extraction import extract

    return len(extract(text, document_date=date(2026, 3, 9)).facts)


def pipeline_speed(name: str, texts: list[str]) -> None:
    _extract("Warm up on 3 March 2026 with BigCo.")
    started, cpu = time.perf_counter(), time.process_time()
    for text in texts:
        _extract(text)
    one = len(texts) / (time.perf_counter() - started)
    # Per second of this process's own CPU time: what a core gives when other work shares the machine.
    per_cpu = len(texts) / (time.process_time() - cpu)
    with ProcessPoolExecutor(max_workers=2, initializer=_warm) as pool:
        list(pool.map(_extract, texts[:4]))  # both processes load the model first
        started = time.perf_counter()
        list(pool.map(_extract, texts, chunksize=5))
        two = len(texts) / (time.perf_counter() - started)
    print(
        f"{name}: extraction alone {one:.1f} documents/s in one process ({per_cpu:.1f} per CPU second), "
        f"{two:.1f} on two"
    )


@contextmanager
def timed(stages: dict[str, float]) -> Iterator[None]:
    """Time the steps of ``extract_document`` by wrapping what it calls."""
    from memory.graph import document_facts
    from memory.graph import learning as extracting

    def wrap(label: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def run(*args: Any, **kw: Any) -> Any:
            started = time.perf_counter()
            try:
                return fn(*args, **kw)
            finally:
                stages[label] += time.perf_counter() - started

        return run

    real_extractor = document_facts._extractor

    def extractor() -> Callable[..., Any]:
        return wrap("  parse and read", real_extractor())

    steps = {"_known_entities": "  known entities", "embed_drafts": "  vectors of facts",
             "get_or_create_entity": "  entity linking", "record_facts": "  facts written"}  # fmt: skip
    with ExitStack() as stack:
        step = wrap("extraction step", document_facts.extract_document)
        stack.enter_context(mock.patch.object(extracting, "extract_document", step))
        stack.enter_context(mock.patch.object(document_facts, "_extractor", extractor))
        for attr, label in steps.items():
            stack.enter_context(mock.patch.object(document_facts, attr, wrap(label, getattr(document_facts, attr))))
        yield


def ingestion_speed(name: str, texts: list[str]) -> None:
    from bench.corpus import bench_org
    from brain.models import Organisation
    from memory.documents.ingestion import ingest_documents
    from memory.documents.saving import add_document

    org, actor = bench_org(f"bench-extraction-{int(time.time() * 1000)}")
    stages: dict[str, float] = defaultdict(float)
    try:
        started = time.perf_counter()
        with timed(stages):
            for i, text in enumerate(texts):
                saved = add_document(actor=actor, title=f"{name} {i}", content=text)
                if saved.created:
                    ingest_documents(document_ids=[saved.document.pk])
        whole = time.perf_counter() - started
        step = stages.pop("extraction step")
        print(
            f"{name}: extraction step {len(texts) / step:.1f} documents/s; "
            f"whole ingestion {len(texts) / whole:.1f} documents/s"
        )
        for label, seconds in stages.items():
            print(f"  {label.strip():20} {seconds:6.2f} s ({100 * seconds / step:.0f}% of the step)")
        rederive_speed(name, org)
    finally:
        Organisation.objects.filter(pk=org.pk).delete()


def rederive_speed(name: str, org: Any) -> None:
    """``manage.py reextract`` over the same documents, with the registers on: twice."""
    from brain.models import Features
    from registers.nightly import run_nightly
    from registers.repair import documents_to_rederive, rederive_document

    Features.objects.filter(org=org).update(commitments=True, contradictions=True)
    run_nightly(org)
    for run in ("first", "second"):
        started, changed = time.perf_counter(), 0
        ids = list(documents_to_rederive(org))
        for document_id in ids:
            changed += rederive_document(org, document_id).changed
        seconds = time.perf_counter() - started
        print(f"{name}: reextract, {run} run: {len(ids) / seconds:.1f} documents/s, {changed} changed")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", type=Path, default=ROOT / "eval" / "extraction" / "docs.jsonl")
    parser.add_argument("--mix", type=int, default=200)
    parser.add_argument("--no-ingest", action="store_true", help="Only the extraction alone")
    args = parser.parse_args()
    env = setup_environment()
    subprocess.run([sys.executable, "manage.py", "migrate", "-v", "0"], cwd=ROOT, env=env, check=True)
    _warm()
    sets = {"evaluation documents": eval_texts(args.docs), "generic mix": mix_texts(args.mix)}
    for name, texts in sets.items():
        pipeline_speed(f"{name} ({len(texts)})", texts)
    if not args.no_ingest:
        for name, texts in sets.items():
            ingestion_speed(name, texts)


if __name__ == "__main__":
    main()
