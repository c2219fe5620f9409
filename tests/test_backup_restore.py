"""The restore drill and the archive's refusals, on the real test database with the real pg_dump."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tarfile
import threading
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest
from django.core.management import call_command
from django.db import connection

from brain.core.backups import BackupError, back_up, back_up_on_schedule, restore
from brain.core.services import authenticate_token
from brain.infra import backups
from brain.models import AuditRecord, Membership, Organisation
from brain.tasks import back_up_task
from conftest import make_actor, make_org, make_token, make_user
from launcher.__main__ import caller_paths
from memory.documents.saving import add_document
from memory.graph import reads as graph
from memory.graph.writes import FactDraft, record_facts
from memory.models import Chunk, Document, Fact
from memory.search.passages import search_chunks
from memory.tests.factories import save
from tests.progress import wait_until

pytestmark = pytest.mark.django_db(transaction=True)
ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def data_dir(tmp_path, settings):
    settings.DATA_DIR = tmp_path / "data"
    (settings.DATA_DIR / "logs").mkdir(parents=True)
    (settings.DATA_DIR / "logs" / "ingest.log").write_text("a line Brain wrote\n")
    settings.BRAIN_BACKUP_DIR = ""
    return settings.DATA_DIR


@pytest.fixture(autouse=True)
def schema_put_back() -> Iterator[None]:
    """Should a test fail between wiping the database and restoring it, the tests after it still
    find today's tables."""
    yield
    call_command("migrate", interactive=False, verbosity=0, stdout=io.StringIO())


@pytest.fixture
def archive(tmp_path, data_dir) -> Path:
    make_org(slug="kept")
    return back_up(into=tmp_path / "archives").path


def organisation_with_history() -> tuple[Organisation, str]:
    org = make_org(slug="drill")
    user = make_user(org, role=Membership.ADMIN)
    actor = make_actor(org, user)
    token = make_token(org, user).plaintext
    save(actor, "Facilities handbook", "The boiler room is inspected every first Monday by the facilities team.")
    save(actor, "Expense policy", "Travel expenses are approved by the head of each team before booking.")
    support = save(actor, "Support team", "Priya has been head of support since March 2026.", ingest=False)
    role: dict[str, Any] = {"object": "Support", "relation": "head_of", "single_valued": True}
    record_facts(
        document=support,
        drafts=[FactDraft("Sam is head of support.", subject="Sam", valid_from=date(2025, 1, 1), **role)],
    )
    record_facts(
        document=support,
        drafts=[FactDraft("Priya is head of support.", subject="Priya", valid_from=date(2026, 3, 1), **role)],
    )
    return org, token


def reads(org: Organisation, token: str) -> dict[str, Any]:
    """What the organisation reads like: the drill compares it before the backup and after the restore."""
    org = Organisation.objects.get(pk=org.pk)
    admin = Membership.objects.filter(org=org, role=Membership.ADMIN).first()
    assert admin is not None
    actor = make_actor(org, admin.user)
    found = authenticate_token(token)
    return {
        "search": [hit.title for hit in search_chunks(actor=actor, query="who inspects the boiler room", top_k=1).hits],
        "believed": [s.fact.statement for s in graph.search_facts(actor=actor, query="head of support", limit=1)],
        "history": list(
            Fact.objects.filter(org=org, relation="head_of")
            .order_by("valid_from")
            .values_list("statement", "valid_from", "valid_to", "superseded_by__statement")
        ),
        "token": found.user.username if found else None,
    }


def counts(org: Organisation) -> dict[str, int]:
    return {
        "documents": Document.objects.filter(org=org).count(),
        "passages": Chunk.objects.filter(document__org=org).count(),
        "facts": Fact.objects.filter(org=org).count(),
    }


class Saver(threading.Thread):
    """Saves numbered documents one after another, on its own connection, until told to stop."""

    def __init__(self, org: Organisation) -> None:
        super().__init__(daemon=True)
        self.org, self.saved, self.stopping = org, 0, threading.Event()

    def run(self) -> None:
        try:
            actor = make_actor(self.org, Membership.objects.filter(org=self.org).first().user)  # type: ignore[union-attr]
            while not self.stopping.is_set():
                add_document(
                    actor=actor,
                    title=f"in flight {self.saved:04d}",
                    content=f"Saved while backing up, number {self.saved}.",
                )
                self.saved += 1
        finally:
            connection.close()


def wipe() -> None:
    with connection.cursor() as cursor:
        cursor.execute("DROP SCHEMA public CASCADE")
        cursor.execute("CREATE SCHEMA public")
    connection.close()


def test_the_restore_drill_brings_back_the_organisation_as_it_was_when_the_backup_read_it(tmp_path, data_dir):
    org, token = organisation_with_history()
    expected = reads(org, token)
    before = counts(org)
    saver = Saver(org)
    saver.start()
    wait_until(lambda: saver.saved >= 3, what="saves to be under way")
    made = back_up(into=tmp_path / "archives")
    saver.stopping.set()
    saver.join()
    assert saver.saved > 3
    assert expected["history"][0][3] == "Priya is head of support."  # Sam's fact was replaced by Priya's

    wipe()
    restored = restore(made.path)

    assert restored.organisations == Organisation.objects.count() == 1
    assert reads(org, token) == expected
    after = counts(org)
    in_flight = sorted(Document.objects.filter(org=org, title__startswith="in flight").values_list("title", flat=True))
    # One consistent snapshot: the saves that had committed when pg_dump began, in order, with no gap.
    assert in_flight == [f"in flight {n:04d}" for n in range(len(in_flight))]
    assert 3 <= len(in_flight) <= saver.saved
    assert after == {**before, "documents": before["documents"] + len(in_flight)}
    assert (data_dir / "logs" / "ingest.log").read_text() == "a line Brain wrote\n"
    record = AuditRecord.objects.get(org=org, action="instance.restored")
    assert record.user is None
    assert record.target == made.path.name


def test_a_restore_refuses_a_database_that_holds_another_installations_data(archive):
    other = make_org(slug="someone-else")
    with pytest.raises(
        BackupError, match="not empty: it holds .* the organisations kept, someone-else.*--into-existing"
    ):
        restore(archive)
    assert Organisation.objects.filter(pk=other.pk).exists()
    assert not AuditRecord.objects.filter(action="instance.restored").exists()


def test_brainctl_restore_pointed_at_another_installations_data_folder_changes_nothing(archive, tmp_path):
    make_org(slug="their-data")
    db = connection.settings_dict
    env = dict(
        os.environ,
        DATABASE_URL=f"postgresql://{db['USER']}@{db['HOST'].replace('/', '%2F')}/{db['NAME']}",
        BRAIN_DATA_DIR=str(tmp_path / "their-folder"),
        BRAIN_CALLER_DIR=str(archive.parent),
    )
    env.pop("BRAIN_TESTING", None)
    done = subprocess.run(
        [sys.executable, "-m", "launcher", "restore", archive.name], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert done.returncode != 0
    assert "their-data" in done.stderr, done.stderr
    assert "pass --into-existing" in done.stderr
    assert Organisation.objects.filter(slug="their-data").exists()


def test_with_into_existing_the_archive_replaces_what_the_database_held(archive):
    make_org(slug="replaced")
    restored = restore(archive, replace=True)
    assert sorted(Organisation.objects.values_list("slug", flat=True)) == ["kept"]
    assert restored.organisations == 1


def test_an_archive_cut_short_is_refused_and_says_what_to_do(archive, tmp_path):
    body = archive.read_bytes()
    for length in (len(body) // 2, 700, 0):
        cut = tmp_path / f"cut-{length}.tar"
        cut.write_bytes(body[:length])
        with pytest.raises(BackupError, match="(cut short|is empty).*Copy the archive again"):
            backups.extract(cut, tmp_path / f"out-{length}")


def rewritten(archive: Path, target: Path, change: Any) -> Path:
    """``archive`` copied to ``target`` with ``change(name, data) -> data | None`` applied (None drops it)."""
    with tarfile.open(archive) as source, tarfile.open(target, "w") as out:
        for member in source:
            handle = source.extractfile(member)
            data = change(member.name, handle.read() if handle else b"")
            if data is not None:
                member.size = len(data)
                out.addfile(member, io.BytesIO(data))
    return target


def test_an_archive_changed_after_it_was_written_is_refused(archive, tmp_path):
    def flip(name: str, data: bytes) -> bytes:
        return data[:-10] + bytes([data[-10] ^ 1]) + data[-9:] if name == backups.DUMP else data

    with pytest.raises(BackupError, match="changed after it was written: database.dump does not match"):
        backups.extract(rewritten(archive, tmp_path / "flipped.tar", flip), tmp_path / "out")

    def add(name: str, data: bytes) -> bytes | None:
        return None if name == backups.DUMP else data

    with pytest.raises(BackupError, match="database.dump missing"):
        backups.extract(rewritten(archive, tmp_path / "dropped.tar", add), tmp_path / "out2")


def test_an_archive_naming_a_member_outside_its_folder_is_refused_and_writes_nothing_there(archive, tmp_path):
    """The manifest is not signed: one rewritten to list ``../escaped`` with the right checksum."""
    import hashlib

    payload = b"written where the archive chose"
    escaped = tmp_path / "escaped"
    forged = tmp_path / "forged.tar"
    with tarfile.open(archive) as source, tarfile.open(forged, "w") as out:
        for member in source:
            handle = source.extractfile(member)
            data = handle.read() if handle else b""
            if member.name == backups.MANIFEST:
                manifest = json.loads(data)
                digest = hashlib.sha256(payload).hexdigest()
                manifest["members"]["../escaped"] = {"sha256": digest, "size": len(payload)}
                data = json.dumps(manifest).encode()
            member.size = len(data)
            out.addfile(member, io.BytesIO(data))
        sneaked = tarfile.TarInfo("../escaped")
        sneaked.size = len(payload)
        out.addfile(sneaked, io.BytesIO(payload))
    with pytest.raises(BackupError, match="tampered with: its manifest lists .../escaped"):
        backups.extract(forged, tmp_path / "out")
    assert not escaped.exists()


def test_an_archive_from_a_newer_brain_is_refused_before_anything_changes(archive, tmp_path):
    def newer(name: str, data: bytes) -> bytes:
        if name != backups.MANIFEST:
            return data
        manifest = json.loads(data)
        manifest["brain"]["migrations"].append("memory.9999_from_the_future")
        return json.dumps(manifest).encode()

    future = rewritten(archive, tmp_path / "future.tar", newer)
    with pytest.raises(
        BackupError, match="made by a newer version of Brain.*memory.9999_from_the_future.*Update Brain"
    ):
        restore(future, replace=True)
    assert Organisation.objects.filter(slug="kept").exists()


def test_the_manifest_names_secrets_by_reference_and_checksums_every_member(archive, settings):
    manifest = backups.read_manifest(archive)
    assert settings.SECRET_KEY.encode() not in archive.read_bytes()
    assert manifest["secrets"][0]["name"] == "SECRET_KEY"
    assert manifest["secrets"][0]["kept_in"] in (
        "environment variable SECRET_KEY",
        f"file {settings.DATA_DIR / 'secret_key'}",
    )
    assert set(manifest["members"]) == {backups.DUMP, "files/logs/ingest.log"}
    assert "brain.0001_initial" in manifest["brain"]["migrations"]
    assert manifest["postgres"]["server_version_num"] >= 180000


def test_the_nightly_backup_keeps_the_newest_archives_and_leaves_other_files(tmp_path, data_dir, settings):
    folder = tmp_path / "nightly"
    settings.BRAIN_BACKUP_DIR, settings.BRAIN_BACKUP_KEEP = str(folder), 2
    folder.mkdir()
    (folder / "notes.txt").write_text("not an archive")
    start = datetime(2026, 12, 1, 2, 45, tzinfo=UTC)
    for night in range(3):
        assert back_up_on_schedule(now=start + timedelta(days=night)) is not None
    assert back_up_task() is not None  # the task itself, tonight
    names = sorted(p.name for p in folder.iterdir())
    assert names[0] == "brain-backup-20261203T024500Z.tar"  # the first two nights' archives are gone
    assert names[1].startswith("brain-backup-")
    assert names[2] == "notes.txt"
    assert len(names) == 3


def test_the_nightly_backup_does_nothing_while_another_backup_runs_or_without_a_folder(tmp_path, data_dir, settings):
    assert back_up_task() is None  # no BRAIN_BACKUP_DIR: off
    settings.BRAIN_BACKUP_DIR = str(tmp_path / "nightly")
    db = connection.settings_dict
    with psycopg.connect(dbname=db["NAME"], host=db["HOST"], user=db["USER"], port=db["PORT"] or None) as other:
        other.execute("SELECT pg_advisory_lock(%s)", [backups.BACKUP_LOCK])
        assert back_up_on_schedule() is None
        with pytest.raises(BackupError, match="Another backup of this database is running"):
            back_up(into=tmp_path / "by-hand")
    assert not (tmp_path / "nightly").exists() or not any((tmp_path / "nightly").iterdir())


def test_a_missing_pg_dump_of_the_servers_version_is_named_with_what_to_install(monkeypatch, tmp_path):
    monkeypatch.setattr(backups, "_candidate_folders", lambda: [tmp_path])
    with pytest.raises(BackupError, match="No pg_dump of PostgreSQL 18 or newer.*postgresql-client-18.*BRAIN_PG_BIN"):
        backups.find_tool("pg_dump", at_least=18)


def test_the_operators_pg_bin_folder_is_looked_at_first(settings):
    found = backups.find_tool("pg_dump", at_least=18)
    settings.BRAIN_PG_BIN = str(found.parent)
    assert backups._candidate_folders()[0] == found.parent
    assert backups.find_tool("pg_restore", at_least=18) == found.parent / "pg_restore"


@pytest.mark.parametrize(("folder", "scheduled"), [("", False), ("/var/backups/brain", True)])
def test_beat_backs_up_nightly_only_when_a_backup_folder_is_set(folder, scheduled):
    env = dict(os.environ, BRAIN_BACKUP_DIR=folder)
    shown = subprocess.run(
        [sys.executable, "-c", "from django.conf import settings; print(settings.CELERY_BEAT_SCHEDULE.get('back-up'))"],
        cwd=ROOT,
        env={**env, "DJANGO_SETTINGS_MODULE": "brain.settings"},
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert ("brain.tasks.back_up_task" in shown) is scheduled, shown


def test_a_restore_says_when_this_installations_secret_key_is_not_the_archives(archive, settings):
    settings.SECRET_KEY = "another installation's key, not the archive's"  # noqa: S105
    restored = restore(archive, replace=True)
    assert len(restored.warnings) == 1
    assert restored.warnings[0].startswith("SECRET_KEY here")
    assert "connectors' credentials cannot be read" in restored.warnings[0]


def test_brainctl_reads_the_paths_it_is_given_from_where_it_was_called():
    assert caller_paths(["backups/a.tar", "--into-existing"], "/home/op") == [
        "/home/op/backups/a.tar",
        "--into-existing",
    ]
    assert caller_paths(["--output", "safe/"], "/home/op") == ["--output", "/home/op/safe/"]
    assert caller_paths(["--output=/mnt/safe"], "/home/op") == ["--output=/mnt/safe"]
