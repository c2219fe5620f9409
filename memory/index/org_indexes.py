"""Search indexes of its own for each organisation with enough rows.

Indexes over every organisation's rows served small organisations badly. A vector search inside
one organisation walked the HNSW graph of all of them, dropping the others' rows, and found half
or less of its true neighbours for an organisation holding a fiftieth of the table; a keyword
search took every row of every organisation holding a term from the GIN index, then kept its own.
So there is no search index over the whole table. An organisation with at least
``BRAIN_ORG_INDEX_ROWS`` passages (or facts) gets partial indexes, ``WHERE org_id = <its id>``:
an HNSW index over the vectors and a GIN index over the full text, which its searches use as if
it were alone in the table. A smaller one is read through the organisation and category b-trees:
every visible row compared with the question, which at that size is as fast
(``memory.index.candidates`` chooses, by the audience's size). The extended statistics of
migration 0011 let the planner count an audience's rows right.

``sync_org_indexes`` builds the missing indexes (``CREATE INDEX CONCURRENTLY``: writes go on)
and drops those of organisations that no longer exist, or that a stopped build left invalid. Beat
runs it every ten minutes (``memory.tasks.sync_org_indexes_task``, on the ``nightly`` queue),
and ``manage.py org_indexes`` runs it at once. An index is kept when an organisation shrinks.
Whether an organisation has an index depends on all its rows, hidden ones included; it changes
how fast its searches are and, through the graph's approximation, which near-equal neighbours
come back, never which rows a caller may see.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.conf import settings
from django.db import connections

# The tables searched, and the short name their indexes start with.
TABLES = {"memory_chunk": "chunk", "memory_fact": "fact"}
# Each kind of per-organisation index and how it is built; HNSW with the graph parameters the
# whole-table index had (m, ef_construction).
KINDS = {
    "hnsw": "USING hnsw (embedding vector_cosine_ops) WITH (m = 16, ef_construction = 64)",
    "gin": "USING gin (search)",
}
LOCK_KEY = 0x0B7A1D  # pg_try_advisory_lock: one sync at a time across every process


@dataclass
class SyncReport:
    created: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    skipped: bool = False  # another sync held the lock


def prefix(table: str, kind: str) -> str:
    if kind not in KINDS:
        raise ValueError(f"not a kind of organisation index: {kind!r}")
    return f"{TABLES[_table(table)]}_{kind}_org_"


def index_name(table: str, org_id: int, kind: str = "hnsw") -> str:
    return f"{prefix(table, kind)}{int(org_id)}"


def wanted(table: str, minimum: int) -> set[int]:
    """The organisations holding at least ``minimum`` rows of ``table``."""
    with connections["default"].cursor() as cursor:
        cursor.execute(
            f"SELECT org_id FROM {_table(table)} GROUP BY org_id HAVING count(*) >= %s",  # noqa: S608 (a TABLES key)
            [minimum],
        )
        return {row[0] for row in cursor.fetchall()}


def present(table: str, kind: str = "hnsw") -> dict[int, bool]:
    """The per-organisation indexes of a kind on ``table``: organisation id -> whether it is valid."""
    start = prefix(table, kind)
    with connections["default"].cursor() as cursor:
        cursor.execute(
            "SELECT c.relname, i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
            "WHERE i.indrelid = %s::regclass AND c.relname LIKE %s",
            [table, start.replace("_", r"\_") + "%"],
        )
        return {int(name.removeprefix(start)): valid for name, valid in cursor.fetchall()}


def sync_org_indexes(*, concurrently: bool = True, minimum: int | None = None) -> SyncReport:
    """Build the missing per-organisation indexes and drop the ones nobody needs; see the module."""
    minimum = settings.BRAIN_ORG_INDEX_ROWS if minimum is None else minimum
    report = SyncReport()
    connection = connections["default"]
    connection.ensure_connection()
    how = "CONCURRENTLY " if concurrently else ""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(%s)", [LOCK_KEY])
        if not cursor.fetchone()[0]:
            report.skipped = True
            return report
        try:
            # A session setting, not SET LOCAL: a concurrent build runs outside any transaction.
            cursor.execute("SET maintenance_work_mem = '1GB'")
            cursor.execute("SELECT id FROM brain_organisation")
            organisations = {row[0] for row in cursor.fetchall()}
            for table in TABLES:
                large = wanted(table, minimum)
                for kind, using in KINDS.items():
                    have = present(table, kind)
                    for org_id, valid in sorted(have.items()):
                        if org_id not in organisations or not valid:
                            cursor.execute(f'DROP INDEX {how}IF EXISTS "{index_name(table, org_id, kind)}"')
                            report.dropped.append(index_name(table, org_id, kind))
                    for org_id in sorted(large - {o for o, v in have.items() if v}):
                        if org_id in organisations:
                            name = index_name(table, org_id, kind)
                            cursor.execute(
                                f'CREATE INDEX {how}IF NOT EXISTS "{name}" ON {_table(table)} {using} '
                                f"WHERE org_id = {int(org_id)}"
                            )
                            report.created.append(name)
        finally:
            cursor.execute("RESET maintenance_work_mem")
            cursor.execute("SELECT pg_advisory_unlock(%s)", [LOCK_KEY])
    return report


def _table(table: str) -> str:
    if table not in TABLES:
        raise ValueError(f"not a table with vectors: {table!r}")
    return table
