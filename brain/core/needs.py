"""Work waiting for people: what the admin index and the overview open with ("Needs you").

Each app knows its own kind of waiting work (skills to review, contradictions to answer, requests
waiting, documents that failed), and the core may import none of them, so each plugs a counter into
``WAITING`` in its ``AppConfig.ready``. ``list_waiting_work`` applies the access rule once: an
operator sees every organisation, an organisation admin only those they administer, anyone else
nothing. A counter is given those organisations only, and answers with one query.
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


def list_waiting_work(*, user: User | AnonymousUser, org: Organisation | None = None) -> list[Waiting]:
    """The work waiting in the organisations ``user`` administers (every one for an operator), or
    only in ``org`` when given (nothing when they do not administer it); kinds with none are left out."""
    if not user.is_authenticated:
        return []
    orgs = list_administered_organisations(user=user)
    if org is not None:
        orgs = orgs.filter(pk=org.pk)
    chosen = list(orgs)
    if not chosen:
        return []
    found = [item for count in WAITING for item in count(chosen) if item.count > 0]
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
