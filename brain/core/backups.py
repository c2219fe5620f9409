"""Backing up, restoring and upgrading an installation (the archive itself: ``brain.infra.backups``).

``back_up`` writes one archive while Brain keeps serving (``pg_dump`` reads one snapshot); it
holds a PostgreSQL advisory lock for as long as it runs, so the nightly backup and one an
operator starts never run at once. ``restore`` refuses an archive this code is too old for, one
cut short or changed, and a database that already holds data unless told to replace it; it then
loads the dump, migrates it to this code and writes ``instance.restored`` in every organisation's
audit trail. ``upgrade`` backs up, then migrates.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from dataclasses import dataclass
from datetime import datetime
from io import StringIO
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.contenttypes.models import ContentType
from django.core.management import call_command
from django.db import connection, transaction
from django.db.migrations.executor import MigrationExecutor
from django.db.migrations.loader import MigrationLoader
from django.utils import timezone

from brain.core.audit import record_audit
from brain.infra import backups
from brain.infra.backups import BackupError, Database, Secret
from brain.models import Organisation

__all__ = ["BackupError", "BackupMade", "back_up", "back_up_on_schedule", "restore", "upgrade"]


@dataclass(frozen=True)
class BackupMade:
    path: Path
    size: int
    manifest: dict[str, Any]


def backup_folder() -> Path:
    """BRAIN_BACKUP_DIR, else ``backups`` in the data folder."""
    return Path(settings.BRAIN_BACKUP_DIR or Path(settings.DATA_DIR) / "backups")


def applied_migrations() -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT app, name FROM django_migrations")
        return [f"{app}.{name}" for app, name in cursor.fetchall()]


def known_migrations() -> set[str]:
    loader = MigrationLoader(None, ignore_no_migrations=True)
    return {f"{app}.{name}" for app, name in loader.disk_migrations}


def secrets_in_use() -> list[Secret]:
    """The secrets the data cannot be read without, and where this installation keeps them: API
    tokens are stored hashed and need none, but sessions, signed links and connector credentials
    (sealed with BRAIN_CONNECTOR_KEYS, or a key derived from SECRET_KEY) do."""
    if os.environ.get("SECRET_KEY"):
        kept_in = "environment variable SECRET_KEY"
    else:
        kept_in = f"file {Path(settings.DATA_DIR) / 'secret_key'}"
    found = [Secret("SECRET_KEY", kept_in, settings.SECRET_KEY)]
    if settings.BRAIN_CONNECTOR_KEYS:
        keys = ",".join(settings.BRAIN_CONNECTOR_KEYS)
        found.append(Secret("BRAIN_CONNECTOR_KEYS", "environment variable BRAIN_CONNECTOR_KEYS", keys))
    return found


def git_commit() -> str | None:
    try:
        done = subprocess.run(
            ["git", "rev-parse", "HEAD"],  # noqa: S607 (git on PATH, a fixed argument list; absent is fine)
            cwd=settings.BASE_DIR,
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def _server_version_num() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_setting('server_version_num')::int")
        return int(cursor.fetchone()[0])


def _try_lock() -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(%s)", [backups.BACKUP_LOCK])
        return bool(cursor.fetchone()[0])


def _unlock() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_unlock(%s)", [backups.BACKUP_LOCK])


def back_up(*, into: Path | None = None, now: datetime | None = None) -> BackupMade:
    """Write one archive into the folder ``into`` (or to ``into`` when it names a .tar file)."""
    now = now or timezone.now()
    folder = into if into is not None else backup_folder()
    path = folder if folder.suffix == ".tar" else folder / backups.archive_name(now)
    if not _try_lock():
        raise BackupError("Another backup of this database is running; wait for it to finish and try again.")
    try:
        manifest = backups.write_archive(
            path,
            database=Database.of(connection.settings_dict),
            server_version_num=_server_version_num(),
            migrations=applied_migrations(),
            data_dir=Path(settings.DATA_DIR),
            secrets=secrets_in_use(),
            git_commit=git_commit(),
            now=now,
        )
    finally:
        _unlock()
    return BackupMade(path=path, size=path.stat().st_size, manifest=manifest)


def back_up_on_schedule(*, now: datetime | None = None) -> BackupMade | None:
    """The nightly backup into BRAIN_BACKUP_DIR, keeping the newest BRAIN_BACKUP_KEEP archives; None
    when no folder is set or another backup is running (the next night's run makes the next one)."""
    if not settings.BRAIN_BACKUP_DIR:
        return None
    folder = Path(settings.BRAIN_BACKUP_DIR)
    try:
        made = back_up(into=folder, now=now)
    except BackupError as error:
        if "Another backup" in str(error):
            return None
        raise
    backups.prune(folder, keep=settings.BRAIN_BACKUP_KEEP)
    return made


# --- Restore -----------------------------------------------------------------------------------


def _tables() -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT schemaname || '.' || tablename FROM pg_tables "
            "WHERE schemaname NOT IN ('pg_catalog', 'information_schema') ORDER BY 1"
        )
        return [row[0] for row in cursor.fetchall()]


def _organisation_names() -> list[str]:
    try:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("SELECT slug FROM brain_organisation ORDER BY slug LIMIT 6")
            return [row[0] for row in cursor.fetchall()]
    except Exception:  # not Brain's tables: the count of tables says enough
        return []


def refuse_unless_empty(*, replace: bool) -> None:
    """A restore goes onto an empty database, unless the operator says to replace what is there."""
    tables = _tables()
    if not tables or replace:
        return
    names = _organisation_names()
    held = f", with the organisations {', '.join(names[:5])}{' and more' if len(names) > 5 else ''}" if names else ""
    raise BackupError(
        f"The database {connection.settings_dict['NAME']} is not empty: it holds {len(tables)} tables{held}. "
        "It may be another installation's data, so nothing was changed. Point DATABASE_URL (or "
        "BRAIN_DATA_DIR) at an empty database, or pass --into-existing to delete everything in this one "
        "and put the archive in its place."
    )


def _wipe() -> None:
    with connection.cursor() as cursor:
        cursor.execute("DROP SCHEMA public CASCADE")
        cursor.execute("CREATE SCHEMA public")


def _fingerprints_differ(manifest: dict[str, Any]) -> list[str]:
    here = {secret.name: secret for secret in secrets_in_use()}
    notes = []
    for entry in manifest.get("secrets", []):
        name = entry.get("name")
        mine = here.get(name)
        if mine is None:
            notes.append(f"{name} was set when the archive was made ({entry.get('kept_in')}) but is not set here.")
        elif backups.fingerprint(mine.value) != entry.get("fingerprint"):
            notes.append(
                f"{name} here ({mine.kept_in}) is not the one the archive was made with ({entry.get('kept_in')}): "
                "put the same value there (copy the file, or set the variable), or connectors' credentials "
                "cannot be read and people must log in again."
            )
    return notes


@dataclass(frozen=True)
class Restored:
    manifest: dict[str, Any]
    organisations: int
    migrated: list[str]
    warnings: list[str]


def restore(archive: Path, *, replace: bool = False) -> Restored:
    """Check ``archive``, load it into this installation's empty database (or, with ``replace``,
    in place of what it holds), migrate it to this code and record the restore in every organisation."""
    known = known_migrations()
    backups.refuse_newer(backups.read_manifest(archive), known, archive)
    refuse_unless_empty(replace=replace)
    with tempfile.TemporaryDirectory(prefix="brain-restore-") as work:
        manifest = backups.extract(archive, Path(work))
        backups.refuse_newer(manifest, known, archive)
        if replace:
            _wipe()
        connection.close()  # the types pgvector registered on this connection are gone with the schema
        backups.restore_dump(
            Path(work) / backups.DUMP,
            database=Database.of(connection.settings_dict),
            made_by_major=backups.dump_major(manifest),
        )
        backups.put_back_files(Path(work), Path(settings.DATA_DIR), replace=replace)
    ContentType.objects.clear_cache()  # the archive's ids, not the ones this process read before
    migrated = _migrate()
    organisations = _record_restored(archive, manifest)
    return Restored(manifest, organisations, migrated, _fingerprints_differ(manifest))


def _pending() -> list[str]:
    executor = MigrationExecutor(connection)
    plan = executor.migration_plan(executor.loader.graph.leaf_nodes())
    return [f"{m.app_label}.{m.name}" for m, _ in plan]


def _migrate() -> list[str]:
    pending = _pending()
    if pending:
        call_command("migrate", interactive=False, verbosity=0, stdout=StringIO())
    return pending


@transaction.atomic
def _record_restored(archive: Path, manifest: dict[str, Any]) -> int:
    details = {
        "archive": archive.name,
        "made_at": manifest.get("created_at"),
        "git_commit": manifest["brain"].get("git_commit"),
    }
    organisations = list(Organisation.objects.order_by("pk"))
    for org in organisations:
        record_audit(actor=None, org=org, action="instance.restored", target=archive.name, details=details)
    return len(organisations)


# --- Upgrade -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Upgraded:
    backup: BackupMade | None
    migrated: list[str]


def upgrade(*, into: Path | None = None) -> Upgraded:
    """Back up, then apply this code's migrations. Nothing to migrate: no archive is written."""
    if not _pending():
        return Upgraded(None, [])
    try:
        made = back_up(into=into) if _tables() else None  # an empty database has nothing to keep
    except BackupError as error:
        raise BackupError(f"{error} Nothing was migrated.") from None
    try:
        return Upgraded(made, _migrate())
    except Exception as error:
        kept = (
            f" The data as it was is in {made.path}: check out the previous code and restore it with --into-existing."
            if made
            else ""
        )
        raise BackupError(f"A migration failed: {error}.{kept}") from error
