"""The Add knowledge page in a real browser: a member uploads a file, sees it queued, and a real
Celery worker takes it to ready while the page follows; a failed item shows its reason and Retry."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import redis
from django.conf import settings
from django.db import connection
from playwright.sync_api import expect

from brain.models import Category
from conftest import make_org, make_user
from launcher.processes import QUEUES
from memory.models import Document
from tests.browser import browser_page, log_in, menu_link
from tests.progress import documents_progress, log_size, wait_while_progressing

pytestmark = pytest.mark.django_db(transaction=True)

ROOT = Path(__file__).resolve().parent.parent
PASSWORD = "a long enough secret"
HANDBOOK = "# Travel\n\nBook trains for trips under four hours.\n\n## Hotels\n\nUp to 150 EUR a night.\n"


@pytest.fixture(autouse=True)
def orm_beside_playwright(monkeypatch):
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


@pytest.fixture
def worker(tmp_path) -> Iterator[Callable[[], subprocess.Popen[bytes]]]:
    """Starts a real Celery worker when the test asks, so the page can show a document queued first."""
    redis.Redis.from_url(settings.REDIS_URL).flushdb()  # no stale messages from earlier tests
    db = connection.settings_dict
    env = dict(
        os.environ,
        DATABASE_URL=f"postgresql://{db['USER']}@{db['HOST'].replace('/', '%2F')}/{db['NAME']}",
        REDIS_URL=settings.REDIS_URL,
        BRAIN_DATA_DIR=str(tmp_path),
    )
    started: list[subprocess.Popen[bytes]] = []
    log_path = tmp_path / "worker.log"

    def start() -> subprocess.Popen[bytes]:
        log = log_path.open("w")
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "brain",
                "worker",
                "-Q",
                ",".join(QUEUES),
                "-c",
                "1",
                "--pool",
                "prefork",
                "-l",
                "info",
                "-n",
                f"test-{os.getpid()}@%h",
            ],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        started.append(proc)
        from brain.celery import app

        def answers() -> bool:
            assert proc.poll() is None, log_path.read_text()
            return bool(app.control.broadcast("ping", reply=True, timeout=0.5, limit=1))

        wait_while_progressing(
            answers, log_size(log_path), what="the worker to answer a ping", details=log_path.read_text
        )
        return proc

    yield start
    for proc in started:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()


def test_an_uploaded_file_goes_from_queued_to_ready_with_a_real_worker(brain_url, worker, tmp_path):
    org = make_org()
    Category.objects.create(org=org, slug="handbook", name="Handbook")
    make_user(org, username="nadia", password=PASSWORD)
    handbook = tmp_path / "travel-policy.md"
    handbook.write_text(HANDBOOK)
    broken = tmp_path / "scan.pdf"
    broken.write_bytes(b"%PDF-1.4 not really a pdf")

    with browser_page() as page:
        page.set_viewport_size({"width": 375, "height": 800})
        log_in(page, brain_url, "nadia", PASSWORD)
        page.wait_for_url(f"{brain_url}/connect/")
        menu_link(page, "Add knowledge").click()
        page.get_by_label("Files", exact=True).set_input_files([str(handbook), str(broken)])
        page.locator("#id_category_files").select_option("handbook")
        page.get_by_role("button", name="Add files").click()

        items = page.locator("#added-items .item")
        expect(items).to_have_count(2)
        item, scan = items.filter(has_text="travel-policy.md"), items.filter(has_text="scan.pdf")
        expect(item.locator("[data-role=label]")).to_have_text("Queued")  # no worker runs yet: nothing read
        expect(scan.locator("[data-role=label]")).to_have_text("Queued")
        saved = "2 files saved; each is read into documents in the background. Progress is shown below."
        expect(page.get_by_text(saved)).to_be_visible()
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")  # fits 375 px

        worker()
        documents = Document.objects.filter(org=org)
        wait_while_progressing(
            lambda: documents.filter(status="ready").exists(),
            documents_progress(documents),
            what="the worker to ingest the file",
        )
        expect(item.locator("[data-role=label]")).to_have_text("Ready", timeout=30_000)  # the page polled it
        expect(item.locator("[data-role=detail]")).to_have_text("Searchable: 2 passages.")
        expect(item.get_by_role("button", name="Retry")).to_be_hidden()
        expect(scan.locator("[data-role=label]")).to_have_text("Failed", timeout=90_000)  # read in the bulk lane
        expect(scan.locator("[data-role=detail]")).to_contain_text("Not added: not a readable PDF")
        expect(scan.get_by_role("button", name="Retry")).to_be_visible()
        if shots := os.environ.get("BRAIN_SCREENSHOT_DIR"):
            page.set_viewport_size({"width": 1000, "height": 800})
            page.screenshot(path=str(Path(shots) / "add-knowledge.png"), full_page=True)

    document = Document.objects.get(org=org)
    assert (document.status, document.category.slug, document.scope) == ("ready", "handbook", "shared")


def test_a_failed_item_shows_its_reason_and_retry_queues_it_again(brain_url):
    org = make_org()
    member = make_user(org, username="omar", password=PASSWORD)
    with browser_page() as page:
        log_in(page, brain_url, "omar", PASSWORD)
        page.wait_for_url(f"{brain_url}/connect/")
        page.goto(f"{brain_url}/knowledge/add/")
        paste = page.locator("section", has=page.get_by_role("heading", name="Paste a text"))
        paste.get_by_label("Title").fill("Parking")
        paste.get_by_label("Text (markdown headings are kept as sections)").fill("Level -2 is ours.")
        paste.get_by_label("Personal: only you").check()
        paste.get_by_role("button", name="Add text").click()
        item = page.locator("#added-items .item")
        expect(item.locator("[data-role=label]")).to_have_text("Queued")

        document = Document.objects.get(org=org)
        Document.objects.filter(pk=document.pk).update(status="failed", error="EmbeddingError: endpoint refused")
        expect(item.locator("[data-role=label]")).to_have_text("Failed")  # polled, no reload
        expect(item.locator("[data-role=detail]")).to_have_text("EmbeddingError: endpoint refused")
        item.get_by_role("button", name="Retry").click()
        expect(item.locator("[data-role=label]")).to_have_text("Queued")
        expect(item.get_by_role("button", name="Retry")).to_be_hidden()

    document.refresh_from_db()
    assert (document.status, document.scope, document.owner) == ("queued", "personal", member)
