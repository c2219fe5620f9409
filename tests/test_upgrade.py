"""An upgrade keeps the data: the previous release's database, migrated by today's code, reads the same.

The fixture (tests/fixtures/previous_release/) is the database of main at the commit named in its
expected.json, with a small organisation loaded by that commit's own code; build.sh rebuilds it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.contrib.contenttypes.models import ContentType
from django.db import connection

from brain.core.backups import known_migrations, upgrade
from brain.infra import backups
from tests.fixtures.previous_release.snapshot import snapshot

pytestmark = pytest.mark.django_db(transaction=True)
FIXTURE = Path(__file__).resolve().parent / "fixtures" / "previous_release"


def load_previous_release() -> None:
    with connection.cursor() as cursor:
        cursor.execute("DROP SCHEMA public CASCADE")
        cursor.execute("CREATE SCHEMA public")
    connection.close()
    backups.restore_dump(
        FIXTURE / "previous_release.dump", database=backups.Database.of(connection.settings_dict), made_by_major=18
    )
    ContentType.objects.clear_cache()


def test_the_previous_releases_database_upgraded_by_todays_code_reads_the_same(tmp_path, settings):
    settings.DATA_DIR = tmp_path / "data"
    expected = json.loads((FIXTURE / "expected.json").read_text())
    load_previous_release()

    done = upgrade(into=tmp_path / "before-upgrade")

    assert done.backup is not None
    assert done.backup.path.exists()
    assert "memory.0022_trash" in done.migrated
    assert "brain.0014_account_settings" in done.migrated
    kept = backups.read_manifest(done.backup.path)["brain"]["migrations"]
    assert "memory.0022_trash" not in kept  # the backup is of the data before the upgrade
    assert set(kept) < known_migrations()
    assert snapshot(token=expected["token"]) == expected["reads"]
    assert upgrade(into=tmp_path / "again").migrated == []  # nothing left to do: no second archive
    assert not (tmp_path / "again").exists()
