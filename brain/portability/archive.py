"""The archive's layout (docs/operations.md, "Export and import"): a gzip-compressed tar holding
``manifest.json`` and one ``<app>.<model>.jsonl`` file per exported model, each line one row.

Reading checks everything before an import touches the database: the format version, that every
file the manifest lists is there with the digest and the number of lines it lists, and that no
other file is. An archive cut short or changed after it was written is refused, naming the file.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import tarfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from brain.core.errors import InvalidArgument

FORMAT = "brain-organisation-archive"
VERSION = 1
MANIFEST = "manifest.json"
FILE_NAME = re.compile(r"^[a-z0-9_]+\.[a-z0-9_]+\.jsonl$")


@dataclass(frozen=True)
class Archive:
    """An archive whose files have been checked against its manifest."""

    path: Path
    manifest: dict[str, Any]

    def rows(self, model_label: str) -> Iterator[dict[str, Any]]:
        """The rows of one model, in the order they were written."""
        name = f"{model_label}.jsonl"
        if name not in self.manifest["files"]:
            return
        with tarfile.open(self.path, "r:gz") as tar:
            stream = _member(tar, name)
            for number, line in enumerate(io.TextIOWrapper(stream, encoding="utf-8"), start=1):
                try:
                    row = json.loads(line)
                except ValueError as e:
                    raise InvalidArgument(f"{name}, line {number}, is not JSON: {e}.") from None
                if not isinstance(row, dict) or "id" not in row:
                    raise InvalidArgument(f"{name}, line {number}, is not a row with an id.")
                yield row


def file_entry(path: Path) -> dict[str, Any]:
    """What the manifest says of one written file: its digest and number of lines."""
    with path.open("rb") as f:
        return _entry_of(f)


def write(target: Path, folder: Path, manifest: dict[str, Any]) -> None:
    """Pack ``folder``'s files and the manifest into ``target``."""
    (folder / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    with tarfile.open(target, "w:gz") as tar:
        tar.add(folder / MANIFEST, arcname=MANIFEST)
        for name in sorted(manifest["files"]):
            tar.add(folder / name, arcname=name)


def open_archive(path: Path) -> Archive:
    """Check the archive at ``path`` against its manifest; refuse it in words when it does not hold."""
    if not path.is_file():
        raise InvalidArgument(f"No archive at {path}.")
    try:
        with tarfile.open(path, "r:gz") as tar:
            names = [m.name for m in tar.getmembers()]
            manifest = _manifest(tar)
            listed = manifest["files"]
            strays = sorted(set(names) - set(listed) - {MANIFEST})
            if strays:
                raise InvalidArgument(f"The archive holds files its manifest does not list: {', '.join(strays)}.")
            for name, entry in sorted(listed.items()):
                if not FILE_NAME.match(name):
                    raise InvalidArgument(f"The manifest lists {name!r}, which is not a file name of the layout.")
                if name not in names:
                    raise InvalidArgument(f"The archive is short: {name} is listed in its manifest but missing.")
                found = _entry_of(_member(tar, name))
                if found != {"sha256": entry.get("sha256"), "rows": entry.get("rows")}:
                    raise InvalidArgument(
                        f"{name} is not as it was written ({entry.get('rows')} rows listed, {found['rows']} found, "
                        "or its digest differs): the archive was cut short or changed. Export it again."
                    )
    except (tarfile.TarError, EOFError, OSError, UnicodeDecodeError) as e:
        raise InvalidArgument(f"{path} is not a readable .tar.gz archive ({e}); it may be cut short.") from None
    return Archive(path=path, manifest=manifest)


def _manifest(tar: tarfile.TarFile) -> dict[str, Any]:
    try:
        manifest = json.loads(_member(tar, MANIFEST).read().decode("utf-8"))
    except ValueError:
        raise InvalidArgument("The archive's manifest.json is not JSON.") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise InvalidArgument(f"This is not an organisation archive of Brain (its manifest does not say {FORMAT!r}).")
    if manifest.get("version") != VERSION:
        raise InvalidArgument(
            f"The archive is of format version {manifest.get('version')!r}; this Brain reads version {VERSION} only."
        )
    if not isinstance(manifest.get("files"), dict):
        raise InvalidArgument("The archive's manifest lists no files.")
    return manifest


def _member(tar: tarfile.TarFile, name: str) -> IO[bytes]:
    try:
        member = tar.getmember(name)
    except KeyError:
        raise InvalidArgument(f"The archive has no {name}.") from None
    stream = tar.extractfile(member) if member.isfile() else None
    if stream is None:
        raise InvalidArgument(f"{name} in the archive is not a plain file.")
    return stream


def _entry_of(stream: IO[bytes]) -> dict[str, Any]:
    digest, lines = hashlib.sha256(), 0
    for line in stream:
        digest.update(line)
        lines += 1
    return {"sha256": digest.hexdigest(), "rows": lines}
