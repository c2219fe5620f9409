"""A record's repository has one name, ``repository`` (memory.documents.records): commits read from
local git history wrote ``repo``, and synced commits, releases and deployments wrote both."""

from django.db import migrations

FORWARD = """
UPDATE memory_document
SET metadata = (metadata - 'repo') || jsonb_build_object('repository', COALESCE(metadata -> 'repository', metadata -> 'repo'))
WHERE source_kind IN ('git', 'connector') AND jsonb_typeof(metadata) = 'object' AND metadata ? 'repo'
"""

# Back to the keys the code before this migration reads.
BACKWARD = """
UPDATE memory_document
SET metadata = metadata || jsonb_build_object('repo', metadata -> 'repository')
WHERE jsonb_typeof(metadata) = 'object' AND metadata ? 'repository' AND (
    source_kind = 'git'
    OR (source_kind = 'connector' AND metadata ->> 'kind' IN ('commit', 'release', 'deployment'))
)
"""


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0020_document_block"),
    ]

    operations = [migrations.RunSQL(FORWARD, BACKWARD)]
