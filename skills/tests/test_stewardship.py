"""A skill's steward and review: set by an admin, verified in one click by its steward, stale in the
steward's Needs-you only while they may use the skill, and counted on the overview."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from brain.core.errors import PermissionDenied
from brain.core.needs import list_waiting_work
from brain.core.reviews import today
from brain.models import AuditRecord, Membership
from brain.tests.admin_client import logged_in
from conftest import make_actor, make_user
from skills.models import Skill
from skills.selectors import skill_review_counts
from skills.services import approve_version, publish_skill, set_skill_review, verify_skill

pytestmark = pytest.mark.django_db


@pytest.fixture
def skill(actor):
    admin = make_actor(actor.org, make_user(actor.org, role=Membership.ADMIN))
    version = publish_skill(actor=actor, slug="deploy-guide", name="Deploy guide", content="Deploy on Tuesdays.")
    approve_version(actor=admin, version_id=version.pk)
    return admin, Skill.objects.get(pk=version.skill_id)


def _overdue(skill: Skill) -> None:
    Skill.objects.filter(pk=skill.pk).update(review_due_on=today(skill.org) - timedelta(days=3))


def test_an_admin_names_the_steward_who_verifies_it_in_one_click(actor, skill):
    admin, found = skill
    with pytest.raises(PermissionDenied):
        set_skill_review(actor=actor, skill_id=found.pk, steward_id=actor.user.pk, review_every_days=30)
    set_skill_review(actor=admin, skill_id=found.pk, steward_id=actor.user.pk, review_every_days=30)
    _overdue(found)
    assert [w.words for w in list_waiting_work(user=actor.user)] == ["1 skill past its review date"]
    assert skill_review_counts(org=actor.org) == (1, 0, 1)

    verified = verify_skill(actor=actor, skill_id=found.pk)

    assert verified.review_due_on == today(actor.org) + timedelta(days=30)
    assert list_waiting_work(user=actor.user) == []
    assert AuditRecord.objects.filter(action="skill.verified", target="skill deploy-guide").exists()
    with pytest.raises(PermissionDenied):
        verify_skill(actor=make_actor(actor.org, make_user(actor.org)), skill_id=found.pk)


def test_the_skill_page_shows_the_stale_mark_and_still_correct_clears_it(actor, skill):
    admin, found = skill
    set_skill_review(actor=admin, skill_id=found.pk, steward_id=actor.user.pk, review_every_days=30)
    _overdue(found)
    client = logged_in(actor.user)
    page = client.get("/skills/deploy-guide/").content.decode()
    assert "Stale: review was due on" in page
    assert "Still correct" in page
    client.post("/skills/deploy-guide/verify/")
    page = client.get("/skills/deploy-guide/").content.decode()
    assert "Stale:" not in page
    assert client.get("/skills/no-such-skill/").status_code == 404


def test_an_archived_skill_waits_for_nobody(actor, skill):
    admin, found = skill
    set_skill_review(actor=admin, skill_id=found.pk, steward_id=actor.user.pk, review_every_days=30)
    _overdue(found)
    Skill.objects.filter(pk=found.pk).update(archived_at=timezone.now())
    assert list_waiting_work(user=actor.user) == []
