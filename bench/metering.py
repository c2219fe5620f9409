"""What metering costs a call, side by side: in process per call, and over HTTP in calls/s.

    .venv/bin/python -m bench.metering --calls 2000 --http-calls 2000 --concurrency 1,10

In process: ``execute`` of a cheap metered read (``get_schema``) in four states: metering left
out entirely (the baseline: the charge step skipped), ``BRAIN_METERING=0`` (counted, never
charged), a plan charging its free allowance, and the free plan paying credits (allowance
spent). Over HTTP: the same tool through uvicorn, paying credits, with ``BRAIN_METERING`` on and
off.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

from bench.mcp_calls import ROOT, percentile, run_level, serve, setup_environment

TOOL = "get_schema"
SLUG = "bench-metering"


def paying_org() -> Any:
    """A fresh organisation on the free plan with its allowance spent and credits to pay with."""
    from django.contrib.auth.models import User

    from brain.core.services import add_member, create_organisation
    from brain.models import Organisation
    from usage.metering import month_of
    from usage.models import Account, Month

    Organisation.objects.filter(slug=SLUG).delete()
    org = create_organisation(slug=SLUG, name="Bench metering", plan="free")
    user = User.objects.filter(username=SLUG).first() or User.objects.create_user(SLUG, f"{SLUG}@example.com")
    add_member(org=org, user=user)
    Month.objects.create(org=org, month=month_of(org), free_used=1000)
    Account.objects.filter(org=org).update(credits=10**12)
    return org, user


def measure(run: Callable[[], object], calls: int) -> tuple[float, float]:
    for _ in range(50):
        run()
    times = []
    for _ in range(calls):
        started = time.perf_counter()
        run()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times), percentile(times, 95)


def in_process(calls: int) -> list[tuple[str, float, float]]:
    from django.test import override_settings

    from brain.core.actors import Actor
    from brain.mcp import invoke, meter
    from brain.mcp.prices import READ
    from brain.mcp.registry import TOOLS
    from brain.models import Organisation
    from usage.metering import charge
    from usage.models import Account, Plan

    org, user = paying_org()
    spec = TOOLS[TOOL]

    def call() -> object:
        # As a token's request loads it: the organisation with its account and plan (brain.core.services).
        loaded = Organisation.objects.select_related("account__plan").get(pk=org.pk)
        actor = Actor(org=loaded, user=user, scopes=frozenset({"read", "write"}), via="mcp", role="member")
        return invoke.execute(actor, spec, {})

    rows = []
    metering_step = meter.metered  # what every call pays through (brain.mcp.meter.recorded_call)
    meter.metered = lambda actor, what, price: metering_step(actor, what, None)
    rows.append(("metering left out (baseline)", *measure(call, calls)))
    meter.metered = metering_step
    with override_settings(BRAIN_METERING=False):
        rows.append(("BRAIN_METERING=0 (counted only)", *measure(call, calls)))
    defaults = {"name": "Bench allowance", "monthly_free_reads": 10**9}
    allowance, _ = Plan.objects.get_or_create(slug=f"{SLUG}-allowance", defaults=defaults)
    Account.objects.filter(org=org).update(plan=allowance)
    rows.append(("charging the free allowance", *measure(call, calls)))
    Account.objects.filter(org=org).update(plan=Plan.objects.get(slug="free"))
    rows.append(("paying credits", *measure(call, calls)))
    loaded = Organisation.objects.select_related("account__plan").get(pk=org.pk)
    rows.append(("the charge alone, paying credits", *measure(lambda: charge(org=loaded, price=READ), calls)))
    Account.objects.filter(org=org).update(plan=allowance)
    loaded = Organisation.objects.select_related("account__plan").get(pk=org.pk)
    rows.append(("the charge alone, from the allowance", *measure(lambda: charge(org=loaded, price=READ), calls)))
    return rows


def over_http(calls: int, levels: list[int], port: int, env: dict[str, str]) -> dict[str, list[dict[str, Any]]]:
    from brain.core.services import create_token

    org, user = paying_org()
    token = create_token(org=org, user=user, scopes=["read"], name="bench", expires_in_days=1).plaintext
    results: dict[str, list[dict[str, Any]]] = {}
    for state in ("1", "0"):
        with serve(port, dict(env, BRAIN_METERING=state)) as url:
            asyncio.run(run_level(url, token, TOOL, {}, 100, 4))  # warm-up
            results[state] = [asyncio.run(run_level(url, token, TOOL, {}, calls, level)) for level in levels]
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=2000, help="in-process calls per state")
    parser.add_argument("--http-calls", type=int, default=2000)
    parser.add_argument("--concurrency", default="1,10")
    parser.add_argument("--port", type=int, default=8766)
    args = parser.parse_args()
    env = setup_environment()
    subprocess.run([sys.executable, "manage.py", "migrate", "-v", "0"], cwd=ROOT, env=env, check=True)
    import django

    django.setup()
    print(f"tool={TOOL} cores={os.cpu_count()}")
    rows = in_process(args.calls)
    baseline = rows[0][1]
    for name, p50, p95 in rows:
        print(f"in process  {name:<34} p50 {p50:6.2f} ms (+{p50 - baseline:5.2f})  p95 {p95:6.2f} ms")
    levels = [int(c) for c in args.concurrency.split(",")]
    results = over_http(args.http_calls, levels, args.port, env)
    print(f"{'HTTP':<5} {'clients':>7} {'on calls/s':>10} {'off calls/s':>11} {'on p95':>7} {'off p95':>8}")
    for on, off in zip(results["1"], results["0"], strict=True):
        print(
            f"{'':<5} {on['concurrency']:>7} {on['calls_per_s']:>10} {off['calls_per_s']:>11} "
            f"{on['p95_ms']:>7} {off['p95_ms']:>8}  errors {on['errors']}/{off['errors']}"
        )
    from brain.models import Organisation

    Organisation.objects.filter(slug=SLUG).delete()


if __name__ == "__main__":
    main()
