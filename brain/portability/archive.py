"""The archive's layout (docs/operations.md, "Export and import"): a gzip-compressed tar holding
``manifest.json`` and one ``<app>.<model>.jsonl`` file per exported model, each line one row.

Reading unpacks the archive once into a temporary folder and checks everything before an import
touches the database: the format version, that every file the manifest lists is there with the
digest and the number of lines it lists, and that no other file is. An archive cut short or
changed after it was written is refused, naming the file.
"""

from __future__ import annotations

import hashlib
import json
import re
import tarfile
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from brain.core.errors import InvalidArgument

FORMAT = "brain-organisation-archive"
VERSION = 1
MANIFEST = "manifest.json"
MANIFEST_MAX = 10 * 2**20
FILE_NAME = re.compile(r"^[a-z0-9_]+\.[a-z0-9_]+\.jsonl$")
# Fast enough that compressing is not most of an export's time, and a quarter of the text's size.
COMPRESSION = 6


@dataclass(frozen=True)
class Archive:
    """An unpacked archive whose files have been checked against its manifest."""

    folder: Path
    manifest: dict[str, Any]

    def rows(self, model_label: str) -> Iterator[dict[str, Any]]:
        """The rows of one model, in the order they were written."""
        name = f"{model_label}.jsonl"
        if name not in self.manifest["files"]:
            return
        with (self.folder / name).open(encoding="utf-8", newline="\n") as f:
            for number, line in enumerate(f, start=1):
                try:
                    row = json.loads(line)
                except ValueError as e:
                    raise InvalidArgument(f"{name}, line {number}, is not JSON: {e}.") from None
                if not isinstance(row, dict) or not isinstance(row.get("id"), int):
                    raise InvalidArgument(f"{name}, line {number}, is not a row with an id.")
                yield row


def file_entry(path: Path) -> dict[str, Any]:
    """What the manifest says of one written file: its digest and number of lines."""
    with path.open("rb") as f:
        return _copied(f, None)


def write(target: Path, folder: Path, manifest: dict[str, Any]) -> None:
    """Pack ``folder``'s files and the manifest into ``target``."""
    (folder / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    with tarfile.open(target, "w:gz", compresslevel=COMPRESSION) as tar:
        tar.add(folder / MANIFEST, arcname=MANIFEST)
        for name in sorted(manifest["files"]):
            tar.add(folder / name, arcname=name)


@contextmanager
def opened(path: Path) -> Iterator[Archive]:
    """The archive at ``path``, unpacked and checked against its manifest, for as long as the block
    runs; refused in words when it does not hold."""
    if not path.is_file():
        raise InvalidArgument(f"No archive at {path}.")
    with tempfile.TemporaryDirectory(prefix="brain-import-") as tmp:
        yield _unpacked(path, Path(tmp))


def _unpacked(path: Path, folder: Path) -> Archive:
    found: dict[str, dict[str, Any]] = {}
    manifest: dict[str, Any] | None = None
    try:
        with tarfile.open(path, "r|gz") as tar:  # one pass through the stream
            for member in tar:
                stream = tar.extractfile(member) if member.isfile() else None
                if stream is None or member.name in found or (member.name == MANIFEST and manifest is not None):
                    raise InvalidArgument(f"The archive holds {member.name!r} twice, or not as a plain file.")
                if member.name == MANIFEST:
                    manifest = _manifest(stream.read(MANIFEST_MAX + 1))
                elif FILE_NAME.match(member.name):
                    with (folder / member.name).open("wb") as out:
                        found[member.name] = _copied(stream, out)
                else:
                    raise InvalidArgument(f"The archive holds {member.name!r}, which is no file of the layout.")
    except (tarfile.TarError, EOFError, OSError, UnicodeDecodeError) as e:
        raise InvalidArgument(f"{path} is not a readable .tar.gz archive ({e}); it may be cut short.") from None
    if manifest is None:
        raise InvalidArgument("The archive has no manifest.json.")
    listed = manifest["files"]
    strays = sorted(set(found) - set(listed))
    if strays:
        raise InvalidArgument(f"The archive holds files its manifest does not list: {', '.join(strays)}.")
    for name, entry in sorted(listed.items()):
        if name not in found:
            raise InvalidArgument(f"The archive is short: {name} is listed in its manifest but missing.")
        if not isinstance(entry, dict) or found[name] != {"sha256": entry.get("sha256"), "rows": entry.get("rows")}:
            raise InvalidArgument(
                f"{name} is not as it was written ({found[name]['rows']} rows found; the digest or the count differs "
                "from the manifest's): the archive was cut short or changed. Export it again."
            )
    return Archive(folder=folder, manifest=manifest)


def _manifest(data: bytes) -> dict[str, Any]:
    if len(data) > MANIFEST_MAX:
        raise InvalidArgument("The archive's manifest.json is too large to be one.")
    try:
        manifest = json.loads(data.decode("utf-8"))
    except ValueError:
        raise InvalidArgument("The archive's manifest.json is not JSON.") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise InvalidArgument(f"This is not an organisation archive of Brain (its manifest does not say {FORMAT!r}).")
    if manifest.get("version") != VERSION:
        raise InvalidArgument(
            f"The archive is of format version {manifest.get('version')!r}; this Brain reads version {VERSION} only."
        )
    if not isinstance(manifest.get("files"), dict) or not isinstance(manifest.get("organisation"), dict):
        raise InvalidArgument("The archive's manifest names no organisation or lists no files.")
    return manifest


def _copied(stream: IO[bytes], out: IO[bytes] | None) -> dict[str, Any]:
    """The digest and number of lines of ``stream``, copied to ``out`` on the way."""
    digest, lines = hashlib.sha256(), 0
    for line in stream:
        digest.update(line)
        lines += 1
        if out is not None:
            out.write(line)
    return {"sha256": digest.hexdigest(), "rows": lines}
