import re
from datetime import timedelta

import pytest
from django.utils import timezone

from brain.core.errors import InvalidArgument
from brain.core.selectors import get_profile
from brain.core.services import (
    bootstrap,
    create_organisation,
    purge_expired_reports,
    report_issue,
    resolve_activity,
    send_feedback,
    start_activity,
)
from brain.models import Category, Features, Report
from conftest import make_actor, make_org

pytestmark = pytest.mark.django_db


def test_a_new_organisation_has_the_general_category_and_all_features_off():
    org = create_organisation(slug="initech", name="Initech")
    assert list(Category.objects.filter(org=org).values_list("slug", flat=True)) == ["general"]
    assert Features.objects.get(org=org).enabled() == set()


def test_it_refuses_a_duplicate_slug():
    create_organisation(slug="initech", name="Initech")
    with pytest.raises(InvalidArgument):
        create_organisation(slug="initech", name="Other")


def test_bootstrap_is_idempotent_and_prints_secrets_only_the_first_time():
    first = bootstrap(org_slug="acme", org_name="Acme", admin_username="admin", admin_email="a@example.com")
    again = bootstrap(org_slug="acme", org_name="Acme", admin_username="admin", admin_email="a@example.com")
    assert first.admin_password
    assert first.token
    assert again.admin_password is None
    assert again.token is None
    assert first.org.pk == again.org.pk
    assert first.admin.is_superuser


def test_profile_ids_are_opaque_and_stable_per_organisation(actor):
    profile = get_profile(actor=actor)
    assert profile.profile_id == get_profile(actor=actor).profile_id
    assert re.fullmatch(r"prf_[0-9a-f]{32}", profile.profile_id)
    other = make_org()
    from brain.core.services import add_member

    add_member(org=other, user=actor.user)
    assert get_profile(actor=make_actor(other, actor.user)).profile_id != profile.profile_id


def test_activities_resolve_only_inside_their_organisation(actor, other_org_actor):
    activity = start_activity(actor=actor, label="pricing question")
    assert resolve_activity(actor=actor, activity_id=activity.public_id) == activity
    assert resolve_activity(actor=other_org_actor, activity_id=activity.public_id) is None


def test_another_members_activity_is_unknown(actor):
    activity = start_activity(actor=actor, label="pricing question")
    assert resolve_activity(actor=make_actor(actor.org), activity_id=activity.public_id) is None


def test_reports_keep_who_and_which_activity_and_expire(actor):
    activity = start_activity(actor=actor)
    report = report_issue(
        actor=actor, category="tool_error", observed="x", expected="y", activity_id=activity.public_id
    )
    assert report.activity == activity
    assert report.user == actor.user
    assert report.release
    assert report.expires_at > timezone.now() + timedelta(days=80)


def test_a_report_with_an_unknown_activity_is_still_saved(actor):
    report = send_feedback(actor=actor, summary="More sources please", origin="user", activity_id="act_nope")
    assert report.activity is None
    assert report.activity_ref == "act_nope"


def test_it_refuses_unknown_categories_and_origins(actor):
    with pytest.raises(InvalidArgument):
        report_issue(actor=actor, category="bad_vibes", observed="x", expected="y")
    with pytest.raises(InvalidArgument):
        send_feedback(actor=actor, summary="s", origin="robot")


def test_purge_removes_only_expired_reports(actor):
    old = send_feedback(actor=actor, summary="old", origin="user")
    Report.objects.filter(pk=old.pk).update(expires_at=timezone.now() - timedelta(days=1))
    fresh = send_feedback(actor=actor, summary="fresh", origin="agent")
    assert purge_expired_reports() == 1
    assert list(Report.objects.values_list("pk", flat=True)) == [fresh.pk]


def test_the_purge_task_runs_twice_safely(actor):
    from brain.tasks import purge_expired_reports_task

    old = send_feedback(actor=actor, summary="old", origin="user")
    Report.objects.filter(pk=old.pk).update(expires_at=timezone.now() - timedelta(days=1))
    assert purge_expired_reports_task() == 1
    assert purge_expired_reports_task() == 0
