"""Scheduling overhead with many jobs, and an evidence-digest run on a large organisation.

    .venv/bin/python -m bench.jobs --jobs 1000 --chunks 100000

An organisation ``bench-jobs`` gets ``--jobs`` enabled recurring jobs (every 5 minutes, in a few
time zones; created once and kept). Measured on 2 cores, in one process:
- creating a job (its checks, chat and beat entry);
- the first tick of a moment for every job (claim and run a digest, on an organisation without
  documents), and the same ticks again (a second beat or a redelivery: each finds its run);
- one evidence-digest run on ``bench-<chunks>`` (the search benchmark's corpus, filled if missing).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta

from bench.mcp_calls import ROOT, percentile, setup_environment

ZONES = ["UTC", "Europe/Madrid", "America/New_York", "Asia/Tokyo"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=1000)
    parser.add_argument("--chunks", type=int, default=100_000)
    args = parser.parse_args()
    env = setup_environment()
    subprocess.run([sys.executable, "manage.py", "migrate", "-v", "0"], cwd=ROOT, env=env, check=True)
    import django

    django.setup()
    from django.contrib.auth.models import User

    from bench.corpus import bench_org, chunk_count, fill
    from brain.core.actors import Actor
    from brain.core.services import add_member
    from brain.models import Features, Membership, Organisation
    from jobs.models import Job, Run
    from jobs.runs import tick
    from jobs.services import JOBS_PER_USER, schedule_job

    def member(org: Organisation, n: int) -> Actor:
        user, _ = User.objects.get_or_create(username=f"bench-jobs-{n}", defaults={"email": f"j{n}@example.com"})
        if not Membership.objects.filter(org=org, user=user).exists():
            add_member(org=org, user=user)
        return Actor(org=org, user=user, scopes=frozenset({"read", "write"}), via="command", role="member")

    org, _ = bench_org("bench-jobs")
    Features.objects.filter(org=org).update(jobs=True)
    have = Job.objects.filter(org=org).count()
    made = []
    for n in range(have, args.jobs):
        owner = member(org, n // JOBS_PER_USER)  # at most 50 jobs a person
        started = time.perf_counter()
        schedule_job(
            actor=owner,
            name=f"Digest {n}",
            prompt="What changed about the contract?",
            schedule="*/5 * * * *",
            time_zone=ZONES[n % len(ZONES)],
        )
        made.append((time.perf_counter() - started) * 1000)
    jobs = list(Job.objects.filter(org=org).values_list("pk", flat=True))
    print(f"cores={os.cpu_count()} jobs={len(jobs)}")
    if made:
        print(f"create: p50 {statistics.median(made):.1f} ms, p95 {percentile(made, 95):.1f} ms")

    moment = datetime(2031, 1, 1, 0, 2, tzinfo=UTC)  # every job's latest 5-minute moment is 00:00
    Run.objects.filter(job__org=org).delete()
    started = time.perf_counter()
    for pk in jobs:
        tick(pk, now=moment)
    first = time.perf_counter() - started
    ran = Run.objects.filter(job__org=org, status="ok").count()
    started = time.perf_counter()
    for pk in jobs:  # the same moment again (a second beat, a redelivery): each claim finds its run
        tick(pk, now=moment)
    again = time.perf_counter() - started
    print(
        f"first ticks of a moment (claim and run a digest, organisation without documents): {ran} runs in "
        f"{first:.1f} s, {len(jobs) / first:.0f}/s; repeated ticks of the moment: {len(jobs) / again:.0f}/s, "
        f"{Run.objects.filter(job__org=org).count() - ran} extra runs"
    )

    big, big_actor = bench_org(f"bench-{args.chunks}")
    fill(big, big_actor, args.chunks)
    Features.objects.filter(org=big).update(jobs=True)
    job = schedule_job(
        actor=big_actor,
        name="Weekly digest",
        prompt="What did Priya say about the contract for Acme?",
        schedule="0 9 * * 1",
    ).job
    times = []
    for week in range(5):
        moment = datetime(2031, 1, 6, 9, 0, 5, tzinfo=UTC) + timedelta(weeks=week)
        started = time.perf_counter()
        run = tick(job.pk, now=moment)
        times.append((time.perf_counter() - started) * 1000)
        if run is None or run.status != "ok":
            raise SystemExit(f"the digest run did not succeed: {run and run.report}")
    job.delete()
    print(f"digest run at {chunk_count(big)} chunks: p50 {statistics.median(times):.0f} ms, max {max(times):.0f} ms")


if __name__ == "__main__":
    main()
