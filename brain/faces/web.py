"""What every logged-in page needs: which of the user's organisations it shows, the actor that
page acts as (the same rules as the user's own token: ``via="web"``), and paying for what it
shows of memory when it does not run a tool."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from typing import cast

from django.contrib import messages
from django.contrib.auth.models import User
from django.db.models import QuerySet
from django.http import Http404, HttpRequest, HttpResponse
from django.urls import reverse

from brain.core.accounts import chosen_zone
from brain.core.actors import Actor
from brain.core.services import actor_for_user
from brain.faces import times
from brain.mcp.meter import recorded_call
from brain.mcp.prices import PAGE
from brain.models import Membership, Organisation

SESSION_KEY = "brain_org"


def member_organisations(user: User) -> QuerySet[Organisation]:
    return Organisation.objects.filter(memberships__user=user).order_by("name")


def chosen_organisation(request: HttpRequest, among: QuerySet[Organisation] | None = None) -> Organisation:
    """The organisation named by ``?org=SLUG`` (remembered for the session), else the one chosen
    before, else the user's first. A slug the user is not a member of is a 404, like any other.

    ``among`` is the organisations a page may show instead of the user's own (the overview: those
    they admin, or every one for an operator)."""
    user = cast(User, request.user)
    orgs = member_organisations(user) if among is None else among
    wanted = request.GET.get("org") or request.POST.get("org") or request.session.get(SESSION_KEY)
    org = orgs.filter(slug=wanted).first() if wanted else None
    if org is None and request.GET.get("org"):
        raise Http404("No such organisation.")
    org = org or orgs.first()
    if org is None:
        raise Http404("You are not a member of any organisation yet.")
    request.session[SESSION_KEY] = org.slug
    return org


@dataclass(frozen=True)
class SwitchedOff:
    """An organisation where a feature is off, and where the person reading may switch it on."""

    org: Organisation
    settings_url: str | None  # its switches in the admin, for its admins; None: the reader asks an admin


def switched_off(user: User, orgs: Iterable[Organisation]) -> list[SwitchedOff]:
    """The ``orgs`` as next steps for a page whose feature they have off: an admin of one (or an
    operator) gets the link to its switches (Organisation, Features, in the admin)."""
    orgs = list(orgs)
    admin_of = set(
        Membership.objects.filter(user=user, role=Membership.ADMIN, org__in=orgs).values_list("org_id", flat=True)
    )
    return [
        SwitchedOff(
            org=org,
            settings_url=(
                f"{reverse('admin:brain_organisation_change', args=[org.pk])}#features-group"
                if user.is_superuser or org.pk in admin_of
                else None
            ),
        )
        for org in orgs
    ]


def web_actor(request: HttpRequest) -> Actor:
    """The logged-in user acting in the chosen organisation, with a member's full read and write."""
    return actor_for_user(org=chosen_organisation(request), user=cast(User, request.user), via="web")


@contextmanager
def page_read(actor: Actor, what: str) -> Iterator[None]:
    """Memory a page reads itself (not through a tool, which pays for its own call): paid for as a
    read (``brain.mcp.prices.PAGE``) before the block runs, given back if it fails, and recorded as
    the call ``page:<what>``. ``OutOfCredits`` leaves the block unrun, for the page to show."""
    with recorded_call(actor, f"page:{what}") as call, call.paying(actor, f"the {what} page", PAGE):
        yield
        call.code = ""


class ReaderTimeZoneMiddleware:
    """Times on the pages a signed-in person reads show in the zone they chose on their account
    page (``brain.faces.times.page_time``), looked up once per request and only if a page shows a time."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        user = request.user
        if not user.is_authenticated:
            return self.get_response(request)
        reset = times.READER_ZONE.set(cache(lambda: chosen_zone(user=user)))
        try:
            return self.get_response(request)
        finally:
            times.READER_ZONE.reset(reset)


UNDO_TAG = "undo"


def notice_with_undo(request: HttpRequest, text: str, *, undo_url: str, label: str = "Undo") -> None:
    """A success notice with a one-click button that undoes what was just done: a POST, with the
    CSRF token, to ``undo_url`` (a path of this site, its query string included). The button is
    drawn by ``base.html`` through the ``undo_of`` filter; the notice lives in the messages, so it
    shows on whichever page comes next."""
    if not undo_url.startswith("/") or undo_url.startswith("//") or " " in undo_url or " " in label:
        raise ValueError("an undo goes to a path of this site")
    messages.success(request, text, extra_tags=f"{UNDO_TAG} {undo_url} {label}")


def undo_of(extra_tags: str) -> tuple[str, str] | None:
    """The (path, button label) of a notice made by ``notice_with_undo``, or None."""
    parts = (extra_tags or "").split(" ")
    if len(parts) == 3 and parts[0] == UNDO_TAG and parts[1].startswith("/") and not parts[1].startswith("//"):
        return parts[1], parts[2]
    return None
