"""The github_* tools against the GitHub stand-in: offered only with a connection, reaching only
the repositories whose category the caller reads, and github_comment (an ACTION) only once an
admin granted it, never for read-only or personal-only connections or for unattended jobs, and
always in the audit log."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import Group

from brain.mcp.invoke import execute
from brain.mcp.registry import TOOLS, visible_tools
from brain.models import AuditRecord, Category, Organisation
from conftest import make_actor, make_org, make_user
from connectors import grants, sync
from connectors.tests.github_server import github_server
from jobs.grants import grantable_tools

pytestmark = pytest.mark.django_db
READERS = ("github_search_pull_requests", "github_search_issues", "github_get_issue")


@pytest.fixture
def github(settings):
    with github_server() as fake:
        settings.BRAIN_GITHUB_API_URL = fake.base
        fake.add_issue("acme/api", 1, updated="2026-11-02T10:00:00Z", body="The login page fails on Safari")
        fake.add_issue(
            "acme/api",
            2,
            updated="2026-11-03T10:00:00Z",
            pull=True,
            title="Fix the login page",
            body="Fixes #1",
            comments=1,
        )
        said = {"user": {"login": "sam"}, "created_at": "2026-11-03T11:00:00Z", "body": "Looks right"}
        fake.comments[("acme/api", 2)] = [{**said, "html_url": "https://github.example/c/1"}]
        files = [{"filename": "web/login.py"}, {"filename": "web/templates/login.html"}]
        fake.pulls[("acme/api", 2)] = {"files": files, "reviews": [], "merged_at": None, "merge_commit_sha": "0" * 40}
        fake.add_issue("acme/vault", 7, updated="2026-11-04T10:00:00Z", pull=True, title="Rotate the login keys")
        fake.private.add("acme/vault")
        yield fake


def fresh(actor):
    """The actor as its next request sees it (features are read per request)."""
    org = Organisation.objects.select_related("features").get(pk=actor.org.pk)
    return make_actor(org, actor.user, scopes=",".join(sorted(actor.scopes)))


@pytest.fixture
def world(github):
    org = make_org()
    admin = make_actor(org, make_user(org, role="admin"))
    vault_group = Group.objects.create(name=f"vault-{org.slug}")
    admin.user.groups.add(vault_group)
    vault = Category.objects.create(org=org, slug="vault", name="Vault", restricted=True)
    vault.groups.add(vault_group)
    general = Category.objects.get(org=org, slug=Category.DEFAULT_SLUG)
    api = sync.add_connection(
        actor=admin,
        kind="github",
        name="API",
        category=general,
        credentials={"token": "ghp_valid"},
        options={"repositories": "acme/api"},
    )
    sync.add_connection(
        actor=admin,
        kind="github",
        name="Vault",
        category=vault,
        credentials={"token": "ghp_valid"},
        options={"repositories": "acme/vault"},
    )
    member = make_actor(org)
    return {"org": org, "admin": fresh(admin), "member": fresh(member), "api": api, "vault_group": vault_group}


def call(actor, tool, **arguments):
    return execute(fresh(actor), TOOLS[tool], arguments)


def names(actor):
    org = Organisation.objects.select_related("features").get(pk=actor.org.pk)
    return {spec.name for spec in visible_tools(scopes=actor.scopes, features=org.features.enabled())}


def test_no_connection_no_github_tools(github):
    org = make_org()
    actor = make_actor(org, make_user(org, role="admin"))
    assert not names(actor) & {*READERS, "github_comment"}
    refused = call(actor, "github_search_issues", query="login")
    assert refused.code == "permission_denied"
    assert "needs a github connection" in refused.message
    assert "Connectors page" in refused.message


def test_search_reaches_only_what_the_caller_reads(world, github):
    member, admin = world["member"], world["admin"]
    assert set(READERS) <= names(member)
    found = call(member, "github_search_pull_requests", query="login")
    assert [(hit.repository, hit.number) for hit in found.output.results] == [("acme/api", 2)]
    assert found.output.repositories == ["acme/api"]
    # the admin is in the vault's group: both repositories, each through its own connection
    found = call(admin, "github_search_pull_requests", query="login")
    assert {(hit.repository, hit.number) for hit in found.output.results} == {("acme/api", 2), ("acme/vault", 7)}
    issues = call(admin, "github_search_issues", query="login", state="open")
    assert [hit.number for hit in issues.output.results] == [1]
    assert all("is:issue" in q and "is:open" in q for q in github.searches[-2:])


@pytest.mark.parametrize(
    "query",
    [
        "login repo:acme/vault",
        "login org:acme",
        "user:acme login",
        "login -repo:x/y",
        "login OR (repo:acme/vault)",
        "owner:acme",
        "login ORG : acme",
    ],
)
def test_a_query_cannot_widen_where_it_looks(world, github, query):
    refused = call(world["member"], "github_search_pull_requests", query=query)
    assert refused.code == "invalid_argument"
    assert "repository argument" in refused.message
    assert not github.searches


def test_a_repository_the_caller_does_not_read_is_unknown(world, github):
    member = world["member"]
    attempts: list[tuple[str, dict[str, Any]]] = [
        ("github_search_pull_requests", {"query": "keys", "repository": "acme/vault"}),
        ("github_get_issue", {"repository": "acme/vault", "number": 7}),
        ("github_get_issue", {"repository": "acme/nowhere", "number": 7}),
    ]
    for tool, arguments in attempts:
        refused = call(member, tool, **arguments)
        assert refused.code == "not_found", tool
        assert "acme/api" in refused.message
        assert "Rotate" not in refused.message
    world["member"].user.groups.add(world["vault_group"])
    assert call(member, "github_get_issue", repository="acme/vault", number=7).output.title == "Rotate the login keys"


def test_another_organisations_connection_is_never_used(world, github):
    stranger_org = make_org()
    stranger = make_actor(stranger_org, make_user(stranger_org, role="admin"))
    assert call(stranger, "github_get_issue", repository="acme/api", number=1).code == "permission_denied"


def test_get_issue_reads_a_pull_request_with_its_files_and_comments(world):
    got = call(world["member"], "github_get_issue", repository="ACME/api", number=2).output
    assert got.kind == "pull_request"
    assert got.repository == "acme/api"
    assert got.files == ["web/login.py", "web/templates/login.html"]
    assert [c.body for c in got.comment_list] == ["Looks right"]
    assert got.body == "Fixes #1"
    assert call(world["member"], "github_get_issue", repository="acme/api", number=99).code == "not_found"


def test_a_revoked_token_is_a_refusal_in_words(world, github):
    github.token = "ghp_other"
    refused = call(world["member"], "github_search_issues", query="login")
    assert refused.code == "permission_denied"
    assert "refused the token" in refused.message


def test_comment_is_an_action_off_until_granted(world, github):
    admin, member = world["admin"], world["member"]
    spec = TOOLS["github_comment"]
    assert spec.action
    assert spec.needs == ("connector:github", "grant:github_comment")
    assert "github_comment" not in names(member)
    refused = call(member, "github_comment", repository="acme/api", number=1, body="On it")
    assert refused.code == "permission_denied"
    assert "granted" in refused.message
    assert not github.posted

    grants.grant_tool(actor=admin, connection_id=world["api"].pk, tool="github_comment", granted=True)
    assert "github_comment" in names(member)
    made = call(member, "github_comment", repository="acme/api", number=1, body="On it")
    assert made.output is not None, made.message
    ((repo, number, body),) = github.posted
    assert (repo, number) == ("acme/api", 1)
    assert body.startswith("On it\n")
    assert member.user.username in body
    record = AuditRecord.objects.get(org=world["org"], action="tool.action")
    assert record.target == "github_comment"
    assert record.details["arguments"]["repository"] == "acme/api"
    assert record.details["outcome"] == "done"
    assert record.user == member.user

    # granted on the API connection only: the vault's repository stays closed to it
    admin_call = call(admin, "github_comment", repository="acme/vault", number=7, body="Done")
    assert admin_call.code == "permission_denied"
    assert "Vault" not in admin_call.message
    assert AuditRecord.objects.filter(org=world["org"], action="tool.action").count() == 2
    assert len(github.posted) == 1


@pytest.mark.parametrize("scopes", ["read", "read,write,personal"])
def test_comment_is_refused_to_read_only_and_personal_only_connections(world, github, scopes):
    grants.grant_tool(actor=world["admin"], connection_id=world["api"].pk, tool="github_comment", granted=True)
    actor = make_actor(world["org"], world["member"].user, scopes=scopes)
    assert "github_comment" not in names(actor)
    refused = call(actor, "github_comment", repository="acme/api", number=1, body="On it")
    assert refused.code == "permission_denied"
    assert not github.posted
    assert not AuditRecord.objects.filter(action="tool.action").exists()


def test_jobs_are_never_given_an_action(world):
    grants.grant_tool(actor=world["admin"], connection_id=world["api"].pk, tool="github_comment", granted=True)
    assert "github_comment" not in grantable_tools(fresh(world["admin"]))


def test_only_admins_grant_and_only_actions(world):
    member, admin, api = world["member"], world["admin"], world["api"]
    with pytest.raises(Exception, match="Only an admin"):
        grants.grant_tool(actor=member, connection_id=api.pk, tool="github_comment", granted=True)
    with pytest.raises(Exception, match="not an action"):
        grants.grant_tool(actor=admin, connection_id=api.pk, tool="github_search_issues", granted=True)
    grants.grant_tool(actor=admin, connection_id=api.pk, tool="github_comment", granted=True)
    grants.grant_tool(actor=admin, connection_id=api.pk, tool="github_comment", granted=False)
    assert "github_comment" not in names(member)
    assert list(
        AuditRecord.objects.filter(org=world["org"], action__startswith="connection.tool")
        .values_list("action", flat=True)
        .order_by("pk")
    ) == ["connection.tool_granted", "connection.tool_withdrawn"]


def test_removing_the_last_connection_takes_the_tools_away(world):
    admin = world["admin"]
    for connection in sync.connections_of(actor=admin):
        sync.remove_connection(actor=admin, connection_id=connection.pk, keep_documents=True)
    assert not names(world["member"]) & set(READERS)


def test_init_tells_an_assistant_how_to_use_actions_only_once_one_is_granted(world):
    from brain.core.services import mark_memory_built
    from brain.mcp_tools import ACTION_RULE

    mark_memory_built(org=world["org"])
    assert ACTION_RULE not in call(world["member"], "init").output.rules
    grants.grant_tool(actor=world["admin"], connection_id=world["api"].pk, tool="github_comment", granted=True)
    rules = call(world["member"], "init").output.rules
    assert ACTION_RULE in rules
    assert rules[-1] != ACTION_RULE  # the closing rule stays last
    assert ACTION_RULE not in call(make_actor(world["org"], world["member"].user, scopes="read"), "init").output.rules
