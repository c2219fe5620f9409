"""An upgrade keeps the data: the previous release's database, migrated by today's code, reads the same.

The fixture (tests/fixtures/previous_release/) is the database of main at the commit named in its
expected.json, with a small organisation loaded by that commit's own code; build.sh rebuilds it.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.contrib.contenttypes.models import ContentType
from django.core.management import call_command
from django.db import connection

from brain.core.backups import BackupError, applied_migrations, known_migrations, upgrade
from brain.infra import backups
from tests.fixtures.previous_release.snapshot import snapshot

pytestmark = pytest.mark.django_db(transaction=True)
FIXTURE = Path(__file__).resolve().parent / "fixtures" / "previous_release"


@pytest.fixture
def previous_release(tmp_path, settings) -> Iterator[None]:
    """The test database replaced by the previous release's; today's schema put back after the
    test whatever it did, so that the tests after it find the tables they know."""
    settings.DATA_DIR = tmp_path / "data"
    load_previous_release()
    yield
    call_command("migrate", interactive=False, verbosity=0, stdout=io.StringIO())


def load_previous_release() -> None:
    with connection.cursor() as cursor:
        cursor.execute("DROP SCHEMA public CASCADE")
        cursor.execute("CREATE SCHEMA public")
    connection.close()
    backups.restore_dump(
        FIXTURE / "previous_release.dump", database=backups.Database.of(connection.settings_dict), made_by_major=18
    )
    ContentType.objects.clear_cache()


def test_the_previous_releases_database_upgraded_by_todays_code_reads_the_same(previous_release, tmp_path):
    expected = json.loads((FIXTURE / "expected.json").read_text())

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


def test_an_upgrade_whose_backup_fails_migrates_nothing(previous_release, tmp_path, monkeypatch):
    monkeypatch.setattr(backups, "_candidate_folders", lambda: [tmp_path])  # no pg_dump anywhere

    with pytest.raises(BackupError, match="No pg_dump of PostgreSQL 18 or newer.*Nothing was migrated"):
        upgrade(into=tmp_path / "before-upgrade")

    assert "memory.0022_trash" not in applied_migrations()
    assert not (tmp_path / "before-upgrade").exists()
