"""How long export_org, import_org and delete_org take for an organisation of a given size.

    .venv/bin/python -m bench.org_export --documents 2000 --passages 5 --facts 3

Makes the organisation ``bench-export`` on the embedded services (or those of ``DATABASE_URL``)
with synthetic rows written directly (documents, their passages and facts, each passage and fact
with a random 384-number vector: no model runs), then exports it, imports the archive as
``bench-export-copy`` and deletes both, printing the rows, the archive's size and each step's time.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.mcp_calls import ROOT, setup_environment

SLUG, COPY = "bench-export", "bench-export-copy"


def make_organisation(documents: int, passages: int, facts: int) -> Any:
    from django.contrib.auth.models import User
    from django.utils import timezone

    from brain.core.services import add_member, create_organisation
    from brain.models import Category, Organisation
    from brain.portability.leaving import delete_organisation
    from memory.models import Chunk, Document, Fact

    for slug in (SLUG, COPY):
        if (old := Organisation.objects.filter(slug=slug).first()) is not None:
            delete_organisation(org=old)
    org = create_organisation(slug=SLUG, name="Bench export", plan="unlimited")
    user = User.objects.filter(username=SLUG).first() or User.objects.create_user(SLUG, f"{SLUG}@example.com")
    add_member(org=org, user=user)
    general = Category.objects.get(org=org, slug=Category.DEFAULT_SLUG)
    now, rng = timezone.now(), random.Random(7)

    def vector() -> list[float]:
        return [rng.uniform(-0.1, 0.1) for _ in range(384)]

    made = Document.objects.bulk_create(
        Document(
            org=org,
            title=f"Document {n}",
            content=f"Document {n} says something about topic {n % 97}. " * 20,
            content_hash=hashlib.sha256(str(n).encode()).hexdigest(),
            category=general,
            owner=user,
            status=Document.Status.READY,
        )
        for n in range(documents)
    )
    for start in range(0, len(made), 500):
        part = made[start : start + 500]
        Chunk.objects.bulk_create(
            Chunk(
                org=org,
                document=d,
                ordinal=i,
                title=d.title,
                text=f"Passage {i} of {d.title}: topic {d.pk % 97}.",
                char_start=0,
                char_end=40,
                embedding=vector(),
                embedding_model="minilm",
                category=general,
                recorded_at=now,
            )
            for d in part
            for i in range(passages)
        )
        Fact.objects.bulk_create(
            Fact(
                org=org,
                statement=f"{d.title} states fact {i}.",
                document=d,
                category=general,
                embedding=vector(),
                embedding_model="minilm",
            )
            for d in part
            for i in range(facts)
        )
    return org


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--documents", type=int, default=2000)
    parser.add_argument("--passages", type=int, default=5, help="passages per document")
    parser.add_argument("--facts", type=int, default=3, help="facts per document")
    args = parser.parse_args()
    env = setup_environment()
    subprocess.run([sys.executable, "manage.py", "migrate", "-v", "0"], cwd=ROOT, env=env, check=True)
    import django

    django.setup()
    from brain.portability.exporting import export_organisation
    from brain.portability.importing import import_organisation
    from brain.portability.leaving import delete_organisation

    started = time.perf_counter()
    org = make_organisation(args.documents, args.passages, args.facts)
    print(f"cores={os.cpu_count()} made the organisation in {time.perf_counter() - started:.1f} s")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.tar.gz"
        started = time.perf_counter()
        manifest = export_organisation(org=org, target=path)
        exported = time.perf_counter() - started
        rows = sum(manifest["counts"].values())
        size = path.stat().st_size / 2**20
        print(f"export   {rows:>8} rows  {exported:6.1f} s  {rows / exported:8.0f} rows/s  archive {size:.1f} MB")
        started = time.perf_counter()
        copy = import_organisation(path=path, slug=COPY).org
        imported = time.perf_counter() - started
        print(f"import   {rows:>8} rows  {imported:6.1f} s  {rows / imported:8.0f} rows/s")
    for which in (copy, org):
        started = time.perf_counter()
        deleted = delete_organisation(org=which)
        took = time.perf_counter() - started
        print(f"delete   {deleted:>8} rows  {took:6.1f} s  {deleted / took:8.0f} rows/s  ({which.slug})")


if __name__ == "__main__":
    main()
