"""The overview page through Django's test client: who may open it, which organisation it shows,
the retry button, the banners, and the links to it; and a member's own month on Connect."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from brain.core.services import add_member
from brain.models import Membership, Organisation
from brain.tests.admin_client import logged_in, make_operator, make_org_admin
from conftest import make_actor, make_org, make_user
from memory.models import Document
from overview.tests.overview_data import called, failed, missed
from usage.metering import month_of
from usage.models import Account, Month

pytestmark = pytest.mark.django_db

OVERVIEW = "/overview/"


def page_of(client: Client, org: Organisation | None = None) -> str:
    response = client.get(OVERVIEW, {"org": org.slug} if org else {})
    assert response.status_code == 200
    return response.content.decode()


def test_a_visitor_who_is_not_logged_in_is_sent_to_log_in(db):
    response = Client().get(OVERVIEW)
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))


def test_a_member_who_is_not_an_admin_is_refused(org):
    response = logged_in(make_user(org)).get(OVERVIEW)
    assert response.status_code == 403


def test_an_admin_sees_their_organisations_figures_and_not_another_organisations():
    org_a, org_b = make_org(), make_org()
    called(org_a, timezone.now(), "tool_of_a", user=make_user(org_a, username="alma"))
    called(org_b, timezone.now(), "tool_of_b", user=make_user(org_b, username="bruno"))
    missed(org_b, "What is the secret plan of B?")
    failed(make_actor(org_b), "B's broken export")
    client = logged_in(make_org_admin(org_a))

    html = page_of(client)

    assert "tool_of_a" in html
    assert "alma" in html
    for theirs in ("tool_of_b", "bruno", "secret plan of B", "broken export"):
        assert theirs not in html
    assert client.get(OVERVIEW, {"org": org_b.slug}).status_code == 404


def test_an_admin_of_two_organisations_picks_one_and_an_operator_any():
    first, second = make_org(), make_org()
    Organisation.objects.filter(pk=first.pk).update(name="Alpha")  # the first by name is shown first
    Organisation.objects.filter(pk=second.pk).update(name="Beta")
    missed(second, "Where is the second handbook?")
    admin = make_org_admin(first, second)

    chooser = page_of(logged_in(admin))
    chosen = page_of(logged_in(admin), second)
    as_operator = page_of(logged_in(make_operator()), second)

    assert f'<option value="{second.slug}"' in chooser
    assert "Where is the second handbook?" not in chooser
    assert "Where is the second handbook?" in chosen
    assert "Where is the second handbook?" in as_operator


def test_a_member_of_one_organisation_who_admins_another_sees_only_the_one_they_admin():
    mine, theirs = make_org(), make_org()
    admin = make_org_admin(mine)
    add_member(org=theirs, user=admin, role=Membership.MEMBER)
    assert logged_in(admin).get(OVERVIEW, {"org": theirs.slug}).status_code == 404


def test_retry_queues_a_failed_document_again_and_comes_back_with_a_message(org):
    document = failed(make_actor(org), "Quarterly report")
    client = logged_in(make_org_admin(org))
    assert 'aria-label="Retry Quarterly report"' in page_of(client)

    response = client.post(reverse("overview-retry", args=[document.pk]), follow=True)

    assert response.redirect_chain[-1][0] == f"{OVERVIEW}?org={org.slug}"
    assert "Quarterly report: queued to be read again." in response.content.decode()
    document.refresh_from_db()
    assert (document.status, document.error, document.attempts) == (Document.Status.QUEUED, "", 0)


def test_retry_of_a_document_that_is_not_failed_says_why(org):
    document = failed(make_actor(org), "Quarterly report")
    Document.objects.filter(pk=document.pk).update(status=Document.Status.READY)
    response = logged_in(make_org_admin(org)).post(reverse("overview-retry", args=[document.pk]), follow=True)
    assert "Only failed documents can be retried" in response.content.decode()


def test_retry_reaches_no_document_of_another_organisation_and_no_personal_one():
    org, other = make_org(), make_org()
    theirs = failed(make_actor(other), "Theirs")
    personal = failed(make_actor(org), "Someone's own", scope="personal")
    client = logged_in(make_org_admin(org))
    for document in (theirs, personal):
        assert client.post(reverse("overview-retry", args=[document.pk])).status_code == 404
        document.refresh_from_db()
        assert document.status == Document.Status.FAILED


def test_retry_is_refused_to_a_member_and_needs_a_post_with_its_csrf_token(org):
    document = failed(make_actor(org), "Quarterly report")
    url = reverse("overview-retry", args=[document.pk])
    assert logged_in(make_user(org)).post(url).status_code == 404
    admin = make_org_admin(org)
    assert logged_in(admin).get(url).status_code == 405
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(admin)
    assert strict.post(url).status_code == 403
    document.refresh_from_db()
    assert document.status == Document.Status.FAILED


def test_no_banner_shows_while_ingestion_runs_and_credits_last(org):
    html = page_of(logged_in(make_org_admin(org)))
    assert 'id="banner-paused"' not in html
    assert 'id="banner-credits"' not in html


def test_a_banner_shows_while_ingestion_is_paused(org):
    Organisation.objects.filter(pk=org.pk).update(ingestion_paused_at=timezone.now())
    html = page_of(logged_in(make_org_admin(org)))
    assert 'id="banner-paused"' in html
    assert "Ingestion is paused." in html


def test_a_banner_says_how_an_operator_adds_credits_when_they_are_out(org):
    client = logged_in(make_org_admin(org))
    page_of(client)  # the account is made on the free plan
    Month.objects.update_or_create(org=org, month=month_of(org), defaults={"free_used": 1000})
    Account.objects.filter(org=org).update(credits=0)

    html = page_of(client)

    assert 'id="banner-credits"' in html
    assert f"manage.py credits --org {org.slug} add N" in html


def test_the_page_shows_counts_charts_top_users_and_misses(org):
    user = make_user(org, first_name="Ana", last_name="Ruiz")
    for back in range(5):
        called(org, timezone.now() - timedelta(days=back), user=user, n=back + 1, duration_ms=40.0, credits=1)
    missed(org, "Who approves travel over 2000 EUR?", user=user)
    failed(make_actor(org), "Broken export", error="pdf has no text layer")

    html = page_of(logged_in(make_org_admin(org)))

    assert html.count('<svg xmlns="http://www.w3.org/2000/svg" class="chart" id="chart-') == 4
    assert 'class="bar"' in html
    assert "Ana Ruiz" in html
    assert "Who approves travel over 2000 EUR?" in html
    assert "pdf has no text layer" in html
    assert "Open contradictions" not in html  # the register is off


def test_names_from_outside_are_escaped_on_the_page(org):
    called(org, timezone.now(), "<img src=x onerror=alert(1)>", user=make_user(org, first_name="<b>Eve</b>"))
    missed(org, "<script>alert(2)</script>")
    html = page_of(logged_in(make_org_admin(org)))
    assert "<img src=x" not in html
    assert "<script>alert" not in html
    assert "<b>Eve</b>" not in html
    assert "&lt;b&gt;Eve&lt;/b&gt;" in html


def test_the_top_menu_links_the_overview_for_admins_and_operators_only(org):
    link = f'<a href="{OVERVIEW}">Overview</a>'
    assert link in logged_in(make_org_admin(org)).get(reverse("connect")).content.decode()
    assert link in logged_in(make_operator()).get(reverse("connect")).content.decode()
    assert link not in logged_in(make_user(org)).get(reverse("connect")).content.decode()


def test_the_admin_index_links_the_overview(org):
    html = logged_in(make_org_admin(org)).get("/admin/").content.decode()
    assert f'<a href="{OVERVIEW}">Overview</a>' in html


def test_a_member_sees_their_own_month_on_the_connect_page():
    org, other = make_org(), make_org()
    member = make_user(org, username="mira")
    add_member(org=other, user=member)
    called(org, timezone.now(), user=member, n=4, credits=1)
    called(org, timezone.now(), user=make_user(org), n=9, credits=5)  # someone else's
    called(other, timezone.now(), user=member, n=2)

    html = logged_in(member).get(reverse("connect")).content.decode()

    assert "Your month" in html
    assert f"<tr><td>{org.name}</td><td>4</td><td>4</td></tr>" in html
    assert f"<tr><td>{other.name}</td><td>2</td><td>0</td></tr>" in html
