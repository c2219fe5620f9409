"""Synthetic company corpora for benchmarks.

Texts come from a small company-flavoured grammar with a Zipf-shaped vocabulary, so full-text
statistics look like real prose. Embedding 100k passages with the real model takes half an
hour on 2 cores, so only a pool of distinct sentences is embedded; each passage takes the
vector of its pool sentence plus a little noise. That keeps the clustered shape real text
has (random vectors are HNSW's worst case and unlike any real corpus).
"""

from __future__ import annotations

import io
import random
import time

import numpy as np
from django.contrib.auth.models import User
from django.db import connection

from brain.core.actors import Actor
from brain.core.services import add_member, create_organisation, mark_memory_built
from brain.models import Category, Organisation

TEAMS = ["billing", "support", "platform", "sales", "legal", "security", "design", "data", "mobile", "finance"]
PEOPLE = ["Priya", "Sam", "Ana", "Ben", "Chen", "Dana", "Eli", "Farah", "Goran", "Hana", "Ivo", "Jun", "Kofi"]
CUSTOMERS = ["Globex", "Initech", "Umbrella", "Hooli", "Stark", "Wayne", "Acme", "Soylent", "Tyrell", "Wonka"]
VERBS = ["owns", "reviewed", "approved", "postponed", "migrated", "escalated", "renewed", "priced", "audited"]
OBJECTS = ["the contract", "the roadmap", "the incident", "the invoice run", "the SLA", "the pricing page",
           "the onboarding flow", "the data retention policy", "the quarterly plan", "the API gateway"]  # fmt: skip
FILLER = [f"w{i}" for i in range(3000)]  # rare words: the long tail of a vocabulary


def sentence(rng: random.Random) -> str:
    tail = " ".join(rng.choices(FILLER, weights=[1 / (i + 1) for i in range(len(FILLER))], k=rng.randint(3, 9)))
    return (
        f"{rng.choice(PEOPLE)} from {rng.choice(TEAMS)} {rng.choice(VERBS)} {rng.choice(OBJECTS)} "
        f"for {rng.choice(CUSTOMERS)} in Q{rng.randint(1, 4)} {rng.randint(2021, 2026)}; notes {tail}."
    )


def passage(rng: random.Random) -> str:
    return " ".join(sentence(rng) for _ in range(rng.randint(2, 5)))


def bench_org(slug: str) -> tuple[Organisation, Actor]:
    org = Organisation.objects.filter(slug=slug).first() or create_organisation(slug=slug, name=slug, plan="unlimited")
    mark_memory_built(org=org)
    user = User.objects.filter(username=slug).first() or User.objects.create_user(slug, f"{slug}@example.com")
    add_member(org=org, user=user, role="admin")
    return org, Actor(org=org, user=user, scopes=frozenset({"read", "write"}), via="command", role="admin")


def chunk_count(org: Organisation) -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM memory_chunk WHERE org_id = %s", [org.pk])
        return int(cursor.fetchone()[0])


def fill(
    org: Organisation, actor: Actor, chunks: int, *, pool: int = 2000, seed: int = 7, per_document: int = 20
) -> float:
    """Add chunks (one document per ``per_document``) until the organisation holds ``chunks``;
    returns seconds."""
    from memory.index.embedding import get_embedder

    have = chunk_count(org)
    if have >= chunks:
        give_speakers(org)  # organisations filled before passages had speakers
        index_organisations()
        return 0.0
    started = time.perf_counter()
    rng = random.Random(seed + have)
    texts = [passage(rng) for _ in range(pool)]
    vectors = get_embedder().embed(texts)
    model = get_embedder().name
    general = Category.objects.get(org=org, slug="general")
    noise = np.random.default_rng(seed)
    needed = chunks - have
    with connection.cursor() as cursor:
        documents = synthetic_documents(org, general, actor, needed, per_document)
        buffer = io.StringIO()
        for i in range(needed):
            k = rng.randrange(pool)
            vector = vectors[k] + np.asarray(noise.normal(0, 0.02, size=vectors.shape[1]), dtype=np.float32)
            vector /= np.linalg.norm(vector)
            text = texts[k].replace("\t", " ")
            buffer.write(
                f"{org.pk}\t{documents[i // per_document]}\t{i % per_document}\tSynthetic\t\t{text}\t0\t{len(text)}\t"
                f"[{','.join(f'{x:.5f}' for x in vector)}]\t{model}\t{general.pk}\tshared\t{actor.user.pk}"
                "\t2026-01-01\n"
            )
        buffer.seek(0)
        with cursor.copy(
            "COPY memory_chunk (org_id, document_id, ordinal, title, heading, text, char_start, char_end, embedding,"
            " embedding_model, category_id, scope, owner_id, recorded_at) FROM STDIN"
        ) as copy:
            copy.write(buffer.read())
    give_speakers(org)
    index_organisations()
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE memory_chunk")
    return time.perf_counter() - started


def index_organisations() -> None:
    """Each large organisation's search indexes, as beat builds them (memory.index.org_indexes)."""
    from memory.index.org_indexes import sync_org_indexes

    sync_org_indexes(concurrently=False)


CHATS = 50  # conversations of a message corpus (``per_document=1``)


def synthetic_documents(
    org: Organisation, category: Category, actor: Actor, chunks: int, per_document: int = 20
) -> list[int]:
    """Ready shared documents to hold ``chunks`` passages, ``per_document`` each; returns their ids
    in order. Documents of one passage are messages: each of one of ``CHATS`` conversations, with
    a speaker and a minute of its own, saved interleaved as chats arrive."""
    message = per_document == 1
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO memory_document (org_id, title, content, content_type, source_kind, source_url, external_id,"
            " metadata, category_id, scope, owner_id, status, error, attempts, claim, content_hash, version,"
            " recorded_at, chunk_count, conversation, speaker, session, occurred_at) SELECT %(org)s, 'Synthetic ' || g,"
            " '', 'text/plain', 'bench', '', '', '{}', %(category)s, 'shared', %(owner)s, 'ready', '', 1, '',"
            " md5(g::text), 1, now(), %(per)s, CASE WHEN %(message)s THEN 'chat-' || (g %% %(chats)s) ELSE '' END,"
            " CASE WHEN %(message)s THEN (%(people)s::text[])[1 + g %% %(speakers)s] ELSE '' END, '',"
            " CASE WHEN %(message)s THEN '2021-01-01'::timestamptz + g * interval '1 minute' END"
            " FROM generate_series(1, %(count)s) g RETURNING id",
            {
                "org": org.pk,
                "category": category.pk,
                "owner": actor.user.pk,
                "per": per_document,
                "message": message,
                "chats": CHATS,
                "people": PEOPLE,
                "speakers": len(PEOPLE),
                "count": -(-chunks // per_document),
            },
        )
        return [row[0] for row in cursor.fetchall()]


def give_speakers(org: Organisation) -> None:
    """Every passage a speaker of PEOPLE and a day in 2021-2026, so the conversation arms (a
    question naming a person or a month) run as they would on chat exports."""
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE memory_chunk SET speaker = (%s::text[])[1 + id %% %s], "
            "said_at = '2021-01-01'::timestamptz + (id %% 2000) * interval '1 day' "
            "WHERE org_id = %s AND speaker = ''",
            [PEOPLE, len(PEOPLE), org.pk],
        )


def questions(count: int, seed: int = 11) -> list[str]:
    rng = random.Random(seed)
    forms = [
        "who {verb} {obj} for {customer}?",
        "what did {team} decide about {obj}",
        "{person} {customer} {obj}",
        "when was {obj} {verb} for {customer}",
        "what did {person} say about {obj} in {month} {year}?",
    ]
    return [
        rng.choice(forms).format(
            verb=rng.choice(VERBS),
            obj=rng.choice(OBJECTS),
            customer=rng.choice(CUSTOMERS),
            team=rng.choice(TEAMS),
            person=rng.choice(PEOPLE),
            month=rng.choice(["January", "March", "May", "September"]),
            year=rng.randint(2021, 2026),
        )
        for _ in range(count)
    ]


def side_questions(count: int, seed: int = 13) -> list[str]:
    """Questions giving their time as one side of an event ("before the renewal"), for the side arm."""
    rng = random.Random(seed)
    return [
        f"what did {rng.choice(PEOPLE)} say about {rng.choice(OBJECTS)} {rng.choice(['before', 'after', 'since'])} "
        f"{rng.choice(OBJECTS)} for {rng.choice(CUSTOMERS)}?"
        for _ in range(count)
    ]


def fact_count(org: Organisation) -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM memory_fact WHERE org_id = %s", [org.pk])
        return int(cursor.fetchone()[0])


def fill_facts(org: Organisation, actor: Actor, facts: int, *, pool: int = 2000, seed: int = 5) -> float:
    """Add facts (with subject entities from the grammar's names) until the organisation holds ``facts``."""
    from memory.index.embedding import get_embedder

    have = fact_count(org)
    if have >= facts:
        index_organisations()
        return 0.0
    started = time.perf_counter()
    rng = random.Random(seed + have)
    names = [*PEOPLE, *CUSTOMERS, *(f"{t} team" for t in TEAMS)]
    with connection.cursor() as cursor:
        for name in names:
            cursor.execute(
                "INSERT INTO memory_entity (org_id, name, type, aliases, summary, created_at) "
                "SELECT %s, %s, 'other', '{}', '', now() WHERE NOT EXISTS "
                "(SELECT 1 FROM memory_entity WHERE org_id = %s AND name = %s)",
                [org.pk, name, org.pk, name],
            )
        cursor.execute("SELECT id, name FROM memory_entity WHERE org_id = %s", [org.pk])
        entity_ids = {name: pk for pk, name in cursor.fetchall()}
        cursor.execute("SELECT id FROM memory_document WHERE org_id = %s ORDER BY id LIMIT 1000", [org.pk])
        documents = [row[0] for row in cursor.fetchall()]
    statements = [sentence(rng).split(";")[0] + "." for _ in range(pool)]
    vectors = get_embedder().embed(statements)
    model = get_embedder().name
    general = Category.objects.get(org=org, slug="general")
    noise = np.random.default_rng(seed)
    buffer = io.StringIO()
    for _ in range(facts - have):
        k = rng.randrange(pool)
        vector = vectors[k] + np.asarray(noise.normal(0, 0.02, size=vectors.shape[1]), dtype=np.float32)
        vector /= np.linalg.norm(vector)
        subject = entity_ids.get(statements[k].split(" from ")[0], "\\N")
        buffer.write(
            f"{org.pk}\t{statements[k]}\tfact\t{subject}\t\t\t\tf\t2026-01-01\textracted\t{rng.choice(documents)}"
            f"\t\t\\N\t{general.pk}\tshared\t{actor.user.pk}\t[{','.join(f'{x:.5f}' for x in vector)}]\t{model}\n"
        )
    buffer.seek(0)
    with (
        connection.cursor() as cursor,
        cursor.copy(
            "COPY memory_fact (org_id, statement, kind, subject_id, relation, value_key, description, single_valued,"
            " recorded_at, source, document_id, title, valid_from, category_id, scope, owner_id, embedding,"
            " embedding_model) FROM STDIN"
        ) as copy,
    ):
        copy.write(buffer.read())
    with connection.cursor() as cursor:
        # Each fact's entity is named in its document, as ingestion records it.
        cursor.execute(
            "INSERT INTO memory_mention (entity_id, document_id, surface, type, summary) SELECT DISTINCT "
            "f.subject_id, f.document_id, e.name, 'other', '' FROM memory_fact f JOIN memory_entity e "
            "ON e.id = f.subject_id WHERE f.org_id = %s ON CONFLICT DO NOTHING",
            [org.pk],
        )
        cursor.execute("ANALYZE memory_fact")
        cursor.execute("ANALYZE memory_mention")
    index_organisations()
    return time.perf_counter() - started
