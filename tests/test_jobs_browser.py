"""The Jobs page in a real browser: a member sees the schedule in words, pauses a job, and reads a
run's report in its chat, where markdown renders and raw HTML does not; after Run now the job's row
says queued and then how the run ended without a reload, and the report links its sources."""

from __future__ import annotations

import os
from datetime import UTC, datetime

import pytest
from playwright.sync_api import Dialog, expect

from brain.models import Features
from conftest import make_actor, make_org, make_user
from jobs.models import Job
from jobs.runs import run_queued, tick
from jobs.services import schedule_job, schedule_once
from memory.tests.factories import save
from tests.browser import browser_page, log_in, menu_link

pytestmark = pytest.mark.django_db(transaction=True)

PASSWORD = "a long enough secret"
SHOTS = os.environ.get("BRAIN_SCREENSHOTS", "")  # a folder to keep screenshots in, when set


@pytest.fixture(autouse=True)
def orm_beside_playwright(monkeypatch):
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


def test_a_member_pauses_a_job_and_reads_its_report_safely(brain_url):
    org = make_org()
    Features.objects.filter(org=org).update(jobs=True)
    member = make_user(org, username="mira", password=PASSWORD)
    actor = make_actor(org, member)
    job = schedule_job(
        actor=actor,
        name="Friday digest <script>alert(1)</script>",
        schedule="30 17 * * 5",
        prompt="What changed about BigCo? <img src=x onerror=alert(1)>",
    ).job
    tick(job.pk, now=datetime(2026, 12, 4, 17, 30, 10, tzinfo=UTC))
    dialogs: list[str] = []

    def refuse(dialog: Dialog) -> None:  # a script that ran would open one
        dialogs.append(dialog.message)
        dialog.dismiss()

    with browser_page() as page:
        page.on("dialog", refuse)
        page.set_viewport_size({"width": 375, "height": 800})
        log_in(page, brain_url, "mira", PASSWORD)
        page.wait_for_url(f"{brain_url}/connect/")
        menu_link(page, "Jobs").click()
        expect(page.get_by_text("Fridays at 17:30, UTC; next run")).to_be_visible()
        page.get_by_role("button", name="Pause").click()
        expect(page.get_by_text("paused.")).to_be_visible()
        expect(page.get_by_role("button", name="Resume")).to_be_visible()
        page.get_by_role("link", name="Friday digest").first.click()  # the job (its run links the same chat)
        expect(page.get_by_role("heading", name="What memory holds")).to_be_visible()  # markdown headings
        expect(page.get_by_text("No language model wrote this")).to_be_visible()
        expect(page.get_by_text("<img src=x onerror=alert(1)>")).to_be_visible()  # shown as text, never run
    assert dialogs == []
    assert not Job.objects.get(pk=job.pk).enabled


def test_a_one_offs_run_stays_on_the_jobs_page_after_it_deleted_itself(brain_url):
    org = make_org()
    Features.objects.filter(org=org).update(jobs=True)
    member = make_user(org, username="nils", password=PASSWORD)
    job = schedule_once(
        actor=make_actor(org, member),
        name="Remind me about Baltic",
        at="2031-01-09T09:00",
        prompt="Chase the Baltic invoice",
    ).job
    tick(job.pk, now=datetime(2031, 1, 9, 9, 0, 5, tzinfo=UTC))
    assert not Job.objects.filter(pk=job.pk).exists()  # the one-off deleted itself
    with browser_page() as page:
        log_in(page, brain_url, "nils", PASSWORD)
        page.wait_for_url(f"{brain_url}/connect/")
        menu_link(page, "Jobs").click()
        expect(page.get_by_role("heading", name="Recent runs")).to_be_visible()
        row = page.get_by_role("row").filter(has_text="Remind me about Baltic")
        expect(row).to_contain_text("(job deleted)")
        expect(row).to_contain_text("2031-01-09 09:00 UTC")
        row.get_by_role("link", name="Remind me about Baltic").click()
        expect(page.get_by_role("heading", name="What memory holds")).to_be_visible()  # the report, in its chat
        expect(page.get_by_text("No language model wrote this")).to_be_visible()


@pytest.mark.parametrize("width", [375, 1280])
def test_a_member_makes_a_job_on_the_page_changes_it_and_sees_run_now_arrive_without_a_reload(brain_url, width):
    org = make_org()
    Features.objects.filter(org=org).update(jobs=True)
    make_user(org, username="omar", password=PASSWORD)
    with browser_page() as page:
        page.set_viewport_size({"width": width, "height": 900})
        log_in(page, brain_url, "omar", PASSWORD, then="/jobs/")
        page.get_by_role("link", name="New job").click()
        page.get_by_label("Name").fill("Friday digest")
        page.get_by_label("What it should do").fill("What changed about BigCo this week?")
        page.get_by_label("Cron schedule").fill("every friday")  # not cron: refused, what was typed kept
        page.get_by_label("Time zone").select_option("Europe/Madrid")
        page.get_by_role("button", name="Make the job").click()
        expect(page.get_by_role("alert")).to_contain_text("a cron here has exactly five")
        expect(page.get_by_label("What it should do")).to_have_value("What changed about BigCo this week?")
        page.get_by_label("Cron schedule").fill("30 17 * * 5")
        if SHOTS and width > 1000:
            page.screenshot(path=f"{SHOTS}/jobs-new.png", full_page=True)
        page.get_by_role("button", name="Make the job").click()
        expect(page.get_by_text("Friday digest: made, Fridays at 17:30, Europe/Madrid; next run")).to_be_visible()

        page.get_by_role("link", name="Edit").click()
        page.get_by_label("Name").fill("Weekday digest")
        page.get_by_label("Cron schedule").fill("0 9 * * 1-5")
        page.get_by_role("button", name="Save changes").click()
        expect(page.get_by_text("Weekday digest: changed, weekdays at 09:00, Europe/Madrid")).to_be_visible()

        page.evaluate("window.stayed = true")  # gone if the page reloads
        page.get_by_role("button", name="Run now").click()
        expect(page.get_by_role("status").filter(has_text="queued to run within a minute")).to_be_visible()
        runs = page.locator(".job-runs")
        expect(runs.locator('[data-run-status="queued"]')).to_be_visible()  # the run, arrived
        run = Job.objects.get(org=org).runs.get()
        run_queued(run.pk)  # what the worker does with it
        expect(runs.locator('[data-run-status="ok"]')).to_be_visible()  # and finished
        expect(runs.get_by_role("link", name="Weekday digest")).to_be_visible()  # its chat took the new name
        if SHOTS and width > 1000:
            page.screenshot(path=f"{SHOTS}/jobs.png", full_page=True)
        assert page.evaluate("window.stayed") is True
    job = Job.objects.get(org=org)
    assert (job.name, job.cron, job.time_zone) == ("Weekday digest", "0 9 * * 1-5", "Europe/Madrid")


@pytest.mark.parametrize("width", [1280, 375])
def test_run_now_changes_the_jobs_row_without_a_reload_and_the_report_reads_as_a_digest(brain_url, width, settings):
    settings.BRAIN_EXTRACT_FACTS = False
    settings.BRAIN_BASE_URL = brain_url  # the report's links lead to this Brain's pages
    org = make_org()
    org.time_zone = "Europe/Berlin"
    org.save(update_fields=["time_zone"])
    Features.objects.filter(org=org).update(jobs=True)
    member = make_user(org, username="pia", password=PASSWORD)
    actor = make_actor(org, member)
    notes = save(
        actor,
        "BigCo pricing notes",
        "The Team plan costs 29 EUR per seat a month and is billed yearly in advance. "
        "BigCo asked for a discount on the Team plan in November.",
    )
    schedule_job(actor=actor, name="Pricing digest", prompt="What does the BigCo Team plan cost?", schedule="0 9 * * 1")
    with browser_page() as page:
        page.set_viewport_size({"width": width, "height": 900})
        log_in(page, brain_url, "pia", PASSWORD, then="/jobs/")
        row = page.get_by_role("row").filter(has_text="Pricing digest").filter(has=page.get_by_role("button"))
        expect(row).to_contain_text("not yet")
        page.evaluate("window.stayed = true")  # gone if the page reloads
        row.get_by_role("button", name="Run now").click()
        expect(row.locator('[data-job-status="queued"]')).to_be_visible()  # the job's own row, not only the runs
        run_queued(Job.objects.get(org=org).runs.get().pk)  # what the worker does with it
        expect(row.locator('[data-job-status="ok"]')).to_be_visible()
        expect(row).to_contain_text("Europe/Berlin")
        expect(row).not_to_contain_text("not yet")
        assert page.evaluate("window.stayed") is True

        row.get_by_role("link", name="Pricing digest").click()
        report = page.locator("section.message-report")
        expect(report.get_by_role("heading", name="What memory holds")).to_be_visible()
        expect(report).to_contain_text("Europe/Berlin")
        expect(report).to_contain_text("The Team plan costs 29 EUR per seat a month and is billed yearly in advance.")
        expect(report).not_to_contain_text("doc_")
        if SHOTS and width > 1000:
            page.screenshot(path=f"{SHOTS}/job-report.png", full_page=True)
        report.get_by_role("link", name="BigCo pricing notes").first.click()
        page.wait_for_url(f"**/memory/documents/{notes.pk}/")
        expect(page.get_by_role("heading", name="BigCo pricing notes")).to_be_visible()
