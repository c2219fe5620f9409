"""why_code over synced systems: a file's commits from GitHub, the pull request that touched it with
its reviewers and the issue it closed, the deployments that shipped those commits, the Sentry
errors whose frames name the file, and a synced message that names the pull request, in time;
nothing from a category the reader does not read, nor from another organisation."""

from __future__ import annotations

from datetime import date, timedelta

import pytest
from django.contrib.auth.models import Group
from django.core.cache import cache
from django.utils import timezone

import memory.mcp_tools  # noqa: F401 - registers the tools
from brain.mcp.registry import TOOLS
from brain.models import Category
from conftest import make_actor, make_org, make_user
from connectors import sync
from connectors.tests.github_server import github_server
from connectors.tests.sentry_server import sentry_server
from memory.code_history.why import why_code
from memory.documents.ingestion import ingest_documents
from memory.mcp_tools.code import WhyArgs
from memory.models import Document
from memory.tests.factories import save

pytestmark = pytest.mark.django_db
FIRST, SECOND = "1" * 40, "2" * 40
TRACE = '  File "/srv/app/src/checkout/total.py", line 42, in compute_total'


@pytest.fixture
def synced(admin_actor, settings):
    with github_server() as github, sentry_server() as sentry:
        settings.BRAIN_GITHUB_API_URL = github.base
        settings.BRAIN_SENTRY_API_URL = f"{sentry.base}/api/0/"
        github.add_issue("acme/api", 12, updated="2026-10-01T08:00:00Z", title="Totals are off by a cent")
        github.add_commit(
            "acme/api",
            FIRST,
            date="2026-10-01T09:00:00Z",
            files=["src/checkout/total.py"],
            message="Round totals",
            author="Priya Shah",
            login="priya",
        )
        github.add_commit(
            "acme/api",
            SECOND,
            date="2026-10-05T09:00:00Z",
            files=["src/checkout/total.py", "src/checkout/tax.py"],
            message="Use banker's rounding (#31)",
            author="Tom Lee",
            login="tom",
        )
        github.add_commit("acme/api", "3" * 40, date="2026-10-06T09:00:00Z", files=["README.md"])
        github.add_pull(
            "acme/api",
            31,
            updated="2026-10-05T10:00:00Z",
            files=["src/checkout/total.py"],
            merged_sha=SECOND,
            body="Finance reconciles to the cent.\n\nFixes #12",
            reviews=[("sam", "APPROVED")],
            title="Banker's rounding",
        )
        github.add_deployment("acme/api", 1, sha=FIRST, created="2026-10-02T09:00:00Z", environment="staging")
        github.add_deployment("acme/api", 2, sha=SECOND, created="2026-10-06T12:00:00Z")
        github.add_deployment("acme/api", 3, sha=SECOND, created="2026-10-07T12:00:00Z", states=("failure",))
        sentry.add_issue(
            "web",
            7,
            first_seen="2026-10-08T09:00:00Z",
            last_seen="2026-10-09T09:00:00Z",
            frames=(("src/checkout/total.py", "compute_total"),),
            release="api@2.0",
        )
        sentry.add_issue("web", 8, last_seen="2026-10-09T09:00:00Z", frames=(("src/cart.py", "add"),))
        category = Category.objects.get(org=admin_actor.org, slug=Category.DEFAULT_SLUG)
        for kind, credentials, options in [
            ("github", {"token": github.token}, {"repositories": "acme/api"}),
            ("sentry", {"token": sentry.token}, {"organisation": "acme", "projects": "web"}),
        ]:
            connection = sync.add_connection(
                actor=admin_actor, kind=kind, name=kind, category=category, credentials=credentials, options=options
            )
            assert sync.sync_connection(connection.pk).state == "synced"
    save(admin_actor, "#payments", "Tom: the cent drift is gone since acme/api#31 went out.", source_kind="connector")
    save(admin_actor, "#random", "Lunch at noon?", source_kind="connector")
    ingest_documents(document_ids=list(Document.objects.filter(org=admin_actor.org).values_list("pk", flat=True)))
    return admin_actor


def test_a_file_is_explained_from_every_synced_system_in_time(synced):
    result = why_code(actor=synced, path=TRACE)
    assert result.matched_paths == ["src/checkout/total.py"]
    assert [c.sha for c in result.commits] == [SECOND, FIRST]
    assert result.commits[0].url == f"https://github.example/acme/api/commit/{SECOND}"
    assert result.commits[0].subject == "Use banker's rounding (#31)"
    [pull] = result.pull_requests
    assert (pull.ref, pull.reviewers, pull.closes, pull.merge_commit_sha) == (
        "acme/api#31",
        ["sam"],
        ["acme/api#12"],
        SECOND,
    )
    assert pull.url == "https://github.example/acme/api/issues/31"
    assert [(i.ref, i.closed_by) for i in result.issues] == [("acme/api#12", ["acme/api#31"])]
    [error] = result.errors
    assert (error.short_id, error.first_release) == ("WEB-7", "api@2.0")
    assert error.frames == ["src/checkout/total.py in compute_total line 10"]
    assert error.url == "https://acme.sentry.example/issues/7/"
    assert [(d.environment, d.shipped) for d in result.deployments] == [("production", [SECOND, FIRST]),
                                                                        ("staging", [FIRST])]  # fmt: skip
    assert result.deployments[0].url == "https://ci.example/deploys/2"
    assert [c.title for c in result.conversations] == ["#payments"]
    assert result.conversations[0].refs == ["acme/api#31"]
    people = {p.login or p.name: (p.commits, p.pull_requests, p.reviews) for p in result.people}
    assert people == {"priya": (1, 0, 0), "tom": (1, 0, 0), "octo": (0, 1, 0), "sam": (0, 0, 1)}
    kinds = [event.kind for event in result.timeline]
    assert {"commit", "pull_request", "merge", "issue", "deployment", "error", "conversation"} <= set(kinds)
    assert [event.at for event in result.timeline] == sorted(event.at for event in result.timeline)
    assert all(event.url for event in result.timeline if event.kind != "conversation")


def test_the_tool_shows_the_synced_sections_and_keeps_its_schema(synced):
    spec = TOOLS["why_code"]
    out = spec.fn(synced, WhyArgs(path="src/checkout/total.py"))
    import jsonschema

    jsonschema.validate(out.model_dump(mode="json"), spec.output_schema())
    text = out.to_text()
    assert "2 recorded commits touch src/checkout/total.py" in text
    assert (
        "acme/api#31 Banker's rounding (by octo, merged 2026-11-02 as 2222222; reviewed by sam; closes acme/api#12)"
        in text
    )
    assert "Errors whose stack traces name this file:" in text
    assert "WEB-7" in text
    assert "to production (success; ships 2222222, 1111111)" in text
    assert "People: Priya Shah (1 commit), Tom Lee (1 commit), octo (1 pull request), sam (1 review)" in text
    assert "In time, oldest first:" in text


def test_a_commit_in_local_history_and_on_github_is_listed_once(synced):
    save(
        synced,
        "Use banker's rounding (#31)",
        "Use banker's rounding (#31)\n\nFiles:\nsrc/checkout/total.py",
        source_kind="git",
        external_id=f"api:{SECOND}",
        metadata={
            "sha": SECOND,
            "repo": "acme/api",
            "author": "Tom Lee",
            "email": "tom@example.com",
            "files": ["src/checkout/total.py"],
            "refs": ["#31"],
        },
    )
    result = why_code(actor=synced, path="src/checkout/total.py")
    assert [c.sha for c in result.commits] == [SECOND, FIRST]
    assert result.commits[0].source == "connector"
    assert result.total_commits == 2


def test_a_reader_outside_a_restricted_category_sees_none_of_it(synced):
    team = Category.objects.create(org=synced.org, slug="platform", name="Platform", restricted=True)
    people = Group.objects.create(name="platform people")
    team.groups.add(people)
    moved = Document.objects.filter(org=synced.org, metadata__kind__in=["pull_request", "sentry_issue", "deployment"])
    assert moved.update(category=team) == 6
    reader = make_actor(synced.org, make_user(synced.org))
    outside = why_code(actor=reader, path=TRACE)
    assert len(outside.commits) == 2
    assert outside.pull_requests == []
    assert outside.errors == []
    assert outside.deployments == []
    assert outside.issues == []  # found only through the pull request it cannot read
    assert {p.login for p in outside.people} == {"priya", "tom"}
    reader.user.groups.add(people)
    cache.clear()  # the categories a person reads are worked out once per request
    inside = why_code(actor=reader, path=TRACE)
    assert [p.ref for p in inside.pull_requests] == ["acme/api#31"]
    assert [e.short_id for e in inside.errors] == ["WEB-7"]


def test_another_organisation_and_an_earlier_day_see_nothing(synced):
    other = make_org()
    stranger = make_actor(other, make_user(other, role="admin"))
    result = why_code(actor=stranger, path=TRACE)
    assert (result.commits, result.pull_requests, result.errors, result.deployments) == ([], [], [], [])
    before = why_code(actor=synced, path=TRACE, as_of=date(2020, 1, 1))
    assert (before.commits, before.pull_requests, before.errors, before.timeline) == ([], [], [], [])
    today = why_code(actor=synced, path=TRACE, as_of=(timezone.now() + timedelta(days=1)).date())
    assert len(today.pull_requests) == 1
