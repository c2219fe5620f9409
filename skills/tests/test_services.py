"""Publishing and reviewing skills, and who may use them, on the real database."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group

from brain.core.errors import InvalidArgument, NotFound, PermissionDenied
from brain.models import AuditRecord, Category, Membership
from conftest import make_actor, make_user
from skills import services
from skills.models import Skill, SkillVersion
from skills.selectors import get_skill, usable_skills
from skills.services import approve_version, archive_skill, publish_skill, reject_version
from skills.tests.factories import admin_of, publish, published_and_approved

pytestmark = pytest.mark.django_db

Status = SkillVersion.Status


def restricted_category(org, slug="finance"):
    group = Group.objects.create(name=f"{org.slug}-{slug}")
    category = Category.objects.create(org=org, slug=slug, name=slug.title(), restricted=True)
    category.groups.add(group)
    return category, group


# --- slugs and limits ---------------------------------------------------------------------


def test_it_lowercases_the_slug(actor):
    assert publish(actor, "Deploy-Guide").skill.slug == "deploy-guide"
    assert Skill.objects.get(org=actor.org).slug == "deploy-guide"


def test_a_mixed_case_slug_reaches_the_same_skill(actor):
    first = publish(actor, "deploy-guide")
    second = publish(actor, "DEPLOY-guide", version="1.1.0")
    assert first.skill_id == second.skill_id
    assert Skill.objects.filter(org=actor.org).count() == 1


@pytest.mark.parametrize("slug", ["-deploy", "deploy guide", "deploy_guide", "déploy", "deploy/guide", ""])
def test_it_refuses_slugs_outside_the_rules(actor, slug):
    with pytest.raises(InvalidArgument, match="slug") as refused:
        publish(actor, slug)
    assert refused.value.details == {"field": "slug"}
    assert not Skill.objects.exists()


def test_a_slug_may_have_120_characters_but_not_121(actor):
    assert publish(actor, "a" * 120).skill.slug == "a" * 120
    with pytest.raises(InvalidArgument, match="limit is 120"):
        publish(actor, "b" * 121)


def test_a_slug_may_start_with_a_digit(actor):
    assert publish(actor, "9-steps").skill.slug == "9-steps"


@pytest.mark.parametrize(
    ("field", "limit"), [("name", 240), ("content", 200_000), ("description", 2_000), ("version", 80)]
)
def test_texts_at_their_limit_pass_and_one_character_more_is_refused(actor, field, limit):
    assert getattr(publish(actor, **{field: "x" * limit}), field) == "x" * limit
    with pytest.raises(InvalidArgument, match=f"limit is {limit:,}") as refused:
        publish(actor, **{field: "x" * (limit + 1)})
    assert refused.value.details == {"field": field}
    assert SkillVersion.objects.count() == 1


@pytest.mark.parametrize("field", ["name", "content", "version"])
def test_required_texts_may_not_be_blank(actor, field):
    with pytest.raises(InvalidArgument, match=f"{field} needs some text"):
        publish(actor, **{field: "  "})


def test_tags_are_trimmed_and_kept_once_and_too_many_are_refused(actor):
    assert publish(actor, tags=[" ops ", "ops", "", "deploy"]).tags == ["ops", "deploy"]
    with pytest.raises(InvalidArgument, match="at most 50 tags"):
        publish(actor, tags=[f"t{n}" for n in range(51)])


def test_assets_scripts_and_metadata_are_kept_and_oversized_ones_refused(actor):
    version = publish(actor, assets=[{"name": "checklist.md"}], scripts=[{"run": "make"}], metadata={"owner": "ops"})
    version.refresh_from_db()
    assert (version.assets, version.scripts, version.metadata) == ([{"name": "checklist.md"}], [{"run": "make"}],
                                                                  {"owner": "ops"})  # fmt: skip
    with pytest.raises(InvalidArgument, match="scripts is too large"):
        publish(actor, scripts=[{"body": "x" * services.JSON_MAX}])


# --- categories ---------------------------------------------------------------------------


def test_without_categories_the_default_category_applies(actor):
    version = publish(actor)
    assert [c.slug for c in version.categories.all()] == [Category.DEFAULT_SLUG]


def test_it_refuses_an_unknown_category_and_names_it(actor):
    with pytest.raises(InvalidArgument, match="Unknown category: nowhere") as refused:
        publish(actor, categories=["general", "nowhere"])
    assert refused.value.details == {"field": "categories"}
    assert not SkillVersion.objects.exists()


def test_another_organisations_category_is_only_unknown(actor, other_org):
    restricted_category(other_org, "board")
    with pytest.raises(InvalidArgument, match="Unknown category: board"):
        publish(actor, categories=["board"])


def test_it_refuses_a_category_the_actor_cannot_read_as_if_it_did_not_exist(actor):
    restricted_category(actor.org, "finance")
    with pytest.raises(InvalidArgument) as hidden:
        publish(actor, categories=["finance"])
    with pytest.raises(InvalidArgument) as missing:
        publish(actor, categories=["nowhere"])
    assert hidden.value.message.replace("finance", "X") == missing.value.message.replace("nowhere", "X")


def test_a_member_of_the_category_group_may_publish_into_it(actor):
    category, group = restricted_category(actor.org, "finance")
    actor.user.groups.add(group)
    assert list(publish(actor, categories=["finance"]).categories.all()) == [category]


# --- who may publish ----------------------------------------------------------------------


def test_publishing_needs_the_write_scope(org):
    reader = make_actor(org, scopes="read")
    with pytest.raises(PermissionDenied, match="write scope"):
        publish(reader)
    assert not Skill.objects.exists()


def test_a_personal_only_connection_cannot_publish_shared_skills(org):
    with pytest.raises(PermissionDenied, match="personal"):
        publish(make_actor(org, scopes="read,write,personal"))


# --- review -------------------------------------------------------------------------------


def test_a_new_version_arrives_pending_and_nobody_can_use_it(actor):
    version = publish_skill(actor=actor, slug="deploy-guide", name="Deploy guide", content="Build, then ship.")
    assert version.status == Status.PENDING
    assert version.version == "1.0.0"
    assert version.submitted_by == actor.user
    assert version.skill.current_version is None
    assert list(usable_skills(actor=actor)) == []
    with pytest.raises(NotFound):
        get_skill(actor=actor, slug="deploy-guide")


def test_approving_makes_it_the_version_in_use(actor):
    version = publish(actor)
    admin = admin_of(actor.org)
    approve_version(actor=admin, version_id=version.pk)
    version.refresh_from_db()
    assert version.status == Status.APPROVED
    assert version.reviewed_by == admin.user
    assert version.reviewed_at
    assert get_skill(actor=actor, slug="deploy-guide").pk == version.pk
    assert [s.slug for s in usable_skills(actor=actor)] == ["deploy-guide"]


def test_the_approved_version_stays_in_use_until_the_new_one_is_approved(actor):
    first = published_and_approved(actor)
    second = publish(actor, version="1.1.0", content="Step 1: build.\nStep 2: test.\nStep 3: ship.\n")
    assert second.status == Status.PENDING
    assert get_skill(actor=actor, slug="deploy-guide").pk == first.pk

    approve_version(actor=admin_of(actor.org), version_id=second.pk)
    assert get_skill(actor=actor, slug="deploy-guide").pk == second.pk
    first.refresh_from_db()
    assert first.status == Status.APPROVED
    assert not first.is_current


def test_rejecting_needs_a_reason_and_keeps_the_version_in_use(actor):
    first = published_and_approved(actor)
    second = publish(actor, version="2.0.0")
    admin = admin_of(actor.org)
    with pytest.raises(InvalidArgument, match="reason needs some text"):
        reject_version(actor=admin, version_id=second.pk, reason="   ")
    reject_version(actor=admin, version_id=second.pk, reason="Step 2 skips the tests.")
    second.refresh_from_db()
    assert second.status == Status.REJECTED
    assert second.review_note == "Step 2 skips the tests."
    assert get_skill(actor=actor, slug="deploy-guide").pk == first.pk


def test_only_a_pending_version_can_be_decided(actor):
    version = publish(actor)
    admin = admin_of(actor.org)
    reject_version(actor=admin, version_id=version.pk, reason="Not yet.")
    with pytest.raises(InvalidArgument, match="this one is rejected"):
        approve_version(actor=admin, version_id=version.pk)
    with pytest.raises(InvalidArgument, match="this one is rejected"):
        reject_version(actor=admin, version_id=version.pk, reason="Again.")


def test_approving_the_version_in_use_again_changes_nothing(actor):
    version = published_and_approved(actor)
    again = approve_version(actor=admin_of(actor.org), version_id=version.pk)
    assert again.pk == version.pk
    assert again.reviewed_at == version.reviewed_at


def test_a_member_who_is_not_an_admin_cannot_review(actor):
    version = publish(actor)
    for decide in (
        lambda: approve_version(actor=actor, version_id=version.pk),
        lambda: reject_version(actor=actor, version_id=version.pk, reason="No."),
        lambda: archive_skill(actor=actor, skill_id=version.skill_id),
    ):
        with pytest.raises(PermissionDenied, match="admin"):
            decide()
    version.refresh_from_db()
    assert version.status == Status.PENDING


def test_an_admin_of_another_organisation_finds_nothing_to_review(actor, other_org):
    version = publish(actor)
    stranger = admin_of(other_org)
    with pytest.raises(NotFound):
        approve_version(actor=stranger, version_id=version.pk)
    with pytest.raises(NotFound):
        archive_skill(actor=stranger, skill_id=version.skill_id)


def test_archiving_takes_the_skill_out_of_use_until_a_new_version_is_approved(actor):
    first = published_and_approved(actor)
    waiting = publish(actor, version="1.1.0")
    admin = admin_of(actor.org)
    archive_skill(actor=admin, skill_id=first.skill_id)
    archive_skill(actor=admin, skill_id=first.skill_id)  # safe to repeat
    assert list(usable_skills(actor=actor)) == []
    assert set(SkillVersion.objects.values_list("status", flat=True)) == {Status.ARCHIVED}
    assert waiting.pk not in SkillVersion.objects.filter(status=Status.PENDING).values_list("pk", flat=True)

    revived = publish(actor, version="2.0.0")
    approve_version(actor=admin, version_id=revived.pk)
    assert get_skill(actor=actor, slug="deploy-guide").pk == revived.pk


# --- who may use a skill ------------------------------------------------------------------


def test_other_organisations_see_nothing(actor, other_org_actor):
    published_and_approved(actor)
    assert list(usable_skills(actor=other_org_actor)) == []
    with pytest.raises(NotFound):
        get_skill(actor=other_org_actor, slug="deploy-guide")


def test_a_skill_in_a_category_the_reader_cannot_read_is_hidden(actor):
    _, group = restricted_category(actor.org, "finance")
    actor.user.groups.add(group)
    published_and_approved(actor, "close-the-books", categories=["finance"])
    outsider = make_actor(actor.org)
    assert [s.slug for s in usable_skills(actor=actor)] == ["close-the-books"]
    assert list(usable_skills(actor=outsider)) == []
    with pytest.raises(NotFound):
        get_skill(actor=outsider, slug="close-the-books")


def test_a_skill_listed_in_several_readable_categories_appears_once(actor):
    Category.objects.create(org=actor.org, slug="ops", name="Ops")
    published_and_approved(actor, categories=["general", "ops"])
    assert [s.slug for s in usable_skills(actor=actor)] == ["deploy-guide"]


def test_get_skill_accepts_the_slug_in_any_case(actor):
    version = published_and_approved(actor)
    assert get_skill(actor=actor, slug="Deploy-Guide").pk == version.pk


# --- telling the author -------------------------------------------------------------------


def test_the_author_is_emailed_once_the_approval_commits(actor, mailoutbox, django_capture_on_commit_callbacks):
    version = publish(actor)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        approve_version(actor=admin_of(actor.org), version_id=version.pk)
    assert mailoutbox == []
    assert len(callbacks) == 1
    callbacks[0]()
    [mail] = mailoutbox
    assert mail.to == [actor.user.email]
    assert "approved" in mail.subject
    assert "deploy-guide" in mail.body


def test_the_author_is_emailed_the_reason_for_a_rejection(actor, mailoutbox, django_capture_on_commit_callbacks):
    version = publish(actor)
    with django_capture_on_commit_callbacks(execute=True):
        reject_version(actor=admin_of(actor.org), version_id=version.pk, reason="Add a rollback step.")
    [mail] = mailoutbox
    assert mail.to == [actor.user.email]
    assert "not approved" in mail.subject
    assert "rejected" in mail.body
    assert "Reason: Add a rollback step." in mail.body


def test_a_refused_decision_sends_no_email(actor, mailoutbox, django_capture_on_commit_callbacks):
    version = publish(actor)
    with django_capture_on_commit_callbacks(execute=True), pytest.raises(PermissionDenied):
        approve_version(actor=actor, version_id=version.pk)
    assert mailoutbox == []


def test_a_mail_server_failure_does_not_raise(actor, monkeypatch, mailoutbox):
    version = publish(actor)
    reject_version(actor=admin_of(actor.org), version_id=version.pk, reason="No.")

    def broken(*args, **kwargs):
        raise ConnectionRefusedError("smtp is down")

    monkeypatch.setattr(services, "send_mail", broken)
    assert services.notify_submitter(version_id=version.pk) is False


def test_an_author_without_an_email_address_is_skipped(org, mailoutbox, django_capture_on_commit_callbacks):
    author = make_actor(org, make_user(org, role=Membership.MEMBER, email=""))
    version = publish(author)
    with django_capture_on_commit_callbacks(execute=True):
        approve_version(actor=admin_of(org), version_id=version.pk)
    assert mailoutbox == []


def test_decisions_on_skills_leave_audit_records(org):
    admin = make_actor(org, make_user(org, role="admin"))
    first = publish_skill(actor=make_actor(org), slug="triage", name="Triage", content="Steps")
    approve_version(actor=admin, version_id=first.pk)
    second = publish_skill(actor=make_actor(org), slug="triage", name="Triage", content="More", version="1.1.0")
    reject_version(actor=admin, version_id=second.pk, reason="Say why each step matters.")
    archive_skill(actor=admin, skill_id=first.skill_id)
    records = AuditRecord.objects.filter(org=org).order_by("pk").values_list("action", "target", "user")
    assert list(records) == [
        ("skill.approved", "skill triage 1.0.0", admin.user.pk),
        ("skill.rejected", "skill triage 1.1.0", admin.user.pk),
        ("skill.archived", "skill triage", admin.user.pk),
    ]
