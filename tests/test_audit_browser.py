"""The audit trail page in a real browser, at 1280 and 375 px: an admin signs in (which the trail
records), opens the trail from the overview, narrows it by action, interface and days, exports
what the filters show as CSV (which the trail records too), and a member is refused the page.

With BRAIN_SCREENSHOTS set to a folder, saves audit-trail.png there (1280 px) for docs/people.md."""

from __future__ import annotations

import csv
import io
import os
from datetime import timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from django.contrib.auth.models import User
from django.utils import timezone
from playwright.sync_api import Page, ViewportSize, expect

from brain.core.audit import record_audit
from brain.core.services import create_token
from brain.models import AuditRecord, Membership, Organisation
from conftest import make_org, make_user
from tests.browser import browser_page, log_in, menu_link

pytestmark = pytest.mark.django_db(transaction=True)

PASSWORD = "a long enough secret"
SIZES: dict[str, ViewportSize] = {"desktop": {"width": 1280, "height": 900}, "phone": {"width": 375, "height": 800}}
SHOTS = os.environ.get("BRAIN_SCREENSHOTS", "")


@pytest.fixture(autouse=True)
def orm_beside_playwright(monkeypatch):
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


def fits(page: Page, width: int) -> None:
    assert page.evaluate("document.documentElement.scrollWidth") <= width


def history(org: Organisation, admin_name: str) -> None:
    """A few weeks of the organisation's trail: tokens, a deletion, a role change, a purge."""
    admin = make_user(org, role=Membership.ADMIN, username=admin_name, password=PASSWORD)
    rosa = make_user(org, username=f"rosa-{org.slug}", first_name="Rosa", last_name="Lind")
    create_token(org=org, user=rosa, scopes=["read"], name="Rosa's laptop", via="web")
    promoted: dict[str, Any] = {"fields": {"role": {"from": "member", "to": "admin"}}}
    steps: list[tuple[User | None, str, str, str, dict[str, Any]]] = [
        (admin, "admin", "membership.changed", f"membership of {rosa.username}", promoted),
        (rosa, "web", "document.deleted", "doc_41", {"title": "Old kiosk price list"}),
        (None, "nightly", "document.purged", "doc_17", {"title": "Draft contract", "kind": "document"}),
        (admin, "admin", "organisation.changed", org.slug, {"fields": {"features.jobs": {"from": False, "to": True}}}),
    ]  # fmt: skip
    for days, (user, via, action, target, details) in enumerate(steps, start=1):
        who = "trash purge" if via == "nightly" else None
        record = record_audit(actor=user, org=org, via=via, who=who, action=action, target=target, details=details)
        AuditRecord.objects.filter(pk=record.pk).update(created_at=timezone.now() - timedelta(days=days * 9))


@pytest.mark.parametrize("size", SIZES)
def test_an_admin_filters_the_trail_and_exports_it(brain_url, size):
    org, theirs = make_org(), make_org()
    Organisation.objects.filter(pk=org.pk).update(time_zone="Europe/Madrid", name="Duskwater Kiosks")
    admin_name = f"ada-{size}"
    history(org, admin_name)
    history(theirs, f"bruno-{size}")
    width = SIZES[size]["width"]
    with browser_page() as page:
        page.set_viewport_size(SIZES[size])
        log_in(page, brain_url, admin_name, PASSWORD)
        page.wait_for_url(f"{brain_url}/connect/")
        menu_link(page, "Overview").click()
        page.get_by_role("link", name="Audit trail").first.click()
        expect(page.get_by_role("heading", name="Audit trail: Duskwater Kiosks")).to_be_visible()
        rows = page.locator("table.audit tbody tr")
        expect(rows.first).to_contain_text("user.signed_in")  # newest first: this very sign-in
        expect(rows.first).to_contain_text("Europe/Madrid")
        expect(page.get_by_text("bruno-")).to_have_count(0)  # another organisation's trail stays there
        fits(page, width)

        page.get_by_label("Action starts with").fill("token.")
        page.get_by_role("button", name="Show").click()
        expect(rows).to_have_count(1)
        expect(rows.first).to_contain_text("token.created")

        page.get_by_label("Action starts with").fill("")
        page.get_by_label("Through").select_option("admin")
        page.get_by_role("button", name="Show").click()
        expect(rows).to_have_count(2)
        day = (timezone.now() - timedelta(days=36)).astimezone(ZoneInfo("Europe/Madrid")).date().isoformat()
        page.get_by_label("From (day)").fill(day)
        page.get_by_label("To (day)").fill(day)
        page.get_by_role("button", name="Show").click()
        expect(rows).to_have_count(1)
        expect(rows.first).to_contain_text("organisation.changed")
        if size == "desktop" and SHOTS:
            page.get_by_label("Action starts with").fill("")
            page.get_by_label("Through").select_option("")
            page.get_by_label("From (day)").fill("")
            page.get_by_label("To (day)").fill("")
            page.get_by_role("button", name="Show").click()
            Path(SHOTS).mkdir(parents=True, exist_ok=True)
            page.screenshot(path=f"{SHOTS}/audit-trail.png", full_page=True)
            page.get_by_label("Through").select_option("admin")
            page.get_by_role("button", name="Show").click()

        with page.expect_download() as download:
            page.get_by_role("button", name="CSV").click()
        text = Path(download.value.path()).read_text()
        exported = list(csv.DictReader(io.StringIO(text)))
        assert {row["via"] for row in exported} == {"admin"}
        assert exported
        page.get_by_role("link", name="Clear").click()
        expect(rows.first).to_contain_text("audit.exported")
        fits(page, width)


def test_a_member_is_refused_the_trail(brain_url):
    org = make_org()
    make_user(org, username="milo", password=PASSWORD)
    with browser_page() as page:
        log_in(page, brain_url, "milo", PASSWORD)
        page.wait_for_url(f"{brain_url}/connect/")
        response = page.goto(f"{brain_url}/audit/{org.slug}/")
        assert response is not None
        assert response.status == 403
