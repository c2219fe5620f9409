"""The work waiting for people (brain.core.needs): one count per kind and organisation, each with the page
where it is done, and only for the organisations the reader administers."""

from __future__ import annotations

import pytest

from brain.core.needs import list_waiting_work
from brain.models import Membership
from brain.tests.admin_client import logged_in, make_operator, make_org_admin
from conftest import make_org, make_user
from overview.selectors import get_overview
from overview.tests.overview_data import one_of_each_waiting

pytestmark = pytest.mark.django_db


@pytest.fixture
def two_busy_organisations():
    orgs = make_org("acme"), make_org("globex")
    for org in orgs:
        one_of_each_waiting(org, requester=make_user(org))
    return orgs


def test_an_admin_sees_one_count_of_each_kind_in_their_organisation_only(two_busy_organisations):
    acme, _globex = two_busy_organisations
    admin = make_user(acme, role=Membership.ADMIN)

    waiting = list_waiting_work(user=admin)

    assert [(w.org.slug, w.words) for w in waiting] == [
        ("acme", "1 skill version to review"),
        ("acme", "1 contradiction to answer"),
        ("acme", "1 request waiting for an answer"),
        ("acme", "1 document that failed"),
    ]
    assert [w.url.split("?")[0] for w in waiting] == [
        "/admin/skills/skillversion/",
        "/admin/registers/contradiction/",
        "/admin/contacts/humanrequest/",
        "/overview/",
    ]


def test_each_link_opens_a_page_the_admin_may_see(two_busy_organisations):
    acme, _globex = two_busy_organisations
    admin = make_org_admin(acme)
    client = logged_in(admin)
    for item in list_waiting_work(user=admin):
        assert client.get(item.url).status_code == 200, item.url


def test_a_member_sees_nothing_and_an_operator_sees_every_organisation(two_busy_organisations):
    acme, _globex = two_busy_organisations
    assert list_waiting_work(user=make_user(acme)) == []
    operator = make_operator()
    assert {w.org.slug for w in list_waiting_work(user=operator)} == {"acme", "globex"}
    assert {w.org.slug for w in list_waiting_work(user=operator, org=acme)} == {"acme"}


def test_the_counts_agree_with_the_overview(two_busy_organisations):
    acme, _globex = two_busy_organisations
    overview = get_overview(org=acme)
    counts = {w.what[1]: w.count for w in list_waiting_work(user=make_operator(), org=acme)}
    assert counts == {
        "skill versions to review": overview.skills_waiting,
        "contradictions to answer": overview.open_contradictions,
        "requests waiting for an answer": overview.open_requests,
        "documents that failed": len(overview.failed),
    }


def test_the_admin_index_opens_with_the_list_and_says_when_nothing_waits(two_busy_organisations):
    acme, _globex = two_busy_organisations
    quiet = make_org("initech")
    busy_admin = make_org_admin(acme)
    quiet_admin = make_org_admin(quiet)

    busy = logged_in(busy_admin).get("/admin/").content.decode()
    calm = logged_in(quiet_admin).get("/admin/").content.decode()

    assert "Needs you" in busy
    assert "1 skill version to review" in busy
    assert "Nothing is waiting for you." in calm
