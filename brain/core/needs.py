"""Work waiting for people: what the admin index, the overview and the To review page open with ("Needs you").

Each app knows its own kind of waiting work (skills to review, contradictions to answer, requests
waiting, documents that failed), and the core may import none of them, so each plugs a counter into
``WAITING`` in its ``AppConfig.ready``. ``list_waiting_work`` applies the access rule once: an
operator sees every organisation, an organisation admin only those they administer, anyone else
nothing. A counter is given those organisations only, and answers with one query.

Some work waits for one person whatever their role: knowledge they look after that is past its
review day (``brain.core.reviews``). Its counters plug into ``WAITING_FOR``; each is given the
person and the organisations they are a member of, and counts only what that person may read.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from django.contrib.auth.models import AnonymousUser, User

from brain.core.selectors import list_administered_organisations
from brain.infra.hooks import Seam
from brain.models import Organisation


@dataclass(frozen=True)
class Waiting:
    org: Organisation
    what: tuple[str, str]  # what waits, after a count of one and of more: ("skill version to review", ...)
    count: int
    url: str  # the page where the work is done
    order: int = 0  # kinds keep this order within an organisation

    @property
    def words(self) -> str:
        return f"{self.count} {self.what[0] if self.count == 1 else self.what[1]}"


Counter = Callable[[Sequence[Organisation]], list[Waiting]]

WAITING: Seam[Counter] = Seam(
    "waiting work",
    "Given organisations the reader administers, the work of one kind waiting there for people: one "
    "Waiting per organisation with some, each with the page where it is done.",
)


PersonalCounter = Callable[[User, Sequence[Organisation]], list[Waiting]]

WAITING_FOR: Seam[PersonalCounter] = Seam(
    "work waiting for one person",
    "Given a person and organisations they are a member of, the work of one kind waiting there for "
    "that person (knowledge they look after, past its review day), counting only what they may read.",
)


def list_waiting_work(*, user: User | AnonymousUser, org: Organisation | None = None) -> list[Waiting]:
    """The work waiting in the organisations ``user`` administers (every one for an operator), and
    the work waiting for ``user`` themselves in those they are a member of; only in ``org`` when
    given. Kinds with none are left out."""
    if not user.is_authenticated:
        return []
    orgs = list_administered_organisations(user=user)
    mine = Organisation.objects.filter(memberships__user=user)
    if org is not None:
        orgs, mine = orgs.filter(pk=org.pk), mine.filter(pk=org.pk)
    chosen, member_of = list(orgs), list(mine)
    found = [item for count in WAITING for item in count(chosen) if item.count > 0] if chosen else []
    if member_of:
        found += [item for count in WAITING_FOR for item in count(user, member_of) if item.count > 0]
    return sorted(found, key=lambda item: (item.org.name, item.order, item.what))


def per_organisation(
    orgs: Sequence[Organisation],
    counts: dict[int, int],
    *,
    what: tuple[str, str],
    url: Callable[[Organisation], str],
    order: int,
) -> list[Waiting]:
    """A counter's answer from its counts by organisation id."""
    return [
        Waiting(org=org, what=what, count=counts[org.pk], url=url(org), order=order)
        for org in orgs
        if counts.get(org.pk)
    ]
