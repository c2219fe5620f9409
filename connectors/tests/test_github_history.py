"""The history of a repository's code from GitHub, against the stand-in on loopback: commits of the
default branch with their files, pull requests with files, merge commit, reviews and the issues
they close, releases, and deployments with their latest status; each listing resumes mid-way and
reads only what is new the next time."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from connectors import sync
from connectors.github_history import capped, closing_refs
from connectors.tests.test_github_sync import connect, documents

pytestmark = pytest.mark.django_db


def sha(n: int) -> str:
    return f"{n:07x}" + "a" * 33


def of_kind(connection, kind):
    return documents(connection).filter(metadata__kind=kind)


def test_commits_come_in_with_their_files_author_and_own_date(github, admin_actor):
    github.add_commit(
        "acme/api",
        sha(1),
        date="2026-10-01T09:00:00Z",
        files=["src/total.py", "README.md"],
        message="Round totals to cents\n\nFixes #12, see PROJ-142.",
    )
    connection = connect(admin_actor)
    assert sync.sync_connection(connection.pk).saved == 1
    commit = of_kind(connection, "commit").get()
    assert commit.title == f"Commit acme/api@{sha(1)[:7]}: Round totals to cents"
    assert commit.external_id.endswith(f"acme/api@{sha(1)}")
    assert commit.occurred_at == datetime(2026, 10, 1, 9, tzinfo=UTC)
    assert commit.source_url == f"https://github.example/acme/api/commit/{sha(1)}"
    assert commit.metadata["files"] == ["src/total.py", "README.md"]
    assert (commit.metadata["author"], commit.metadata["login"]) == ("Priya Shah", "priya")
    assert commit.metadata["refs"] == ["#12", "PROJ-142"]
    assert "Files:\nsrc/total.py" in commit.content
    connection.refresh_from_db()
    assert connection.cursor["acme/api"]["commits"] == {"since": "2026-10-01T09:00:00Z"}


def test_commits_page_resume_mid_listing_and_ask_only_since_last_time(github, admin_actor):
    for n in range(1, 121):
        github.add_commit("acme/api", sha(n), date=f"2026-10-{1 + n // 10:02d}T{n % 10:02d}:00:00Z", files=["a.py"])
    github.fail_on_page = 2
    connection = connect(admin_actor)
    stopped = sync.sync_connection(connection.pk)
    assert (stopped.state, stopped.saved) == ("failed", 50)
    connection.refresh_from_db()
    assert "page=2" in connection.cursor["acme/api"]["commits"]["next"]
    github.requests.clear()
    assert sync.sync_connection(connection.pk).saved == 70
    listings = [path for path in github.requests if path.split("?")[0].endswith("/commits")]
    assert "page=2" in listings[0]
    assert of_kind(connection, "commit").count() == 120
    github.add_commit("acme/api", sha(500), date="2026-12-01T09:00:00Z", files=["b.py"])
    github.requests.clear()
    assert sync.sync_connection(connection.pk).saved == 1
    asked = next(path for path in github.requests if path.split("?")[0].endswith("/commits"))
    assert "since=2026-10-13T00%3A00%3A00Z" in asked or "since=2026-10-13T00:00:00Z" in asked


def test_a_pull_request_keeps_its_files_merge_reviews_and_closed_issues(github, admin_actor):
    github.add_issue("acme/api", 12, updated="2026-11-01T10:00:00Z", title="Totals are off by a cent")
    github.add_pull(
        "acme/api",
        31,
        updated="2026-11-02T10:00:00Z",
        files=["src/total.py"],
        merged_sha=sha(7),
        body="Use banker's rounding.\n\nFixes #12 and closes acme/web#4.",
        reviews=[("sam", "APPROVED"), ("lee", "CHANGES_REQUESTED")],
    )
    connection = connect(admin_actor)
    sync.sync_connection(connection.pk)
    pull = of_kind(connection, "pull_request").get()
    assert pull.metadata["files"] == ["src/total.py"]
    assert pull.metadata["merge_commit_sha"] == sha(7)
    assert pull.metadata["closes"] == ["acme/api#12", "acme/web#4"]
    assert [(r["user"], r["state"]) for r in pull.metadata["reviews"]] == [
        ("sam", "APPROVED"),
        ("lee", "CHANGES_REQUESTED"),
    ]
    assert "sam approved on 2026-11-02" in pull.content
    assert f"Merged as {sha(7)}" in pull.content
    assert of_kind(connection, "issue").get().metadata["number"] == 12


def test_releases_skip_drafts_and_stop_at_what_was_read(github, admin_actor):
    for n in range(1, 61):
        github.add_release("acme/api", n, tag=f"v1.{n}", created=f"2026-09-{1 + n // 3:02d}T{n % 3:02d}:00:00Z")
    github.add_release("acme/api", 99, tag="v2.0", created="2026-10-30T00:00:00Z", draft=True)
    connection = connect(admin_actor)
    assert sync.sync_connection(connection.pk).saved == 60
    release = of_kind(connection, "release").get(metadata__tag="v1.60")
    assert release.title == "Release acme/api v1.60: Version v1.60"
    assert release.source_url == "https://github.example/acme/api/releases/tag/v1.60"
    github.add_release("acme/api", 61, tag="v1.61", created="2026-11-01T00:00:00Z")
    github.requests.clear()
    assert sync.sync_connection(connection.pk).saved == 1
    assert [p for p in github.requests if "/releases" in p] == ["/repos/acme/api/releases?per_page=50"]


def test_deployments_keep_their_latest_state_and_one_under_way_is_read_again(github, admin_actor):
    now = datetime.now(UTC)
    stamp = (now - timedelta(hours=2)).strftime("%Y-%m-%dT%H:%M:%SZ")
    github.add_deployment("acme/api", 1, sha=sha(1), created="2026-10-01T09:00:00Z", states=["pending", "success"])
    github.add_deployment("acme/api", 2, sha=sha(2), created=stamp, states=["in_progress"])
    connection = connect(admin_actor)
    assert sync.sync_connection(connection.pk).saved == 2
    done = of_kind(connection, "deployment").get(metadata__sha=sha(1))
    assert (done.metadata["state"], done.metadata["environment"]) == ("success", "production")
    assert done.source_url == "https://ci.example/deploys/1"
    assert done.occurred_at == datetime(2026, 10, 1, 9, tzinfo=UTC)
    connection.refresh_from_db()
    assert connection.cursor["acme/api"]["deployments"] == {"since": stamp}  # held at the one under way
    github.add_deployment("acme/api", 2, sha=sha(2), created=stamp, states=["in_progress", "failure"])
    assert sync.sync_connection(connection.pk).saved == 1
    assert of_kind(connection, "deployment").filter(metadata__sha=sha(2)).latest("pk").metadata["state"] == "failure"
    assert sync.sync_connection(connection.pk).saved == 0


def test_a_token_without_contents_access_still_brings_issues(github, admin_actor):
    github.add_issue("acme/api", 1, updated="2026-11-02T10:00:00Z")
    github.add_commit("acme/api", sha(1), date="2026-10-01T09:00:00Z", files=["a.py"])
    github.forbidden = {"commits", "releases"}
    connection = connect(admin_actor)
    outcome = sync.sync_connection(connection.pk)
    assert (outcome.state, outcome.saved) == ("synced", 1)
    connection.refresh_from_db()
    assert connection.cursor["acme/api"]["commits"] == {"unreadable": "HTTP 403"}
    github.forbidden = set()
    assert sync.sync_connection(connection.pk).saved == 1  # given the access, the commits come in


def test_closing_references_follow_githubs_keywords():
    text = "Fixes #12. closes acme/web#4, Resolved: #7; fixes https://github.com/acme/ops/issues/9 (not #8)"
    assert closing_refs(text, "acme/api") == ["acme/api#12", "acme/web#4", "acme/api#7", "acme/ops#9"]
    assert closing_refs("prefix #3 and fixesnothing #4", "acme/api") == []


def test_long_path_lists_are_cut_to_fit_the_metadata():
    kept, cut = capped([f"src/module_{n:05d}/file.py" for n in range(2000)])
    assert cut
    assert sum(len(p) + 4 for p in kept) <= 8000
