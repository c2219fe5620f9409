"""The review page of a skill version in the admin: every field compared, the content rendered as
markdown (raw HTML off), and archiving asked about before it is done."""

from __future__ import annotations

import pytest

from brain.models import Category
from brain.tests.admin_client import logged_in, make_org_admin
from conftest import make_actor
from skills.diff import content_diff, field_changes
from skills.models import Skill, SkillVersion
from skills.tests.factories import publish, published_and_approved

pytestmark = pytest.mark.django_db


@pytest.fixture
def versions(org):
    Category.objects.create(org=org, slug="ops", name="Operations")
    Category.objects.create(org=org, slug="sales", name="Sales")
    author = make_actor(org)
    in_use = published_and_approved(
        author,
        name="Deploy guide",
        description="How we ship the web app.",
        tags=["deploy", "web"],
        categories=["general", "ops"],
    )
    pending = publish(
        author,
        name="Deploy and release guide",
        description="How we ship the web and mobile apps.",
        tags=["deploy", "mobile"],
        categories=["ops", "sales"],
        version="2.0.0",
        content="# Deploy\n\nRun `make ship`.\n\n<script>alert(1)</script>\n",
    )
    return in_use, pending


def test_every_field_is_compared_with_the_version_in_use(versions):
    in_use, pending = versions
    fields = {f.label: f for f in field_changes(pending, in_use)}

    assert set(fields) == {"Name", "Description", "Tags", "Categories"}
    assert all(f.changed for f in fields.values())
    assert fields["Name"].before == "Deploy guide"
    assert fields["Name"].after == 'Deploy <ins class="diff_add">and release </ins>guide'
    assert '<ins class="diff_add">mobile</ins>' in fields["Tags"].after
    assert '<del class="diff_sub">web</del>' in fields["Tags"].before
    assert fields["Categories"].before == '<del class="diff_sub">general</del>, ops'
    assert fields["Categories"].after == 'ops, <ins class="diff_add">sales</ins>'


def test_words_removed_and_added_are_marked_in_the_name_and_description(versions):
    in_use, pending = versions
    description = next(f for f in field_changes(pending, in_use) if f.label == "Description")
    assert '<del class="diff_sub">app.</del>' in description.before
    assert '<ins class="diff_add">' in description.after
    assert "mobile" in description.after.split('<ins class="diff_add">', 1)[1]


def test_unchanged_fields_say_so_and_nothing_is_marked(org):
    author = make_actor(org)
    in_use = published_and_approved(author, tags=["b", "a"])
    pending = publish(author, tags=["a", "b"], content="Other content.\n", version="1.1.0")
    fields = field_changes(pending, in_use)
    assert not any(f.changed for f in fields)
    assert not any("<ins" in f.after or "<del" in f.before for f in fields)


def test_a_first_version_is_compared_with_nothing(org):
    pending = publish(make_actor(org), tags=["x<y"])
    tags = next(f for f in field_changes(pending, None) if f.label == "Tags")
    assert tags.before == '<span class="skill-none">(none)</span>'
    assert tags.after == '<ins class="diff_add">x&lt;y</ins>'


def test_the_content_comparison_wraps_instead_of_widening_the_page(org):
    author = make_actor(org)
    in_use = published_and_approved(author, content="short line\n")
    pending = publish(author, content="    " + "a long line " * 40 + "\n", version="1.1.0")
    table = content_diff(pending, in_use)
    assert "nowrap" not in table
    assert "&nbsp;" not in table


def test_the_review_page_shows_the_fields_and_a_rendered_preview_without_raw_html(org, versions):
    _, pending = versions
    html = logged_in(make_org_admin(org)).get(f"/admin/skills/skillversion/{pending.pk}/change/").content.decode()

    fields = html.split('<table class="skill-fields"')[1].split("</table>")[0]
    for label in ("Name", "Description", "Tags", "Categories"):
        assert f'<th scope="row">{label}</th>' in fields
    preview = html.split('class="skill-preview"')[1].split("</div>")[0]
    assert "<h1>Deploy</h1>" in preview
    assert "<code>make ship</code>" in preview
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in preview
    assert "<script>alert(1)" not in html


def test_archiving_from_a_version_asks_first_and_archives_only_when_confirmed(org, versions):
    _, pending = versions
    client = logged_in(make_org_admin(org))
    url = f"/admin/skills/skillversion/{pending.pk}/archive-skill/"

    asked = client.get(url)
    posted_without_confirming = client.post(url)

    for page in (asked, posted_without_confirming):
        assert page.status_code == 200
        assert "Archiving takes this skill out of use for everyone" in page.content.decode()
    assert Skill.objects.get(pk=pending.skill_id).archived_at is None
    done = client.post(url, {"post": "yes"}, follow=True)
    assert "archived: nobody can use it now" in done.content.decode()
    assert Skill.objects.get(pk=pending.skill_id).archived_at is not None


@pytest.mark.parametrize(
    ("changelist", "action", "selected"),
    [
        ("/admin/skills/skillversion/", "archive_selected_skills", lambda v: v.pk),
        ("/admin/skills/skill/", "archive_selected", lambda v: v.skill_id),
    ],
)
def test_the_archive_actions_ask_first(org, versions, changelist, action, selected):
    _, pending = versions
    client = logged_in(make_org_admin(org))
    form = {"action": action, "_selected_action": [selected(pending)]}

    asked = client.post(changelist, form)

    assert asked.status_code == 200
    assert "Skill to archive" in asked.content.decode()
    assert f'<input type="hidden" name="action" value="{action}">' in asked.content.decode()
    assert Skill.objects.get(pk=pending.skill_id).archived_at is None
    client.post(changelist, {**form, "post": "yes"})
    assert Skill.objects.get(pk=pending.skill_id).archived_at is not None
    assert SkillVersion.objects.get(pk=pending.pk).status == SkillVersion.Status.ARCHIVED


def test_without_a_mail_server_the_reviewer_is_told_the_author_was_not_emailed(org, versions, settings, mailoutbox):
    _, pending = versions
    settings.EMAIL_BACKEND, settings.EMAIL_HOST = "django.core.mail.backends.smtp.EmailBackend", ""
    client = logged_in(make_org_admin(org))
    done = client.post(f"/admin/skills/skillversion/{pending.pk}/approve/", follow=True)
    assert "No mail server is set up, so its author was not emailed: tell them yourself." in done.content.decode()
    assert mailoutbox == []
