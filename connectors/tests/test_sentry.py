"""Syncing Sentry against a stand-in on loopback: issues with the exception and stack frames of
their first and latest event, timed by when they were first seen; releases of the project;
cursor pagination that resumes mid-listing; only issues seen since the last sync asked for;
refused tokens and rate limits kept in words."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.utils import timezone

from brain.core.errors import InvalidArgument
from brain.models import Category
from connectors import sync
from connectors.sentry import Sentry, exception_of, frame_path
from connectors.tests.sentry_server import sentry_server
from memory.models import Document

pytestmark = pytest.mark.django_db
FRAMES = (("src/checkout/total.py", "compute_total"), ("src/checkout/tax.py", "add_tax"))


@pytest.fixture
def sentry(settings):
    with sentry_server() as fake:
        settings.BRAIN_SENTRY_API_URL = f"{fake.base}/api/0/"
        yield fake


def connect(actor, token="sntrys_valid", projects="web"):  # noqa: S107 (the stand-in's token)
    category = Category.objects.get(org=actor.org, slug=Category.DEFAULT_SLUG)
    return sync.add_connection(
        actor=actor,
        kind="sentry",
        name=f"Sentry {projects}",
        category=category,
        credentials={"token": token},
        options={"organisation": "acme", "projects": projects},
    )


def of_kind(connection, kind):
    return Document.objects.filter(org=connection.org, source_kind="connector", metadata__kind=kind)


def test_an_issue_comes_in_with_its_exception_frames_and_its_own_times(sentry, admin_actor):
    sentry.add_issue(
        "web",
        1,
        first_seen="2026-10-01T09:00:00Z",
        last_seen="2026-11-02T10:00:00.512Z",
        frames=FRAMES,
        release="shop@1.4.0",
    )
    connection = connect(admin_actor)
    outcome = sync.sync_connection(connection.pk)
    assert (outcome.state, outcome.saved) == ("synced", 1)
    issue = of_kind(connection, "sentry_issue").get()
    assert issue.title == "Sentry WEB-1: ZeroDivisionError 1"
    assert issue.occurred_at == datetime(2026, 10, 1, 9, tzinfo=UTC)  # first seen, not the sync's time
    assert issue.source_url == "https://acme.sentry.example/issues/1/"
    meta = issue.metadata
    assert (meta["first_seen"], meta["last_seen"]) == ("2026-10-01T09:00:00Z", "2026-11-02T10:00:00Z")
    assert meta["exception"] == {"type": "ZeroDivisionError", "value": "division by zero"}
    assert meta["files"] == ["src/checkout/total.py", "src/checkout/tax.py"]  # in-app frames only
    assert [f["function"] for f in meta["frames"]] == ["compute_total", "add_tax"]
    assert (meta["first_release"], meta["count"], meta["status"]) == ("shop@1.4.0", "12", "unresolved")
    assert "ZeroDivisionError: division by zero" in issue.content
    assert "at src/checkout/total.py in compute_total line 10" in issue.content
    assert "first on 2026-10-01 09:00 (release shop@1.4.0)" in issue.content
    connection.refresh_from_db()
    assert connection.cursor["web"]["issues"] == {"since": "2026-11-02T10:00:00Z"}


def test_the_next_sync_asks_only_for_issues_seen_since_and_a_status_change_is_a_new_version(sentry, admin_actor):
    sentry.add_issue("web", 1, last_seen="2026-11-02T10:00:00Z", frames=FRAMES)
    sentry.add_issue("web", 2, last_seen="2026-11-01T10:00:00Z", frames=FRAMES)
    connection = connect(admin_actor)
    assert sync.sync_connection(connection.pk).saved == 2
    sentry.requests.clear()
    assert sync.sync_connection(connection.pk).saved == 0
    asked = next(path for path in sentry.requests if "/issues/?" in path)
    assert "query=lastSeen%3A%3E%3D2026-11-02T10%3A00%3A00" in asked
    sentry.add_issue("web", 1, last_seen="2026-11-02T18:00:00Z", frames=FRAMES)  # seen again the same day
    assert sync.sync_connection(connection.pk).saved == 0
    sentry.add_issue("web", 1, last_seen="2026-11-02T19:00:00Z", frames=FRAMES, status="resolved")
    assert sync.sync_connection(connection.pk).saved == 1
    latest = of_kind(connection, "sentry_issue").filter(metadata__issue_id="1").latest("pk")
    assert latest.metadata["status"] == "resolved"


def test_issues_page_by_cursor_and_a_stopped_sync_goes_on_from_its_page(sentry, admin_actor):
    for n in range(1, 251):
        sentry.add_issue("web", n, last_seen=f"2026-11-{1 + n // 24:02d}T{n % 24:02d}:00:00Z")
    sentry.fail_on_cursor = "0:200:0"
    connection = connect(admin_actor)
    stopped = sync.sync_connection(connection.pk)
    assert (stopped.state, stopped.saved) == ("failed", 200)
    connection.refresh_from_db()
    assert "cursor=0%3A200%3A0" in connection.cursor["web"]["issues"]["next"]
    sentry.requests.clear()
    assert sync.sync_connection(connection.pk).saved == 50
    assert "cursor=0%3A200%3A0" in next(path for path in sentry.requests if "/issues/?" in path)
    assert of_kind(connection, "sentry_issue").count() == 250


def test_the_projects_releases_come_in(sentry, admin_actor):
    sentry.add_issue("web", 1, last_seen="2026-11-02T10:00:00Z")
    sentry.add_release("shop@1.4.0", created="2026-10-30T08:00:00Z", projects=["web"])
    sentry.add_release("other@2.0", created="2026-10-31T08:00:00Z", projects=["elsewhere"])
    connection = connect(admin_actor)
    sync.sync_connection(connection.pk)
    release = of_kind(connection, "sentry_release").get()
    assert release.title == "Sentry release shop@1.4.0"
    assert release.occurred_at == datetime(2026, 10, 30, 8, tzinfo=UTC)
    assert release.metadata["last_deploy"]["environment"] == "production"
    assert release.source_url.endswith("/organizations/acme/releases/shop@1.4.0/")
    assert "releases/?project=100" in next(p for p in sentry.requests if "/releases/" in p)


def test_a_refused_token_stops_the_retries(sentry, admin_actor):
    connection = connect(admin_actor, token="sntrys_revoked")
    sentry.add_issue("web", 1, last_seen="2026-11-02T10:00:00Z")
    assert sync.sync_connection(connection.pk).state == "failed"
    connection.refresh_from_db()
    assert connection.credentials_refused
    assert "Sentry refused the token (401)" in connection.last_error


def test_an_unknown_project_is_named(sentry, admin_actor):
    connection = connect(admin_actor, projects="nope")
    sync.sync_connection(connection.pk)
    connection.refresh_from_db()
    assert "404 for acme/nope" in connection.last_error


def test_a_rate_limit_moves_the_next_sync_to_when_sentry_says(sentry, admin_actor):
    sentry.add_issue("web", 1, last_seen="2026-11-02T10:00:00Z")
    sentry.refusals.append((429, {"Retry-After": "90"}))
    connection = connect(admin_actor)
    assert sync.sync_connection(connection.pk).state == "failed"
    connection.refresh_from_db()
    assert not connection.credentials_refused
    assert abs((connection.next_sync_at - (timezone.now() + timedelta(seconds=91))).total_seconds()) < 5
    assert "asked Brain to wait" in connection.last_error


def test_options_are_slugs():
    assert Sentry.clean_options({"organisation": " Acme ", "projects": "web, api\nweb"}) == {
        "organisation": "acme",
        "projects": ["web", "api"],
    }
    with pytest.raises(ValueError, match="not a project slug"):
        Sentry.clean_options({"organisation": "acme", "projects": "web/app"})
    with pytest.raises(ValueError, match="organisation's slug"):
        Sentry.clean_options({"organisation": "", "projects": "web"})


def test_adding_a_connection_without_projects_is_refused_in_words(sentry, admin_actor):
    with pytest.raises(InvalidArgument, match="at least one project"):
        connect(admin_actor, projects="")


def test_frames_read_as_repository_paths():
    assert frame_path({"filename": "~/src/app.js"}) == "src/app.js"
    assert frame_path({"filename": "app:///src/app.js"}) == "src/app.js"
    assert frame_path({"absPath": "/srv/app/src/a.py"}) == "srv/app/src/a.py"
    assert frame_path({"filename": "<anonymous>"}) == ""
    chained = {"entries": [{"type": "exception", "data": {"values": [
        {"type": "KeyError", "value": "'a'", "stacktrace": {"frames": [{"filename": "a.py", "function": "f"}]}},
        {"type": "ValueError", "value": "bad", "stacktrace": {"frames": [{"filename": "b.py", "function": "g"}]}},
    ]}}]}  # fmt: skip
    exception, frames = exception_of(chained)
    assert exception == {"type": "ValueError", "value": "bad"}
    assert [f["file"] for f in frames] == ["a.py", "b.py"]
