"""The trash (``memory.documents.trash``): a document, its passages and its facts carry when they
went in, and the search epochs count a row going in or coming back like a row moving away from
its readers (``0012_search_epochs``), so no cached count or speaker list keeps a trashed row.

A passage or fact written for a document takes the document's ``trashed_at`` in the database, read
under a key-share lock: a write racing a move to the trash (or back) waits for it and then takes
its outcome, and one that went first is waited for by the move, which then sees its rows. So no
passage ingested, or fact learnt, while its document is in the trash is ever read."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


TRIGGERS = """
CREATE FUNCTION memory_take_document_trash() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.document_id IS NOT NULL THEN
        NEW.trashed_at := (SELECT trashed_at FROM memory_document WHERE id = NEW.document_id FOR KEY SHARE);
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER memory_chunk_takes_trash BEFORE INSERT ON memory_chunk
    FOR EACH ROW EXECUTE FUNCTION memory_take_document_trash();
CREATE TRIGGER memory_fact_takes_trash BEFORE INSERT ON memory_fact
    FOR EACH ROW EXECUTE FUNCTION memory_take_document_trash();
CREATE TRIGGER memory_chunk_trashed AFTER UPDATE OF trashed_at ON memory_chunk
    FOR EACH ROW WHEN (OLD.trashed_at IS DISTINCT FROM NEW.trashed_at)
    EXECUTE FUNCTION memory_row_moved('speakers');
CREATE TRIGGER memory_fact_trashed AFTER UPDATE OF trashed_at ON memory_fact
    FOR EACH ROW WHEN (OLD.trashed_at IS DISTINCT FROM NEW.trashed_at)
    EXECUTE FUNCTION memory_row_moved('facts');
"""

NO_TRIGGERS = """
DROP TRIGGER IF EXISTS memory_chunk_takes_trash ON memory_chunk;
DROP TRIGGER IF EXISTS memory_fact_takes_trash ON memory_fact;
DROP FUNCTION IF EXISTS memory_take_document_trash();
CREATE FUNCTION memory_take_document_trash() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.document_id IS NOT NULL THEN
        NEW.trashed_at := (SELECT trashed_at FROM memory_document WHERE id = NEW.document_id FOR KEY SHARE);
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER memory_chunk_takes_trash BEFORE INSERT ON memory_chunk
    FOR EACH ROW EXECUTE FUNCTION memory_take_document_trash();
CREATE TRIGGER memory_fact_takes_trash BEFORE INSERT ON memory_fact
    FOR EACH ROW EXECUTE FUNCTION memory_take_document_trash();
DROP TRIGGER IF EXISTS memory_chunk_trashed ON memory_chunk;
DROP TRIGGER IF EXISTS memory_fact_trashed ON memory_fact;
"""


class Migration(migrations.Migration):

    dependencies = [
        ('memory', '0021_record_repository'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name='chunk',
            name='trashed_at',
            field=models.DateTimeField(blank=True, help_text="Its document's, while in the trash.", null=True),
        ),
        migrations.AddField(
            model_name='document',
            name='trashed_at',
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='document',
            name='trashed_by',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL),
        ),
        migrations.AddField(
            model_name='fact',
            name='trashed_at',
            field=models.DateTimeField(blank=True, help_text="Its document's, while in the trash.", null=True),
        ),
        migrations.AddIndex(
            model_name='document',
            index=models.Index(condition=models.Q(('trashed_at__isnull', False)), fields=['org', 'trashed_at'], name='document_trashed'),
        ),
        migrations.RunSQL(TRIGGERS, NO_TRIGGERS),
    ]
