"""Apps connected through OAuth, and the caller an OAuth access token stands for.

The consent page makes one ApiToken row per person and app (``connect_app``): the organisation
and access the person chose, with the app's name. Every access token the app gets for that
person acts as that row, so metering, the audit log, rate limits and the personal-only rule see
the same actor as for a ``brn_`` token. Connecting the same app again with another organisation
or access replaces the row and ends the app's earlier tokens.
"""

from __future__ import annotations

import hashlib
import json
import secrets
from datetime import datetime, timedelta
from urllib.parse import urlsplit

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import BooleanField, F, QuerySet
from django.db.models.expressions import RawSQL
from django.utils import timezone
from oauth2_provider.models import AccessToken, Application, Grant, RefreshToken, clear_expired

from brain.core.audit import record_audit
from brain.core.errors import NotFound
from brain.core.services import live_tokens, mark_used
from brain.infra.prepared import Prepared
from brain.models import CONNECTED_APP_PREFIX, ApiToken, Membership, Organisation
from brain.oauth.codes import forget_spent
from brain.oauth.registrations import forget_old_counts

DEFAULT_PORTS = {"http": 80, "https": 443}


def issuer() -> str:
    """This server as an authorisation server: its public URL."""
    return str(settings.BRAIN_BASE_URL)


def mcp_resource() -> str:
    """The one resource Brain issues tokens for (RFC 8707): its MCP endpoint's URL."""
    return f"{settings.BRAIN_BASE_URL}/mcp"


def _url_key(url: str) -> tuple[str, str, int | None, str] | None:
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    return scheme, (parts.hostname or "").lower(), port or DEFAULT_PORTS.get(scheme), parts.path.rstrip("/")


def is_mcp_resource(url: object) -> bool:
    """Whether a resource indicator names this server's MCP endpoint (case of the host, a default
    port and a trailing slash aside)."""
    return isinstance(url, str) and _url_key(url) is not None and _url_key(url) == _url_key(mcp_resource())


def _checksum(plaintext: str) -> str:
    return hashlib.sha256(plaintext.encode()).hexdigest()


# The access token's app and person, for the connection row's own columns: written as SQL
# because the ORM spent longer composing the two subqueries it would need than Postgres spends
# running them, on every call (docs/benchmarks-log.md, "OAuth tokens against brn_ tokens").
ISSUED_TO_SQL = """(brain_apitoken.oauth_application_id, brain_apitoken.user_id) = (
    SELECT application_id, user_id FROM oauth2_provider_accesstoken
    WHERE token_checksum = %s AND expires > %s AND resource @> %s::jsonb)"""


def connection_for_access_token(plaintext: str) -> ApiToken | None:
    """The connected app an OAuth access token acts as, or None when the token is unknown,
    expired, issued for another resource, or its connection has ended. One statement, as for a
    ``brn_`` token; the resource is stored in one form (brain.oauth.validator)."""
    if len(plaintext) > 500:
        return None
    row = CONNECTION_BY_ACCESS.first(
        checksum=_checksum(plaintext), now=timezone.now(), resource=json.dumps([mcp_resource()])
    )
    return mark_used(row)


def _issued_to(*, checksum: str, now: datetime, resource: str) -> QuerySet[ApiToken]:
    issued_to = RawSQL(ISSUED_TO_SQL, (checksum, now, resource), output_field=BooleanField())  # noqa: S611 (bound)
    return live_tokens().annotate(client_ref=F("oauth_application__client_id")).filter(issued_to)


# Every call with an OAuth access token runs it: composed once (brain.infra.prepared).
CONNECTION_BY_ACCESS = Prepared(_issued_to, checksum=str, now=datetime, resource=str)


def app_connections(*, user: User) -> QuerySet[ApiToken]:
    """A person's connected apps, newest first, ended ones included."""
    return (
        ApiToken.objects.filter(user=user, prefix=CONNECTED_APP_PREFIX)
        .select_related("org", "oauth_application")
        .order_by("-created_at")
    )


def forget_tokens(*, user_id: int, application_id: int | None) -> None:
    """End every code, access token and refresh token an app holds for a person."""
    if application_id is None:
        return
    now = timezone.now()
    RefreshToken.objects.filter(user_id=user_id, application_id=application_id, revoked__isnull=True).update(
        revoked=now
    )
    AccessToken.objects.filter(user_id=user_id, application_id=application_id).delete()
    Grant.objects.filter(user_id=user_id, application_id=application_id).delete()


@transaction.atomic
def connect_app(*, user: User, org: Organisation, application: Application, access: str) -> ApiToken:
    """The person's connection of this app, acting in ``org`` with ``access`` (a key of
    ``ApiToken.ACCESS``): the current one when it already says so, otherwise a new one that
    replaces it."""
    if access not in ApiToken.ACCESS:
        raise NotFound("No such access.")
    if not Membership.objects.filter(org=org, user=user).exists():
        raise NotFound("No such organisation.")
    scopes = sorted(ApiToken.ACCESS[access][0])
    current = (
        ApiToken.objects.select_for_update()
        .filter(user=user, oauth_application=application, revoked_at__isnull=True)
        .first()
    )
    if current is not None and current.org_id == org.pk and sorted(current.scopes) == scopes:
        return current
    if current is not None:
        current.revoked_at = timezone.now()
        current.save(update_fields=["revoked_at"])
        forget_tokens(user_id=user.pk, application_id=application.pk)
    row = ApiToken.objects.create(
        org=org,
        user=user,
        name=(application.name or urlsplit(application.client_id).hostname or "unnamed app")[:100],
        prefix=CONNECTED_APP_PREFIX,
        hashed=_checksum(secrets.token_urlsafe(32)),  # of a value nobody holds: never a brn_ token
        scopes=scopes,
        oauth_application=application,
    )
    record_audit(
        actor=user,
        org=org,
        via="web",
        action="app.connected",
        target=f"connected app {row.name}",
        details={"client_id": application.client_id, "scopes": scopes},
    )
    return row


@transaction.atomic
def disconnect_app(*, user: User, connection_id: int) -> ApiToken:
    """End one of the person's own connections, and every token its app holds for them."""
    row = ApiToken.objects.select_for_update().filter(pk=connection_id, user=user, prefix=CONNECTED_APP_PREFIX).first()
    if row is None:
        raise NotFound("No such connected app.")
    if row.revoked_at is None:
        row.revoked_at = timezone.now()
        row.save(update_fields=["revoked_at"])
        record_audit(
            actor=user,
            org=row.org,
            via="web",
            action="app.disconnected",
            target=f"connected app {row.name}",
            details={"client_id": row.oauth_application.client_id if row.oauth_application else ""},
        )
    forget_tokens(user_id=user.pk, application_id=row.oauth_application_id)
    return row


def purge_unused(*, older_than: timedelta = timedelta(days=1)) -> int:
    """Nightly: expired codes and tokens (the toolkit's own sweep), spent codes with no token left,
    registration counts of past hours, and apps that registered themselves or were named by a
    metadata document but were never allowed by anyone, once a day old; a registration that
    nobody uses costs a row and nothing else. Answers how many apps went."""
    clear_expired()
    forget_spent()
    forget_old_counts()
    unused = Application.objects.filter(
        registration_source__in=[Application.RegistrationSource.DCR, Application.RegistrationSource.CIMD],
        created__lt=timezone.now() - older_than,
        connections__isnull=True,
    )
    _total, per_model = unused.delete()
    return per_model.get(Application._meta.label, 0)
