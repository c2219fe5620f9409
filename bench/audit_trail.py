"""The audit trail page, its export and its nightly purge on a large trail.

    .venv/bin/python -m bench.audit_trail --records 200000

An organisation ``bench-audit`` gets ``--records`` audit records spread over 400 days (refilled to
that many on each run). Measured in one process, each query five times (median):
- the page's first fifty records and their count, unfiltered and with each filter;
- an export of up to 100,000 records as CSV and as JSON Lines;
- the nightly purge of what is past the default 365 days (run once; the next run refills).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import timedelta

from bench.mcp_calls import ROOT, setup_environment

ACTIONS = ["user.signed_in", "token.created", "token.revoked", "document.deleted", "membership.changed", "tool.action"]


def timed(label: str, work: Callable[[], object], runs: int = 5) -> None:
    spent = []
    for _ in range(runs):
        started = time.perf_counter()
        work()
        spent.append((time.perf_counter() - started) * 1000)
    print(f"{label:<52} {statistics.median(spent):9.1f} ms (median of {runs})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=200_000)
    args = parser.parse_args()
    env = setup_environment()
    subprocess.run([sys.executable, "manage.py", "migrate", "-v", "0"], cwd=ROOT, env=env, check=True)
    import django

    django.setup()
    from django.core.paginator import Paginator
    from django.utils import timezone

    from bench.corpus import bench_org
    from brain.core.audit import purge_expired_audit
    from brain.core.audit_trail import AuditFilters, export_audit, list_audit_records
    from brain.models import AuditRecord

    org, actor = bench_org("bench-audit")
    have = AuditRecord.objects.filter(org=org).count()
    now, step = timezone.now(), timedelta(days=400) / max(args.records, 1)
    rows = [
        AuditRecord(
            org=org,
            who=f"person{n % 300}",
            via=("web", "admin", "mcp", "api")[n % 4],
            action=ACTIONS[n % len(ACTIONS)],
            target=f"token brn_{n:08x}",
            details={"n": n},
            created_at=now - step * n,
        )
        for n in range(have, args.records)
    ]
    AuditRecord.objects.bulk_create(rows, batch_size=5000)
    print(f"{AuditRecord.objects.filter(org=org).count():,} records in {org.slug}")

    def page(filters: AuditFilters) -> Callable[[], object]:
        def one() -> object:
            found = Paginator(list_audit_records(org=org, filters=filters), 50).get_page(1)
            return found.paginator.count, list(found.object_list)

        return one

    day = (now - timedelta(days=100)).date()
    timed("page 1, no filter", page(AuditFilters()))
    timed("page 1, action starts with 'token.'", page(AuditFilters(action="token.")))
    timed("page 1, who contains 'person7'", page(AuditFilters(person="person7")))
    timed("page 1, through 'admin'", page(AuditFilters(via="admin")))
    timed("page 1, one day", page(AuditFilters(since=day, until=day)))
    timed("page 1, target contains 'brn_0000ff'", page(AuditFilters(target="brn_0000ff")))
    last_month = AuditFilters(since=(now - timedelta(days=30)).date())
    count = list_audit_records(org=org, filters=last_month).count()

    def exporting(fmt: str) -> Callable[[], object]:
        return lambda: export_audit(user=actor.user, org=org, filters=last_month, fmt=fmt)

    for fmt in ("csv", "jsonl"):
        timed(f"export the last 30 days ({count:,} records) as {fmt}", exporting(fmt), runs=3)
    started = time.perf_counter()
    purged = purge_expired_audit()
    print(f"{'nightly purge past 365 days':<52} {(time.perf_counter() - started) * 1000:9.1f} ms ({purged:,} deleted)")


if __name__ == "__main__":
    main()
