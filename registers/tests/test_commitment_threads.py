"""Promises in an issue or pull-request thread, read by the nightly scan: each comment is said by its
author on its own day, whether the thread was exported by gh2md or synced by the GitHub connector."""

from __future__ import annotations

from datetime import date

import pytest

from memory.tests.factories import save
from registers.models import Commitment
from registers.nightly import run_nightly
from registers.tests.helpers import switch_on

pytestmark = pytest.mark.django_db

# A thread laid out as gh2md exports one (our own text).
EXPORTED = """# [\\#7 Issue](https://x.test/7) `open`: Export fails on long titles

#### <img src="a.png">[Dana Okafor](https://github.com/dokafor) opened issue at [2025-11-19 08:10](https://x.test/7):

The export stops with an error when a title is longer than 200 characters. I will attach the full log tomorrow.

#### <img src="b.png">[Lee Park](https://github.com/leepark) commented at [2025-11-23 18:30](https://x.test/7):

@dokafor thanks for the report. I'm hoping to release a version with the fix sometime this week.

If I get some time, I'll add a flag to cut long titles.

-------------------------------------------------------------------------------
"""

# The same kind of thread as the GitHub connector saves it: the opening post, then "login on day:".
SYNCED = """The export stops with an error when a title is longer than 200 characters.

leepark on 2025-11-24:
I'm going to test the patch, merge it in and do a release.
"""


@pytest.fixture
def scanning(actor, settings):
    settings.BRAIN_EXTRACT_FACTS = False
    switch_on(actor.org, "commitments")
    return actor


def promises(org):
    return {(c.owner_name, c.what, c.promised_on, c.due_on) for c in Commitment.objects.filter(org=org)}


def test_each_comment_of_an_exported_thread_promises_as_its_author_on_its_own_day(scanning):
    save(
        scanning,
        "Issue acme/widgets#7: Export fails on long titles",
        EXPORTED,
        source_kind="connector",
        content_type="text/plain",
    )
    run_nightly(scanning.org, only="commitments")
    assert promises(scanning.org) == {
        ("Dana Okafor", "Dana Okafor will attach the full log tomorrow", date(2025, 11, 19), date(2025, 11, 20)),
        # Said on a Sunday: "this week" is the working week ahead, due its Friday.
        ("Lee Park", "Lee Park will release a version with the fix sometime this week", date(2025, 11, 23),
         date(2025, 11, 28)),
    }  # fmt: skip


def test_a_thread_synced_by_the_connector_gives_the_comment_to_its_login(scanning):
    save(
        scanning,
        "Pull request acme/widgets#8: Cut long titles",
        SYNCED,
        source_kind="connector",
        external_id="github:acme/widgets#8",
        metadata={"kind": "pull_request", "author": "dokafor"},
    )
    run_nightly(scanning.org, only="commitments")
    [promise] = Commitment.objects.filter(org=scanning.org)
    assert (promise.owner_name, promise.promised_on) == ("leepark", date(2025, 11, 24))
    assert promise.what.startswith("leepark will test the patch, merge it in and do a release")
    assert not promise.dated_from_upload


def test_the_same_headings_in_a_page_that_is_no_thread_give_no_speaker(scanning):
    page = "Release notes\n\nleepark on 2025-11-24:\nI'm going to test the patch before the release.\n"
    save(scanning, "Release notes", page, source_kind="upload", content_type="text/plain")
    run_nightly(scanning.org, only="commitments")
    assert not Commitment.objects.filter(org=scanning.org).exists()


def test_minutes_titled_with_a_dotted_date_promise_on_that_day(scanning):
    notes = "# Steering meeting\n\nAttendees: Aiko Tanaka, Priya Shah\n\n- Aiko Tanaka will draft the agenda.\n"
    save(scanning, "2019.01.04", notes, content_type="text/markdown", source_kind="upload")
    run_nightly(scanning.org, only="commitments")
    [promise] = Commitment.objects.filter(org=scanning.org)
    assert (promise.owner_name, promise.promised_on, promise.dated_from_upload) == ("Aiko Tanaka", date(2019, 1, 4),
                                                                                    False)  # fmt: skip
