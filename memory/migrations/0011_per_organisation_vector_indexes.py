"""Per-organisation search indexes instead of ones over the whole table (memory.retrieval.org_indexes).

The whole-table HNSW and GIN indexes go; ``manage.py org_indexes`` (or beat, within ten minutes)
builds each large organisation's own. Until then its searches read its rows through the
organisation b-tree and compare every one. The extended statistics tell the
planner that a category belongs to one organisation, so it counts an audience's rows right
instead of multiplying the two selectivities (it guessed 386 rows for 19,277).
"""

from django.db import migrations

STATISTICS = {"memory_chunk": "chunk_org_category", "memory_fact": "fact_org_category"}


class Migration(migrations.Migration):
    dependencies = [("memory", "0010_graph_fixes")]

    operations = [
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
