"""Shared fixtures: organisations, members, actors and tokens on the real test database."""

from __future__ import annotations

import inspect
import itertools
import os
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest
from django.contrib.auth.models import User
from hypothesis.configuration import set_hypothesis_home_dir

from brain.core.actors import Actor
from brain.core.services import IssuedToken, add_member, create_organisation, create_token
from brain.models import Membership, Organisation
from usage.models import Account

_seq = itertools.count(1)

# Test tiers, most specific first; `-m "not browser and not worker"` is the fast loop.
TIERS = ("browser", "worker", "live_server", "db", "unit")
WORKER_FIXTURES = frozenset({"worker"})
# Their module fixture or the test body starts the launcher (web, worker and beat), or its
# entry point, itself.
WORKER_FILES = frozenset({"test_faults.py", "test_run_command.py", "test_entrypoint.py", "test_topology.py"})
LIVE_SERVER_FIXTURES = frozenset({"brain_url", "live_server"})
DB_FIXTURES = frozenset({"db", "transactional_db", "django_db_setup"})
BROWSER_NAMES = frozenset({"browser_page"})

# Tests that cannot share the machine with another test process: they stop the embedded Redis
# every process uses (SERIAL_FILES), or drop the open connections of their process (SERIAL_MARKERS).
# They carry the ``serial`` marker, and ./brainctl test runs them alone after the parallel phase.
SERIAL_FILES = frozenset({"test_faults.py"})
SERIAL_MARKERS = frozenset({"runs_last"})
# The files that take longest (docs/benchmarks-log.md, "The test suite"): handed out first under xdist,
# so that no worker starts one of them while the others are nearly done.
LONGEST_FILES = frozenset({"test_topology.py", "test_plans.py", "test_jobs_worker.py", "test_run_command.py"})
# Redis has databases 0 to 15; the tests take the launcher's one (9) and the ones after it.
REDIS_DATABASES = 16
# Set by pytest-xdist in each of its worker processes (gw0, gw1, ...); absent in a single process.
XDIST_WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")

# Fuzz runs store no examples (database=None); Hypothesis's own caches go outside the checkout,
# one folder per test process so that parallel workers never write the same file.
set_hypothesis_home_dir(Path(tempfile.gettempdir()) / f"brain-hypothesis{'-' + XDIST_WORKER if XDIST_WORKER else ''}")


def tier_of(fixtures: Iterable[str], names_used: Iterable[str], file_name: str, django_db: bool) -> str:
    """The one tier of a test: the first of these that holds.

    - browser: the test body opens headless chromium (``browser_page`` from tests/browser.py);
    - worker: it uses the ``worker`` fixture (a real Celery worker), or it is in a file whose
      fixtures or tests start the launcher (WORKER_FILES; no fixture name tells there);
    - live_server: it uses ``brain_url`` (the ASGI app served on a loopback port);
    - db: it is marked ``django_db`` or uses ``db``, ``transactional_db`` or ``django_db_setup``;
    - unit: everything else.
    """
    fixtures = set(fixtures)
    if BROWSER_NAMES & set(names_used):
        return "browser"
    if WORKER_FIXTURES & fixtures or file_name in WORKER_FILES:
        return "worker"
    if LIVE_SERVER_FIXTURES & fixtures:
        return "live_server"
    if django_db or DB_FIXTURES & fixtures:
        return "db"
    return "unit"


def is_serial(item: pytest.Item) -> bool:
    return item.path.name in SERIAL_FILES or any(item.get_closest_marker(name) for name in SERIAL_MARKERS)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test with its tier (see ``tier_of``), unless it already carries one, and the tests
    that must run alone with ``serial``."""
    for item in items:
        if is_serial(item):
            item.add_marker(pytest.mark.serial)
        if any(item.get_closest_marker(tier) for tier in TIERS):
            continue
        test = getattr(item, "obj", None)
        code = getattr(inspect.unwrap(test), "__code__", None) if callable(test) else None
        tier = tier_of(
            fixtures=getattr(item, "fixturenames", ()),
            names_used=code.co_names if code else (),
            file_name=item.path.name,
            django_db=item.get_closest_marker("django_db") is not None,
        )
        item.add_marker(getattr(pytest.mark, tier))
    # Tests that drop every open database connection (a real outage) run after all the others: a
    # connection another thread of this process held is broken for whichever test uses it next.
    items.sort(key=lambda item: item.get_closest_marker("runs_last") is not None)
    if XDIST_WORKER:
        heaviest_files_first(items)


def heaviest_files_first(items: list[pytest.Item]) -> None:
    """Order whole files, LONGEST_FILES first, then by their heaviest tier (browser and worker first),
    keeping each file's tests together and in order: xdist hands out files in this order, so the long
    ones start early and no worker is left with one at the end while the others wait."""
    rank: dict[Path, int] = {}
    for item in items:
        tier = next(i for i, name in enumerate(TIERS) if item.get_closest_marker(name))
        rank[item.path] = -1 if item.path.name in LONGEST_FILES else min(rank.get(item.path, len(TIERS)), tier)
    items.sort(key=lambda item: (item.get_closest_marker("runs_last") is not None, rank[item.path]))


def worker_redis_url(base: str, index: int) -> str:
    """The Redis database of xdist worker ``index``: the ones after the base URL's, one each, so that
    queues, broadcasts, throttles and flushes of one worker never reach another."""
    parts = urlsplit(base)
    number = int(parts.path.strip("/") or 0) + 1 + index
    if number >= REDIS_DATABASES:
        raise pytest.UsageError(
            f"{index + 1} test workers need Redis databases up to {number}, past the last one "
            f"({REDIS_DATABASES - 1}) after {base}: run fewer workers (BRAIN_TEST_WORKERS or -n)"
        )
    return urlunsplit(parts._replace(path=f"/{number}"))


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_setupnodes(config: pytest.Config, specs: Sequence[object]) -> None:
    """Start each xdist worker with a Redis database of its own in its environment, so its settings,
    the Celery app, and every worker or launcher it starts read the same one. (pytest-django gives
    each worker a test database of its own, suffixed with the worker's id.)"""
    from django.conf import settings

    for index, spec in enumerate(specs):
        spec.env["REDIS_URL"] = worker_redis_url(settings.REDIS_URL, index)  # type: ignore[attr-defined]


def make_org(slug: str | None = None, language: str = "en", credits: int = 1000) -> Organisation:
    """An organisation on the default (free) plan. It has ``credits`` so that tests of other things
    can call ``remember`` (two credits a call); the tests of plans set the balance they need."""
    n = next(_seq)
    org = create_organisation(slug=slug or f"org-{n}", name=f"Org {n}", language=language)
    Account.objects.filter(org=org).update(credits=credits)
    return org


def make_user(org: Organisation | None = None, role: str = Membership.MEMBER, **extra: str) -> User:
    n = next(_seq)
    user = User.objects.create_user(
        username=extra.pop("username", f"user{n}"),
        email=extra.pop("email", f"user{n}@example.com"),
        password=extra.pop("password", "correct horse battery"),
        **extra,
    )
    if org is not None:
        add_member(org=org, user=user, role=role)
    return user


def make_actor(org: Organisation, user: User | None = None, scopes: str = "read,write", via: str = "mcp") -> Actor:
    user = user or make_user(org)
    membership = Membership.objects.get(org=org, user=user)
    return Actor(org=org, user=user, scopes=frozenset(scopes.split(",")), via=via, role=membership.role)


def everything_on() -> dict[str, object]:
    """Features fields with every switch on and every connector's tools connected and granted, for
    tests that walk every tool (``Features.objects.filter(org=org).update(**everything_on())``)."""
    from brain.mcp.registry import TOOLS

    connected = sorted({need for spec in TOOLS.values() for need in spec.needs if ":" in need})
    return {"commitments": True, "contradictions": True, "glossary": True, "jobs": True, "connected": connected}


def make_token(org: Organisation, user: User | None = None, scopes: str = "read,write", **kw: object) -> IssuedToken:
    return create_token(org=org, user=user or make_user(org), scopes=scopes.split(","), **kw)  # type: ignore[arg-type]


@pytest.fixture
def org(db: None) -> Organisation:
    return make_org()


@pytest.fixture
def other_org(db: None) -> Organisation:
    return make_org()


@pytest.fixture
def actor(org: Organisation) -> Actor:
    return make_actor(org)


@pytest.fixture
def other_org_actor(other_org: Organisation) -> Actor:
    return make_actor(other_org)


@pytest.fixture(autouse=True)
def broker_not_cooling() -> None:
    """Each test starts with the broker taken to be well: a failed send in one test (a broker stood
    in for as down) must not make the next one's saves leave their messages to the outbox sweep."""
    from brain.infra.queueing import BROKER

    BROKER.failed_at = 0.0
