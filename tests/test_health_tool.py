"""The health tool over MCP: every token learns which part of Brain is down; only an operator's
token learns the versions of the parts and why one failed."""

from __future__ import annotations

import re

import pytest

import brain
from brain.core.services import mark_memory_built
from brain.models import Membership
from conftest import make_org, make_token, make_user
from tests.conftest import call

pytestmark = pytest.mark.django_db(transaction=True)

VERSIONS = re.compile(r"PostgreSQL \d|pgvector \d|Redis \d")


def test_a_member_or_an_org_admin_sees_which_parts_are_up_but_no_versions_or_failure_texts(brain_url):
    org = make_org()
    mark_memory_built(org=org)
    for role in (Membership.MEMBER, Membership.ADMIN):
        result = call(brain_url, make_token(org, user=make_user(org, role=role)).plaintext, "health")
        health = result.structured_content
        parts = {c["name"]: c for c in health["components"]}
        assert {"database", "redis", "queue"} <= set(parts)
        assert parts["database"]["ok"]
        assert parts["database"]["detail"] == "reachable"
        assert not parts["queue"]["ok"]  # no worker runs in this test
        assert parts["queue"]["detail"].startswith("not answering")
        assert "Celery" not in result.content[0].text
        assert not VERSIONS.search(result.content[0].text), result.content[0].text
        assert health["version"] == brain.__version__


def test_an_operator_sees_the_versions_and_why_a_part_failed(brain_url):
    org = make_org()
    operator = make_user(org, role=Membership.ADMIN, is_superuser=True, is_staff=True)  # type: ignore[arg-type]
    health = call(brain_url, make_token(org, user=operator).plaintext, "health").structured_content
    parts = {c["name"]: c for c in health["components"]}
    assert parts["database"]["detail"].startswith("PostgreSQL ")
    assert "pgvector" in parts["database"]["detail"]
    assert parts["redis"]["detail"].startswith("Redis ")
    assert "no Celery worker answered" in parts["queue"]["detail"]
