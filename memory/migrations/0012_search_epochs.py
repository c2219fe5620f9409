"""Counters that tell search its cached statistics and speakers are stale (``SearchEpoch``).

Triggers keep them, so every path that changes rows moves them: the application, the admin,
cascades and raw SQL. Deletions are counted once per statement (a transition table); moves
between categories, scopes and owners once per row, which is rare. A passage brings a new
speaker when no other passage of that speaker is readable by the same people: the same
category, and shared, or personal to the same owner. Shared rows count for everyone (owner 0),
personal ones for their owner only.
"""

from django.db import migrations, models

BUMP = """
CREATE FUNCTION memory_bump_epoch(org bigint, bucket bigint, speakers bigint, withdrawn bigint) RETURNS void
LANGUAGE sql AS $$
    INSERT INTO memory_searchepoch (org_id, owner_id, speakers, withdrawn) VALUES (org, bucket, speakers, withdrawn)
    ON CONFLICT (org_id, owner_id) DO UPDATE
        SET speakers = memory_searchepoch.speakers + EXCLUDED.speakers,
            withdrawn = memory_searchepoch.withdrawn + EXCLUDED.withdrawn
$$;

-- Whose cached state a row can be part of: everyone's (0) when shared, its owner's when
-- personal, nobody's when personal without an owner.
CREATE FUNCTION memory_epoch_bucket(scope text, owner bigint) RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$ SELECT CASE WHEN scope = 'shared' THEN 0 ELSE owner END $$;

CREATE FUNCTION memory_chunk_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM memory_bump_epoch(n.org_id, n.bucket, 1, 0)
    FROM (SELECT DISTINCT s.org_id, memory_epoch_bucket(s.scope, s.owner_id) AS bucket
          FROM (SELECT DISTINCT org_id, speaker, category_id, scope, owner_id FROM added WHERE speaker <> '') s
          WHERE memory_epoch_bucket(s.scope, s.owner_id) IS NOT NULL AND NOT EXISTS (
              SELECT 1 FROM memory_chunk c
              WHERE c.org_id = s.org_id AND c.speaker = s.speaker AND c.category_id = s.category_id
                AND (c.scope = 'shared' OR (s.scope <> 'shared' AND c.owner_id = s.owner_id))
                AND c.id NOT IN (SELECT id FROM added))) n;
    RETURN NULL;
END $$;

CREATE FUNCTION memory_chunk_removed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM memory_bump_epoch(org_id, bucket, bool_or(speaker <> '')::int, 1)
    FROM (SELECT org_id, memory_epoch_bucket(scope, owner_id) AS bucket, speaker FROM removed) r
    WHERE bucket IS NOT NULL GROUP BY org_id, bucket;
    RETURN NULL;
END $$;

CREATE FUNCTION memory_fact_removed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM memory_bump_epoch(org_id, bucket, 0, 1)
    FROM (SELECT org_id, memory_epoch_bucket(scope, owner_id) AS bucket FROM removed) r
    WHERE bucket IS NOT NULL GROUP BY org_id, bucket;
    RETURN NULL;
END $$;

-- A row that moves leaves one audience and joins another: both are told.
CREATE FUNCTION memory_row_moved() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    speakers bigint := CASE WHEN TG_ARGV[0] = 'speakers' THEN 1 ELSE 0 END;
BEGIN
    IF memory_epoch_bucket(OLD.scope, OLD.owner_id) IS NOT NULL THEN
        PERFORM memory_bump_epoch(OLD.org_id, memory_epoch_bucket(OLD.scope, OLD.owner_id), speakers, 1);
    END IF;
    IF memory_epoch_bucket(NEW.scope, NEW.owner_id) IS DISTINCT FROM memory_epoch_bucket(OLD.scope, OLD.owner_id)
       AND memory_epoch_bucket(NEW.scope, NEW.owner_id) IS NOT NULL THEN
        PERFORM memory_bump_epoch(NEW.org_id, memory_epoch_bucket(NEW.scope, NEW.owner_id), speakers, 1);
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER memory_chunk_added AFTER INSERT ON memory_chunk
    REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION memory_chunk_added();
CREATE TRIGGER memory_chunk_removed AFTER DELETE ON memory_chunk
    REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION memory_chunk_removed();
CREATE TRIGGER memory_fact_removed AFTER DELETE ON memory_fact
    REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION memory_fact_removed();
CREATE TRIGGER memory_chunk_moved AFTER UPDATE OF category_id, scope, owner_id, speaker ON memory_chunk
    FOR EACH ROW WHEN (OLD.category_id IS DISTINCT FROM NEW.category_id OR OLD.scope IS DISTINCT FROM NEW.scope
                       OR OLD.owner_id IS DISTINCT FROM NEW.owner_id OR OLD.speaker IS DISTINCT FROM NEW.speaker)
    EXECUTE FUNCTION memory_row_moved('speakers');
CREATE TRIGGER memory_fact_moved AFTER UPDATE OF category_id, scope, owner_id ON memory_fact
    FOR EACH ROW WHEN (OLD.category_id IS DISTINCT FROM NEW.category_id OR OLD.scope IS DISTINCT FROM NEW.scope
                       OR OLD.owner_id IS DISTINCT FROM NEW.owner_id)
    EXECUTE FUNCTION memory_row_moved('facts');
"""

UNBUMP = """
DROP TRIGGER IF EXISTS memory_chunk_added ON memory_chunk;
DROP TRIGGER IF EXISTS memory_chunk_removed ON memory_chunk;
DROP TRIGGER IF EXISTS memory_fact_removed ON memory_fact;
DROP TRIGGER IF EXISTS memory_chunk_moved ON memory_chunk;
DROP TRIGGER IF EXISTS memory_fact_moved ON memory_fact;
DROP FUNCTION IF EXISTS memory_chunk_added(), memory_chunk_removed(), memory_fact_removed(), memory_row_moved();
DROP FUNCTION IF EXISTS memory_bump_epoch(bigint, bigint, bigint, bigint), memory_epoch_bucket(text, bigint);
"""


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0011_per_organisation_vector_indexes"),
    ]

    operations = [
        migrations.CreateModel(
            name="SearchEpoch",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("org_id", models.BigIntegerField()),
                ("owner_id", models.BigIntegerField(help_text="0 for shared rows, else the owner of personal ones.")),
                ("speakers", models.BigIntegerField(default=0)),
                ("withdrawn", models.BigIntegerField(default=0)),
            ],
            options={
                "constraints": [models.UniqueConstraint(fields=("org_id", "owner_id"), name="searchepoch_audience")],
            },
        ),
        migrations.RunSQL(BUMP, UNBUMP),
    ]
