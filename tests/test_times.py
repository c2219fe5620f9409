"""Times on pages: in the organisation's zone, the zone named, through one helper."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

from brain.faces.times import local_time
from brain.models import Organisation
from brain.templatetags.brain_pages import local_time as local_time_filter

TEMPLATES = Path(__file__).resolve().parent.parent / "templates"


def test_a_time_is_shown_in_the_organisations_zone_with_the_zone_named():
    moment = datetime(2026, 1, 5, 8, 30, tzinfo=UTC)
    assert local_time(moment, Organisation(time_zone="Europe/Berlin")) == "2026-01-05 09:30 Europe/Berlin"
    assert local_time(moment, Organisation(time_zone="Pacific/Auckland")) == "2026-01-05 21:30 Pacific/Auckland"
    assert local_time(moment, None) == "2026-01-05 08:30 UTC"


def test_the_filter_wraps_it_in_a_time_element_and_leaves_nothing_for_no_time():
    moment = datetime(2026, 1, 5, 8, 30, tzinfo=UTC)
    html = local_time_filter(moment, Organisation(time_zone="Asia/Kolkata"))
    assert html == '<time datetime="2026-01-05T08:30:00+00:00">2026-01-05 14:00 Asia/Kolkata</time>'
    assert local_time_filter(None, None) == ""


def test_no_page_formats_a_time_of_day_by_itself():
    own_formats = re.compile(r"""\|date:["'][^"']*[HGgh]:i""")
    offenders = [str(p.relative_to(TEMPLATES)) for p in TEMPLATES.rglob("*.html") if own_formats.search(p.read_text())]
    assert offenders == []
