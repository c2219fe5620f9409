"""Per-organisation search indexes instead of ones over the whole table (memory.index.org_indexes).

Each large organisation's own HNSW and GIN indexes are built first, concurrently, so processes of
the previous release keep writing and every search keeps an index; then the whole-table ones go.
The migration is not atomic for that reason (``CREATE INDEX CONCURRENTLY`` runs outside a
transaction). Its statements are written out here rather than imported, so that later changes to
the module cannot change what this migration did. The extended statistics tell the planner that
a category belongs to one organisation, so it counts an audience's rows right instead of
multiplying the two selectivities (it guessed 386 rows for 19,277).
"""

from django.conf import settings
from django.db import migrations

STATISTICS = {"memory_chunk": "chunk_org_category", "memory_fact": "fact_org_category"}
SHORT = {"memory_chunk": "chunk", "memory_fact": "fact"}
KINDS = {
    "hnsw": "USING hnsw (embedding vector_cosine_ops) WITH (m = 16, ef_construction = 64)",
    "gin": "USING gin (search)",
}


def build_organisation_indexes(apps, schema_editor):
    minimum = getattr(settings, "BRAIN_ORG_INDEX_ROWS", 1000)
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("SET maintenance_work_mem = '1GB'")
        for table, short in SHORT.items():
            cursor.execute(f"SELECT org_id FROM {table} GROUP BY org_id HAVING count(*) >= %s", [minimum])  # noqa: S608
            for (org_id,) in cursor.fetchall():
                for kind, using in KINDS.items():
                    cursor.execute(
                        f'CREATE INDEX CONCURRENTLY IF NOT EXISTS "{short}_{kind}_org_{int(org_id)}" '
                        f"ON {table} {using} WHERE org_id = {int(org_id)}"
                    )
        cursor.execute("RESET maintenance_work_mem")


class Migration(migrations.Migration):
    atomic = False
    dependencies = [("memory", "0010_graph_fixes")]

    operations = [
        migrations.RunPython(build_organisation_indexes, migrations.RunPython.noop),
        migrations.RemoveIndex(model_name="chunk", name="chunk_embedding_hnsw"),
        migrations.RemoveIndex(model_name="fact", name="fact_embedding_hnsw"),
        migrations.RemoveIndex(model_name="chunk", name="chunk_search_gin"),
        migrations.RemoveIndex(model_name="fact", name="fact_search_gin"),
        *(
            migrations.RunSQL(
                f"CREATE STATISTICS IF NOT EXISTS {name} (dependencies) ON org_id, category_id FROM {table}",
                f"DROP STATISTICS IF EXISTS {name}",
            )
            for table, name in STATISTICS.items()
        ),
        # The statistics are empty until the table is analysed; a sample of 30,000 rows each.
        *(migrations.RunSQL(f"ANALYZE {table}", migrations.RunSQL.noop) for table in STATISTICS),
    ]
