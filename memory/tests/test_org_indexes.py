"""Per-organisation vector indexes (memory.index.org_indexes): built for organisations large
enough, used by their searches, gone with the organisation, rebuilt when a build was left invalid."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.db import connection, connections, transaction
from django.test.utils import CaptureQueriesContext

from conftest import make_actor, make_org
from memory.index.candidates import (
    FROM_SOURCE_SQL,
    SAID_BY_WHOM_SQL,
    SPEAKER_SQL,
    Filtered,
    Narrowing,
    access_and_time,
    vector_candidates,
)
from memory.index.org_indexes import KINDS, LOCK_KEY, TABLES, index_name, present, sync_org_indexes
from memory.index.serving import query_vector
from memory.models import Chunk, Fact
from memory.tests.factories import save
from tests.progress import wait_until

pytestmark = pytest.mark.django_db(transaction=True)
TEXTS = [
    f"The {topic} desk answers questions about {topic} within a day."
    for topic in ("travel", "invoices", "hiring", "security", "parking", "holidays")
]


@pytest.fixture(autouse=True)
def no_org_indexes_left():
    """Flushing tables between tests leaves indexes in place: each test starts and ends without any."""
    yield
    with connection.cursor() as cursor:
        for table in TABLES:
            for kind in KINDS:
                for org_id in present(table, kind):
                    cursor.execute(f'DROP INDEX IF EXISTS "{index_name(table, org_id, kind)}"')


@pytest.fixture
def big_and_small():
    big, small = make_actor(make_org()), make_actor(make_org())
    for i, text in enumerate(TEXTS):
        save(big, f"Desk {i}", text)
    save(small, "Desk", TEXTS[0])
    return big, small


def chunk_indexes(names: list[str]) -> list[str]:
    return [name for name in names if name.startswith("chunk_")]


def statements(queries: CaptureQueriesContext) -> list[str]:
    """What was sent, statement by statement: outside a transaction the vector arm sends its
    settings and its statement as one query."""
    return [part for q in queries.captured_queries for part in q["sql"].split("; ")]


def plan_of_vector_search(actor, **settings: str) -> str:
    """The plan PostgreSQL picks for the vector arm's statement, with the given planner settings."""
    vector = query_vector(actor.org, "who answers travel questions?")
    with CaptureQueriesContext(connection) as queries:
        vector_candidates(vector, access_and_time(actor, None), 5)
    statement = next(sql for sql in statements(queries) if "<=>" in sql)
    with transaction.atomic(), connection.cursor() as cursor:
        for name, value in settings.items():
            cursor.execute(f"SET LOCAL {name} = {value}")
        cursor.execute(f"EXPLAIN {statement}")
        return "\n".join(row[0] for row in cursor.fetchall())


def test_only_organisations_with_enough_rows_get_an_index_and_a_second_run_does_nothing(big_and_small):
    big, small = big_and_small
    assert Chunk.objects.filter(org=big.org).count() == len(TEXTS)
    report = sync_org_indexes(minimum=len(TEXTS))
    assert sorted(chunk_indexes(report.created)) == sorted(
        index_name("memory_chunk", big.org.pk, kind) for kind in ("hnsw", "gin")
    )
    assert present("memory_chunk") == present("memory_chunk", "gin") == {big.org.pk: True}
    assert sync_org_indexes(minimum=len(TEXTS)).created == []


def test_the_organisations_search_can_use_its_own_index_and_finds_only_its_rows(big_and_small):
    big, small = big_and_small
    sync_org_indexes(minimum=len(TEXTS))
    name = index_name("memory_chunk", big.org.pk)
    # Sorting switched off leaves the planner the index scans only: the organisation's own index
    # is one (its predicate matches the statement), and no other organisation has one to offer.
    assert name in plan_of_vector_search(big, enable_sort="off")
    assert "hnsw" not in plan_of_vector_search(small, enable_sort="off")
    # The keyword arm's own index: the full text of the organisation's rows only (the planner
    # prefers the b-tree on a table this small; docs/benchmarks-log.md, "Many organisations in one
    # table", shows it at scale).
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexdef FROM pg_indexes WHERE indexname = %s", [index_name("memory_chunk", big.org.pk, "gin")]
        )
        assert cursor.fetchone()[0].endswith(f"USING gin (search) WHERE (org_id = {big.org.pk})")
    vector = query_vector(big.org, "who answers travel questions?")
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_sort = off")
        rows = vector_candidates(vector, access_and_time(big, None), 50)
    assert {cid for cid, _ in rows} == set(Chunk.objects.filter(org=big.org).values_list("pk", flat=True))
    small_rows = vector_candidates(query_vector(small.org, "travel"), access_and_time(small, None), 50)
    assert {cid for cid, _ in small_rows} == set(Chunk.objects.filter(org=small.org).values_list("pk", flat=True))


def test_an_audience_that_sees_enough_rows_walks_the_index_and_a_smaller_one_is_compared_exactly(
    big_and_small, settings
):
    big, small = big_and_small
    settings.BRAIN_ORG_INDEX_ROWS = len(TEXTS)
    sync_org_indexes()

    def settings_of(actor, narrowing=None) -> list[str]:
        with CaptureQueriesContext(connection) as queries:
            rows = vector_candidates(
                query_vector(actor.org, "travel"), access_and_time(actor, None), 3, narrowing=narrowing
            )
        if narrowing is None:
            assert len(rows) == min(3, Chunk.objects.filter(org=actor.org).count())
        return [sql for sql in statements(queries) if sql.startswith("SET LOCAL enable")]

    assert settings_of(big) == ["SET LOCAL enable_sort = off"]  # and then the index is the plan (above)
    assert settings_of(small) == ["SET LOCAL enable_indexscan = off"]
    # A search narrowed to a speaker's turns is left to the planner, which knows they are few.
    assert settings_of(big, Narrowing(SPEAKER_SQL, {"speakers": ["Priya"]})) == []


def test_the_vector_arm_takes_one_round_trip_and_its_settings_end_with_it(big_and_small, settings):
    big, _ = big_and_small
    settings.BRAIN_ORG_INDEX_ROWS = len(TEXTS)
    sync_org_indexes()
    vector = query_vector(big.org, "travel")
    with CaptureQueriesContext(connection) as queries:
        rows = vector_candidates(vector, access_and_time(big, None), 3)
    assert len(rows) == 3
    (sent,) = [q["sql"] for q in queries.captured_queries if "SET LOCAL" in q["sql"] or "<=>" in q["sql"]]
    assert sent.split("; ")[:3] == [
        "SET LOCAL enable_sort = off", "SET LOCAL hnsw.ef_search = 40", "SET LOCAL hnsw.iterative_scan = relaxed_order"
    ]  # fmt: skip
    assert "<=>" in sent.split("; ")[3]
    with connection.cursor() as cursor:  # the same connection, after: nothing was left set
        cursor.execute("SELECT current_setting('enable_sort'), current_setting('hnsw.iterative_scan')")
        assert cursor.fetchone() == ("on", "off")
    # Inside a transaction of the caller's, the settings go one by one in a savepoint, and end
    # with it: the rest of the caller's transaction plans as before.
    with transaction.atomic(), connection.cursor() as cursor:
        assert vector_candidates(vector, access_and_time(big, None), 3) == rows
        cursor.execute("SELECT current_setting('enable_sort'), current_setting('hnsw.iterative_scan')")
        assert cursor.fetchone() == ("on", "off")


def test_a_deleted_organisations_index_is_dropped(big_and_small):
    big, _ = big_and_small
    sync_org_indexes(minimum=len(TEXTS))
    names = [index_name("memory_chunk", big.org.pk, kind) for kind in ("hnsw", "gin")]
    big.org.delete()  # as an operator does in the admin
    assert sorted(chunk_indexes(sync_org_indexes(minimum=len(TEXTS)).dropped)) == sorted(names)
    assert present("memory_chunk") == present("memory_chunk", "gin") == {}


def test_an_index_a_stopped_build_left_invalid_is_built_again(big_and_small):
    big, _ = big_and_small
    sync_org_indexes(minimum=len(TEXTS))
    name = index_name("memory_chunk", big.org.pk)
    with connection.cursor() as cursor:  # what CREATE INDEX CONCURRENTLY leaves when it is stopped
        cursor.execute("UPDATE pg_index SET indisvalid = false WHERE indexrelid = %s::regclass", [name])
    assert present("memory_chunk") == {big.org.pk: False}
    report = sync_org_indexes(minimum=len(TEXTS))
    assert (report.dropped, chunk_indexes(report.created)) == ([name], [name])  # the GIN index stood
    assert present("memory_chunk") == {big.org.pk: True}


def test_one_sync_at_a_time(big_and_small):
    other = connections.create_connection("default")
    try:
        with other.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_lock(%s)", [LOCK_KEY])
        assert sync_org_indexes(minimum=1).skipped
        assert present("memory_chunk") == {}
    finally:
        other.close()
    # Closing the socket does not end the backend that holds the lock: the server does, when it gets to it.
    wait_until(lock_is_free, what="the closed connection's advisory lock to be released")
    assert not sync_org_indexes(minimum=1).skipped


def lock_is_free() -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(%s)", [LOCK_KEY])
        taken = bool(cursor.fetchone()[0])
        if taken:
            cursor.execute("SELECT pg_advisory_unlock(%s)", [LOCK_KEY])
    return taken


def test_facts_get_their_own_index_too(big_and_small):
    big, _ = big_and_small
    facts = Fact.objects.filter(org=big.org).count()
    assert facts > 0
    report = sync_org_indexes(minimum=facts)
    assert index_name("memory_fact", big.org.pk) in report.created


def test_the_command_builds_and_lists(big_and_small, settings, capsys):
    settings.BRAIN_ORG_INDEX_ROWS = len(TEXTS)
    call_command("org_indexes")
    out = capsys.readouterr().out
    assert f"built {index_name('memory_chunk', big_and_small[0].org.pk)}" in out
    assert "memory_chunk: organisation indexes: 1 hnsw, 1 gin" in out
    call_command("org_indexes", "--list")
    assert "built" not in capsys.readouterr().out


def test_a_filtered_search_walks_the_index_unless_its_filters_leave_few_rows(big_and_small, settings):
    """Filtered by kind or category the graph is walked, the filter applied as it goes; filtered
    to one person's words or a window of days, the planner chooses, as for the arms' narrowings.
    Either way only rows that pass come back."""
    big, _ = big_and_small
    save(big, "Desk by mail", "The travel desk answers mail about travel.", source_kind="email")
    settings.BRAIN_ORG_INDEX_ROWS = len(TEXTS)
    sync_org_indexes()
    where = access_and_time(big, None)
    by_kind = Filtered(where, (FROM_SOURCE_SQL,), {"filter_kind": "email"})
    by_person = Filtered(where, (SAID_BY_WHOM_SQL,), {"filter_speaker": "Priya"})
    mailed = set(Chunk.objects.filter(org=big.org, document__source_kind="email").values_list("pk", flat=True))
    for filtered, enabled, found in ((by_kind, ["SET LOCAL enable_sort = off"], mailed), (by_person, [], set())):
        with CaptureQueriesContext(connection) as queries:
            rows = vector_candidates(query_vector(big.org, "travel"), filtered, 5)
        assert [sql for sql in statements(queries) if sql.startswith("SET LOCAL enable")] == enabled
        assert {cid for cid, _ in rows} == found
