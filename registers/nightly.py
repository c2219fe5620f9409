"""An organisation's nightly register work: each switched-on register's scan, one run at a time.

A run holds an advisory lock on the organisation, so two beats or a redelivered task never read
the same passages twice at once; every scan resumes where the last one stopped.
"""

from __future__ import annotations

from collections.abc import Callable

from django.db import connection

from brain.models import Organisation
from registers.commitments.nightly import check_commitments, scan_commitments
from registers.common import switched_on
from registers.contradictions.nightly import scan_contradictions
from registers.glossary.nightly import scan_glossary

Progress = Callable[[int], None]


def run_nightly(org: Organisation, *, only: str | None = None, progress: Progress | None = None) -> dict[str, int]:
    """Run the scans of the registers that are on (or just ``only``); returns what each did, or
    ``{"busy": 1}`` when another run of this organisation holds the lock."""
    wanted = switched_on(org) if only is None else switched_on(org) & {only}
    if not wanted:
        return {}
    key = f"registers:{org.pk}"
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(hashtext(%s))", [key])
        if not cursor.fetchone()[0]:
            return {"busy": 1}
    try:
        done: dict[str, int] = {}
        if "commitments" in wanted:
            done["commitments found"] = scan_commitments(org, progress)
            done["verdicts"] = check_commitments(org, progress)
        if "contradictions" in wanted:
            done["contradictions raised"] = scan_contradictions(org, progress)
        if "glossary" in wanted:
            done["terms found"] = scan_glossary(org, progress)
        return done
    finally:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_unlock(hashtext(%s))", [key])
