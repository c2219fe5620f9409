"""The skill tools through a real MCP client: publish for review, load what is approved, list in init."""

from __future__ import annotations

import pytest

from brain.core.services import mark_memory_built
from brain.models import Membership
from conftest import make_actor, make_org, make_token, make_user
from skills.models import SkillVersion
from skills.services import approve_version, publish_skill
from tests.conftest import call, run_mcp

pytestmark = pytest.mark.django_db(transaction=True)

GUIDE = {"slug": "Deploy-Guide", "name": "Deploy guide", "content": "1. Build.\n2. Ship.", "description": "Ship code."}


@pytest.fixture
def org():
    org = make_org()
    mark_memory_built(org=org)
    return org


def approved(org, slug="deploy-guide", **kw):
    author = make_actor(org)
    fields = {"name": "Deploy guide", "content": "1. Build.\n2. Ship.", "description": "Ship code.", **kw}
    version = publish_skill(actor=author, slug=slug, **fields)
    admin = make_actor(org, make_user(org, role=Membership.ADMIN))
    return approve_version(actor=admin, version_id=version.pk)


def tools(url, token):
    return {tool.name: tool for tool in run_mcp(url, token, lambda s: s.list_tools()).tools}


def test_a_write_token_publishes_a_skill_that_waits_for_review(brain_url, org):
    token = make_token(org, scopes="read,write")
    result = call(brain_url, token.plaintext, "skills_publish", {**GUIDE, "tags": ["ops"], "categories": []})
    assert not result.is_error, result.content[0].text
    out = result.structured_content
    assert out["slug"] == "deploy-guide"
    assert out["status"] == "pending"
    assert out["version"] == "1.0.0"
    assert out["version_in_use"] is None
    assert "admin" in out["message"]
    version = SkillVersion.objects.get(skill__org=org)
    assert version.status == "pending"
    assert version.submitted_by == token.token.user
    assert [c.slug for c in version.categories.all()] == ["general"]


def test_publishing_over_an_approved_skill_says_the_approved_version_stays_in_use(brain_url, org):
    approved(org)
    token = make_token(org)
    out = call(brain_url, token.plaintext, "skills_publish", {**GUIDE, "version": "1.1.0"}).structured_content
    assert out["status"] == "pending"
    assert out["version_in_use"] == "1.0.0"
    assert "1.0.0 stays in use" in out["message"]
    got = call(brain_url, token.plaintext, "skills_get", {"slug": "deploy-guide"}).structured_content
    assert got["version"] == "1.0.0"


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({**GUIDE, "name": "n" * 241}, "'name' has 241 characters; the limit is 240"),
        ({**GUIDE, "content": "c" * 200_001}, "'content' has 200001 characters; the limit is 200000"),
        ({**GUIDE, "description": "d" * 2_001}, "'description' has 2001 characters"),
        ({**GUIDE, "version": "v" * 81}, "'version' has 81 characters"),
        ({**GUIDE, "slug": "s" * 121}, "'slug' has 121 characters"),
        ({**GUIDE, "slug": "deploy guide"}, "slug 'deploy guide' is not valid"),
        ({**GUIDE, "categories": ["nowhere"]}, "Unknown category: nowhere"),
        ({"slug": "deploy-guide", "name": "Deploy guide"}, "'content' is required"),
        ({**GUIDE, "owner": "ops"}, "'owner' is not an argument of skills_publish"),
    ],
)
def test_refusals_come_back_as_errors_that_name_the_field(brain_url, org, arguments, expected):
    result = call(brain_url, make_token(org).plaintext, "skills_publish", arguments)
    assert result.is_error
    assert expected in result.content[0].text
    assert not SkillVersion.objects.exists()


def test_a_read_token_does_not_see_skills_publish(brain_url, org):
    read = make_token(org, scopes="read")
    visible = tools(brain_url, read.plaintext)
    assert "skills_get" in visible
    assert "skills_publish" not in visible
    refused = call(brain_url, read.plaintext, "skills_publish", GUIDE)
    assert refused.is_error
    assert not SkillVersion.objects.exists()


def test_the_tools_carry_their_titles_and_marks(brain_url, org):
    visible = tools(brain_url, make_token(org).plaintext)
    get, publish = visible["skills_get"], visible["skills_publish"]
    assert get.title == "Get Company Skill"
    assert get.annotations.read_only_hint
    assert not get.annotations.destructive_hint
    assert publish.title == "Publish Company Skill"
    assert not publish.annotations.read_only_hint
    assert publish.annotations.destructive_hint
    assert publish.input_schema["required"] == ["slug", "name", "content"]
    assert publish.input_schema["properties"]["name"]["maxLength"] == 240


def test_skills_get_returns_the_approved_skill(brain_url, org):
    approved(org, tags=["ops"], assets=[{"name": "checklist.md"}], metadata={"team": "platform"})
    result = call(brain_url, make_token(org, scopes="read").plaintext, "skills_get", {"slug": "deploy-guide"})
    assert not result.is_error, result.content[0].text
    assert result.structured_content == {
        "slug": "deploy-guide",
        "name": "Deploy guide",
        "description": "Ship code.",
        "version": "1.0.0",
        "categories": ["general"],
        "tags": ["ops"],
        "content": "1. Build.\n2. Ship.",
        "assets": [{"name": "checklist.md"}],
        "scripts": [],
        "metadata": {"team": "platform"},
    }
    assert "1. Build." in result.content[0].text


def test_init_lists_the_usable_skills_with_their_count(brain_url, org):
    approved(org, "deploy-guide")
    approved(org, "incident-review", name="Incident review", description="")
    result = call(brain_url, make_token(org, scopes="read").plaintext, "init")
    out = result.structured_content
    assert out["total_count"] == 2
    assert out["skills"] == [
        {
            "slug": "deploy-guide",
            "name": "Deploy guide",
            "description": "Ship code.",
            "categories": ["general"],
            "version": "1.0.0",
            "status": "approved",
        },
        {
            "slug": "incident-review",
            "name": "Incident review",
            "description": None,
            "categories": ["general"],
            "version": "1.0.0",
            "status": "approved",
        },
    ]
    assert "- deploy-guide: Deploy guide - Ship code." in result.content[0].text


def test_a_pending_only_skill_is_neither_listed_nor_gettable(brain_url, org):
    token = make_token(org)
    assert not call(brain_url, token.plaintext, "skills_publish", GUIDE).is_error
    init = call(brain_url, token.plaintext, "init").structured_content
    assert init["skills"] == []
    assert init["total_count"] == 0
    missing = call(brain_url, token.plaintext, "skills_get", {"slug": "deploy-guide"})
    assert missing.is_error
    assert "init" in missing.content[0].text


def test_another_organisations_skills_stay_invisible(brain_url, org):
    approved(org)
    elsewhere = make_org()
    mark_memory_built(org=elsewhere)
    token = make_token(elsewhere)
    assert call(brain_url, token.plaintext, "init").structured_content["total_count"] == 0
    assert call(brain_url, token.plaintext, "skills_get", {"slug": "deploy-guide"}).is_error
