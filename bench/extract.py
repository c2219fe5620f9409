"""Extraction throughput without an LLM, and the entity duplication rate on name variants.

    .venv/bin/python -m bench.extract --documents 200 --words 300

Throughput: 300-word company documents through ``memory.extraction.sentences.extract`` in one process.
Duplication: documents that name a fixed cast of people and companies under variants ("BigCo",
"BigCo Ltd", "Bigco Inc.", "Priya Shah", "Priya", "Ms Shah"...) are ingested into a throwaway
organisation with the real pipeline; the rate is the share of extra entities created for the
cast: (entities matching a cast member - cast size) / cast size.
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor

from bench.mcp_calls import ROOT, setup_environment

CAST = {
    "Priya Shah": ["Priya Shah", "Priya", "Ms Shah"],
    "Sam Carter": ["Sam Carter", "Sam", "Mr Carter"],
    "Ana Lopez": ["Ana Lopez", "Ana López", "Ana"],
    "BigCo": ["BigCo", "BigCo Ltd", "Bigco Inc.", "BigCo Limited"],
    "Globex": ["Globex", "Globex Corporation", "Globex Corp"],
    "Initech": ["Initech", "Initech LLC", "INITECH"],
    "Umbrella Health": ["Umbrella Health", "Umbrella Health GmbH"],
    "Zorblax": ["Zorblax", "Zorblax platform"],
}
TEMPLATES = [
    "{p} met {c} on {d} to discuss the renewal.",
    "{c} signed a contract worth ${n},000 with {p} as the account owner.",
    "{p} said {c} wants the pilot extended until {d}.",
    "The support team under {p} closed {n} tickets for {c} last month.",
    "{c} asked {p} for a {n}% discount before {d}.",
    "{p} will present the {c} roadmap next Friday.",
]
DATES = ["3 March 2026", "April 14, 2026", "the end of Q3", "next Tuesday", "2026-05-20", "June 2026"]


def document(rng: random.Random, words: int) -> str:
    sentences: list[str] = []
    while sum(len(s.split()) for s in sentences) < words:
        person = rng.choice(rng.choice([CAST[k] for k in CAST if " " in k and k[0] in "PSA"]))
        company = rng.choice(
            rng.choice([CAST[k] for k in ("BigCo", "Globex", "Initech", "Umbrella Health", "Zorblax")])
        )
        sentences.append(rng.choice(TEMPLATES).format(p=person, c=company, d=rng.choice(DATES), n=rng.randint(2, 90)))
    return " ".join(sentences)


def _warm() -> None:
    import django

    django.setup()


def _extract_count(text: str) -> int:
    from datetime import date

    from memory.extraction import extract

    return len(extract(text, document_date=date(2026, 3, 9)).facts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--documents", type=int, default=200)
    parser.add_argument("--words", type=int, default=300)
    args = parser.parse_args()
    env = setup_environment()
    subprocess.run([sys.executable, "manage.py", "migrate", "-v", "0"], cwd=ROOT, env=env, check=True)
    import django

    django.setup()
    from datetime import date

    from bench.corpus import bench_org
    from brain.models import Organisation
    from memory.documents.ingestion import ingest_documents
    from memory.documents.saving import add_document
    from memory.extraction import extract
    from memory.models import Entity

    rng = random.Random(17)
    texts = [document(rng, args.words) for _ in range(args.documents)]
    extract(texts[0], document_date=date(2026, 3, 9))  # load the model
    started = time.perf_counter()
    facts = sum(len(extract(t, document_date=date(2026, 3, 9)).facts) for t in texts)
    seconds = time.perf_counter() - started
    print(
        f"extraction without an LLM: {len(texts) / seconds:.1f} documents/s of {args.words} words, "
        f"{facts} facts, one process"
    )
    with ProcessPoolExecutor(max_workers=2, initializer=_warm) as pool:
        list(pool.map(_extract_count, texts[:4]))  # both processes load the model first
        started = time.perf_counter()
        facts = sum(pool.map(_extract_count, texts, chunksize=10))
        seconds = time.perf_counter() - started
    print(f"extraction without an LLM: {len(texts) / seconds:.1f} documents/s on 2 processes (the 2 cores)")

    org, actor = bench_org(f"bench-entities-{int(time.time())}")
    try:
        ids = [add_document(actor=actor, title=f"Note {i}", content=t).document.pk for i, t in enumerate(texts)]
        started = time.perf_counter()
        for start in range(0, len(ids), 32):
            ingest_documents(document_ids=ids[start : start + 32])
        pipeline = time.perf_counter() - started
        names = list(Entity.objects.filter(org=org).values_list("name", "aliases"))
        extra = 0
        for canonical, variants in CAST.items():
            hits = [
                n for n, aliases in names if any(v.lower() in {n.lower(), *map(str.lower, aliases)} for v in variants)
            ]
            extra += max(0, len(hits) - 1)
            print(f"  {canonical}: {len(hits)} entit{'y' if len(hits) == 1 else 'ies'} {sorted(h for h in hits)}")
        print(f"full ingestion with extraction: {len(ids) / pipeline:.1f} documents/s")
        print(
            f"entity duplication rate: {100 * extra / len(CAST):.1f}% ({extra} extra for {len(CAST)} cast members,"
            f" {len(names)} entities in all)"
        )
    finally:
        Organisation.objects.filter(pk=org.pk).delete()


if __name__ == "__main__":
    main()
