"""Reviewing a skill version in the admin, in a real browser: read the comparison, then approve."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from brain.models import Membership
from conftest import make_actor, make_org, make_user
from skills.models import Skill, SkillVersion
from skills.services import approve_version, publish_skill
from tests.browser import browser_page, log_in

pytestmark = pytest.mark.django_db(transaction=True)

PASSWORD = "a long enough secret"
IN_USE = "Build the release.\nRun the smoke tests.\nShip it.\nTell the team in the channel.\n"
PROPOSED = "Build the release.\nRun the smoke tests twice.\nShip it.\nWatch the dashboards for an hour.\n"


@pytest.fixture(autouse=True)
def orm_beside_playwright(monkeypatch):
    # Playwright's sync API keeps an event loop running in this thread; the ORM calls here are synchronous.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


def log_in_to_admin(page, base_url, username):
    # Brain's own login page; the session it opens is the admin's session too.
    log_in(page, base_url, username, PASSWORD)
    page.wait_for_url(f"{base_url}/connect/")
    page.goto(f"{base_url}/admin/")
    assert page.get_by_role("heading", name="Brain administration").is_visible()


def test_an_org_admin_reads_the_comparison_and_approves_the_pending_version(brain_url):
    org = make_org()
    reviewer = make_user(org, role=Membership.ADMIN, username="ada", password=PASSWORD)
    reviewer.is_staff = True  # an organisation admin, not an operator
    reviewer.save(update_fields=["is_staff"])
    author = make_actor(org)
    first = publish_skill(actor=author, slug="release", name="Release", content=IN_USE)
    approve_version(actor=make_actor(org, reviewer), version_id=first.pk)
    pending = publish_skill(actor=author, slug="release", name="Release", content=PROPOSED, version="1.1.0")

    with browser_page() as page:
        log_in_to_admin(page, brain_url, "ada")
        page.goto(f"{brain_url}/admin/skills/skillversion/")
        first_row = page.locator("#result_list tbody tr").first
        expect(first_row).to_contain_text("Pending review")  # the queue comes first
        first_row.get_by_role("link").first.click()
        page.wait_for_url(f"**/admin/skills/skillversion/{pending.pk}/change/")

        expect(page.get_by_role("heading", name="Review", exact=True)).to_be_visible()
        comparison = page.get_by_role("region", name="Changes against the version in use (1.0.0)")
        expect(comparison).to_be_visible()
        assert "In use: version 1.0.0" in comparison.inner_text()
        added = [" ".join(text.split()) for text in comparison.locator("ins.diff_add").all_inner_texts()]
        removed = [" ".join(text.split()) for text in comparison.locator("del.diff_sub").all_inner_texts()]
        assert "twice" in added  # the words added to a changed line
        assert "Watch the dashboards for an hour." in added
        assert "Tell the team in the channel." in removed
        assert "Build the release." not in added + removed  # unchanged lines are not marked

        page.get_by_role("button", name="Approve this version").click()
        expect(page.locator(".messagelist")).to_contain_text("now the version in use")
        expect(page.get_by_role("button", name="Approve this version")).to_have_count(0)

    skill = Skill.objects.get(org=org, slug="release")
    assert skill.current_version_id == pending.pk
    assert SkillVersion.objects.get(pk=pending.pk).reviewed_by == reviewer
    assert SkillVersion.objects.get(pk=first.pk).status == SkillVersion.Status.APPROVED  # history, no longer in use


def test_rejecting_asks_for_a_reason_on_its_own_page_and_keeps_the_version_in_use(brain_url):
    org = make_org()
    reviewer = make_user(org, role=Membership.ADMIN, username="bo", password=PASSWORD)
    reviewer.is_staff = True
    reviewer.save(update_fields=["is_staff"])
    author = make_actor(org)
    first = publish_skill(actor=author, slug="release", name="Release", content=IN_USE)
    approve_version(actor=make_actor(org, reviewer), version_id=first.pk)
    pending = publish_skill(actor=author, slug="release", name="Release", content=PROPOSED, version="1.1.0")

    with browser_page() as page:
        log_in_to_admin(page, brain_url, "bo")
        page.goto(f"{brain_url}/admin/skills/skillversion/{pending.pk}/change/")
        page.get_by_role("link", name="Reject with a reason…").click()
        page.get_by_role("button", name="Reject", exact=True).click()
        expect(page.get_by_role("alert")).to_be_visible()  # no reason, nothing rejected
        page.get_by_label("Reason for the author").fill("Keep the smoke tests as well.")
        page.get_by_role("button", name="Reject", exact=True).click()
        expect(page.locator(".messagelist")).to_contain_text("rejected")

    pending.refresh_from_db()
    assert pending.status == SkillVersion.Status.REJECTED
    assert pending.review_note == "Keep the smoke tests as well."
    assert Skill.objects.get(org=org).current_version_id == first.pk


def test_an_admin_of_another_organisation_cannot_open_the_version(brain_url):
    org = make_org()
    pending = publish_skill(actor=make_actor(org), slug="release", name="Release", content=PROPOSED)
    elsewhere = make_org()
    stranger = make_user(elsewhere, role=Membership.ADMIN, username="cy", password=PASSWORD)
    stranger.is_staff = True
    stranger.save(update_fields=["is_staff"])

    with browser_page() as page:
        log_in_to_admin(page, brain_url, "cy")
        page.goto(f"{brain_url}/admin/skills/skillversion/")
        assert "release" not in page.locator("#changelist").inner_text()
        page.goto(f"{brain_url}/admin/skills/skillversion/{pending.pk}/change/")
        assert PROPOSED.splitlines()[1] not in page.content()
        csrf = next(c["value"] for c in page.context.cookies() if c["name"] == "csrftoken")
        response = page.request.post(
            f"{brain_url}/admin/skills/skillversion/{pending.pk}/approve/", headers={"X-CSRFToken": csrf}
        )
        assert response.ok
        assert "cannot review it" in response.text()

    pending.refresh_from_db()
    assert pending.status == SkillVersion.Status.PENDING


def test_the_review_fits_a_1280_pixel_screen_and_archiving_asks_first(brain_url):
    org = make_org()
    reviewer = make_user(org, role=Membership.ADMIN, username="di", password=PASSWORD)
    reviewer.is_staff = True
    reviewer.save(update_fields=["is_staff"])
    author = make_actor(org)
    first = publish_skill(actor=author, slug="release", name="Release", content=IN_USE, tags=["ops"])
    approve_version(actor=make_actor(org, reviewer), version_id=first.pk)
    long_words = "Check every dashboard the on-call team owns before the release goes out. " * 6
    unbroken = "https://wiki.example/" + "x" * 240
    pending = publish_skill(
        actor=author,
        slug="release",
        name="Release train",
        version="2.0.0",
        description="How a release goes out. " * 20,
        tags=["ops", "weekly"],
        content=f"## Steps\n\n{long_words}\n\n    {unbroken}\n\n- Ship it.\n",
    )

    with browser_page() as page:
        page.set_viewport_size({"width": 1280, "height": 900})
        log_in_to_admin(page, brain_url, "di")
        page.goto(f"{brain_url}/admin/skills/skillversion/{pending.pk}/change/")
        fields = page.get_by_role("table", name="Name, description, tags and categories against version 1.0.0")
        expect(fields.get_by_role("row", name="Tags")).to_contain_text("weekly")
        expect(
            page.get_by_role("region", name="How this version reads").get_by_role("heading", name="Steps")
        ).to_be_visible()
        assert page.evaluate("document.documentElement.scrollWidth") <= 1280
        for box in (".skill-diff", ".skill-fields", ".skill-preview"):
            assert page.eval_on_selector(box, "e => e.scrollWidth <= e.clientWidth"), box

        page.get_by_role("link", name="Archive the whole skill…").click()
        expect(page.get_by_text("Archiving takes this skill out of use for everyone")).to_be_visible()
        page.get_by_role("link", name="No, keep it").click()
        page.wait_for_url(f"**/admin/skills/skillversion/{pending.pk}/change/")
        assert Skill.objects.get(org=org).archived_at is None
        page.get_by_role("link", name="Archive the whole skill…").click()
        page.get_by_role("button", name="Yes, archive").click()
        expect(page.locator(".messagelist")).to_contain_text("archived: nobody can use it now")

    assert Skill.objects.get(org=org).archived_at is not None
