"""An organisation's provider: its metadata, and the client that signs a person in through it.

mozilla-django-oidc reads one provider from the settings; Brain has one per organisation, so the
client here is its backend given the organisation's values in place of the settings. The library
trades the code for tokens (with the PKCE verifier), finds the signing key in the provider's key
set, checks the signature, the algorithm and the nonce; this module adds what it leaves out
(the issuer, the audience and the expiry of the ID token, the user info's subject) and hands the
claims to ``provisioning``.
"""

from __future__ import annotations

import json
import logging
from base64 import b64encode
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlencode, urlsplit

import jwt
from django.contrib.auth import get_user_model
from django.contrib.auth.backends import BaseBackend
from django.contrib.auth.models import User
from django.core.cache import cache
from django.core.exceptions import SuspiciousOperation
from django.db import transaction
from django.http import HttpRequest
from mozilla_django_oidc.auth import OIDCAuthenticationBackend

from brain.core.errors import DomainError
from brain.infra import outbound
from brain.infra.sealing import CredentialsUnreadable, reseal, unseal_secret
from brain.models import SingleSignOn
from brain.sso.provisioning import read_claims, sign_in_with_sso

log = logging.getLogger("brain.sso")

TIMEOUT_SECONDS = 10
ANSWER_BYTES = 1_000_000  # a discovery document, a key set, tokens or user info: a few kilobytes
METADATA_SECONDS = 3600  # providers publish key and endpoint changes ahead; an hour is their usual cache
SESSION_BACKEND = "brain.sso.provider.SsoSessionBackend"
CALLBACK = "sso-callback"
ASYMMETRIC = ("RS256", "ES256", "PS256", "RS384", "ES384", "PS384", "RS512", "ES512", "PS512")


class ProviderUnreachable(DomainError):
    code, status, retryable = "sso_unavailable", 503, True


@dataclass(frozen=True)
class Metadata:
    """What Brain uses of a provider's discovery document."""

    issuer: str
    authorization_endpoint: str
    token_endpoint: str
    userinfo_endpoint: str
    jwks_uri: str
    signing_alg: str
    basic_auth: bool


def discover(issuer: str) -> Metadata:
    """The provider's metadata from ``<issuer>/.well-known/openid-configuration``, kept an hour.
    Every address in it must pass the outbound rule (``brain.infra.outbound``): an organisation's
    admins choose the issuer, and it must not lead Brain into the operator's network."""
    key = f"sso:metadata:{issuer}"
    found = cache.get(key)
    if isinstance(found, Metadata):
        reachable(found)  # the names are looked up again at every sign-in
        return found
    url = f"{issuer.rstrip('/')}/.well-known/openid-configuration"
    try:
        metadata = _metadata(issuer, answered(ask("GET", url)))
        reachable(metadata)
    except outbound.Refused as exc:
        raise ProviderUnreachable(_unreachable_words(url, exc)) from exc
    except (OSError, ValueError, KeyError, TypeError) as exc:
        log.warning("single sign-on: reading %s failed: %s", url, exc)
        raise ProviderUnreachable(
            f"Brain could not read the sign-in provider's settings at {url}; try again later, or ask "
            "an admin to check the issuer URL."
        ) from exc
    cache.set(key, metadata, METADATA_SECONDS)
    return metadata


def ask(method: str, url: str, *, headers: dict[str, str] | None = None, body: bytes | None = None) -> outbound.Answer:
    """One request to the provider, under the outbound rule (``outbound.fetch``): its addresses
    checked and pinned, no redirect followed, the answer within ``TIMEOUT_SECONDS`` and
    ``ANSWER_BYTES``. The provider is chosen by an organisation's admins, so it is a stranger to
    the operator's network."""
    return outbound.fetch(method, url, headers=headers, body=body, limit=ANSWER_BYTES, seconds=TIMEOUT_SECONDS)


def answered(answer: outbound.Answer) -> Any:
    """The JSON of a successful answer; ValueError for any other (a redirect included)."""
    if answer.status != 200:
        raise ValueError(f"the provider answered HTTP {answer.status}")
    return json.loads(answer.body)


def checked(url: str) -> None:
    """Refused unless ``url`` is http(s) to a host the outbound rule lets Brain reach."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise outbound.Refused(f"{url!r} is no http or https URL with a host")
    outbound.check(parts.hostname, parts.port or (443 if parts.scheme == "https" else 80))


def reachable(metadata: Metadata) -> None:
    try:
        for url in (metadata.token_endpoint, metadata.userinfo_endpoint, metadata.jwks_uri):
            checked(url)
    except outbound.Refused as exc:
        raise ProviderUnreachable(_unreachable_words(metadata.issuer, exc)) from exc


def _unreachable_words(url: str, error: BaseException) -> str:
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return outbound.unreachable("The sign-in provider", host=parts.hostname or url, port=port, error=error)


def _metadata(issuer: str, document: dict[str, Any]) -> Metadata:
    if str(document["issuer"]).rstrip("/") != issuer.rstrip("/"):
        raise ValueError(f"the document names the issuer {document['issuer']!r}, not {issuer!r}")
    offered = document.get("id_token_signing_alg_values_supported") or ["RS256"]
    algs = [alg for alg in ASYMMETRIC if alg in offered]
    if not algs:
        raise ValueError(f"the provider signs ID tokens with none of {', '.join(ASYMMETRIC)}")
    methods = document.get("token_endpoint_auth_methods_supported") or ["client_secret_basic"]
    return Metadata(
        issuer=str(document["issuer"]),
        authorization_endpoint=str(document["authorization_endpoint"]),
        token_endpoint=str(document["token_endpoint"]),
        userinfo_endpoint=str(document["userinfo_endpoint"]),
        jwks_uri=str(document["jwks_uri"]),
        signing_alg=algs[0],
        basic_auth="client_secret_basic" in methods,
    )


def client_settings(sso: SingleSignOn, metadata: Metadata) -> dict[str, Any]:
    """The settings mozilla-django-oidc reads, for one organisation's provider."""
    return {
        "OIDC_RP_SCOPES": sso.scopes,
        "OIDC_AUTHENTICATION_CALLBACK_URL": CALLBACK,
        "OIDC_USE_NONCE": True,
        "OIDC_USE_PKCE": True,
        "OIDC_VERIFY_SSL": True,
        "OIDC_TIMEOUT": TIMEOUT_SECONDS,
        "OIDC_TOKEN_USE_BASIC_AUTH": metadata.basic_auth,
        "OIDC_ALLOW_UNSECURED_JWT": False,
        "OIDC_STORE_ACCESS_TOKEN": False,
        "OIDC_STORE_ID_TOKEN": False,
        "OIDC_REDIRECT_FIELD_NAME": "next",
    }


class OrganisationClient(OIDCAuthenticationBackend):
    """mozilla-django-oidc's backend for one organisation's provider (never in the settings'
    backends: the callback calls it)."""

    def __init__(self, sso: SingleSignOn, metadata: Metadata) -> None:
        self.sso, self.metadata = sso, metadata
        self.settings = client_settings(sso, metadata)
        self.OIDC_OP_TOKEN_ENDPOINT = metadata.token_endpoint
        self.OIDC_OP_USER_ENDPOINT = metadata.userinfo_endpoint
        self.OIDC_OP_JWKS_ENDPOINT = metadata.jwks_uri
        self.OIDC_RP_CLIENT_ID = sso.client_id
        self.OIDC_RP_CLIENT_SECRET = unseal_secret(sso.sealed_client_secret)
        self.OIDC_RP_SIGN_ALGO = metadata.signing_alg
        self.OIDC_RP_IDP_SIGN_KEY: str | bytes | None = None  # the key set is read from jwks_uri
        self.UserModel = get_user_model()

    def get_settings(self, attr: str, *default: Any) -> Any:  # the library's is a static method over settings
        return self.settings.get(attr, default[0] if default else None)

    def verify_token(self, token: str, **kwargs: Any) -> dict[str, Any]:
        payload: dict[str, Any] = super().verify_token(token, **kwargs)
        audience = payload.get("aud")
        audiences = [audience] if isinstance(audience, str) else list(audience or [])
        if payload.get("iss") != self.metadata.issuer:
            raise SuspiciousOperation(f"ID token issued by {payload.get('iss')!r}, not {self.metadata.issuer!r}")
        if self.sso.client_id not in audiences:
            raise SuspiciousOperation("ID token meant for another client")
        if len(audiences) > 1 and payload.get("azp") != self.sso.client_id:
            raise SuspiciousOperation("ID token for several clients without this one as its authorised party")
        if not isinstance(payload.get("exp"), int | float):
            raise SuspiciousOperation("ID token without an expiry")  # the library checks one that is there
        return payload

    # The library's three requests to the provider, made by ``ask`` instead of ``requests``: the
    # addresses the outbound rule checked, no redirect followed, the answer bounded.

    def get_token(self, payload: dict[str, Any]) -> dict[str, Any]:
        headers = {"Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json"}
        form = dict(payload)
        if self.get_settings("OIDC_TOKEN_USE_BASIC_AUTH", False):
            pair = f"{quote(form['client_id'], safe='')}:{quote(form.pop('client_secret'), safe='')}"
            headers["Authorization"] = f"Basic {b64encode(pair.encode()).decode()}"
        token: dict[str, Any] = answered(
            ask("POST", self.metadata.token_endpoint, headers=headers, body=urlencode(form).encode())
        )
        return token

    def get_userinfo(self, access_token: str, id_token: str, payload: dict[str, Any]) -> dict[str, Any]:
        answer = ask("GET", self.metadata.userinfo_endpoint, headers={"Authorization": f"Bearer {access_token}"})
        if answer.status == 200 and answer.headers.get("content-type", "").lower().startswith("application/jwt"):
            return self.verify_token(answer.body.decode())  # user info sent as a signed JWT
        info: dict[str, Any] = answered(answer)
        return info

    def retrieve_matching_jwk(self, token: str) -> jwt.PyJWK:
        keys = answered(ask("GET", self.metadata.jwks_uri, headers={"Accept": "application/json"}))
        header = jwt.get_unverified_header(token)
        found = [
            key
            for key in keys["keys"]
            if key.get("kid") == header.get("kid") and key.get("alg", header.get("alg")) == header.get("alg")
        ]
        if not found:
            raise SuspiciousOperation("No key of the provider's key set matches the ID token.")
        return jwt.PyJWK(found[-1])

    def get_or_create_user(self, access_token: str, id_token: str, payload: dict[str, Any]) -> User:
        info = self.get_userinfo(access_token, id_token, payload)
        if info.get("sub", payload["sub"]) != payload["sub"]:
            raise SuspiciousOperation("the user info is about someone else than the ID token")
        claims = read_claims({**payload, **info}, groups_claim=self.sso.groups_claim)
        return sign_in_with_sso(sso=self.sso, issuer=self.metadata.issuer, claims=claims)


class SsoSessionBackend(BaseBackend):
    """The backend a person signed in through single sign-on is kept under in their session. It
    checks no credentials (``authenticate`` is never given any it accepts); naming it on the login
    tells a password sign-in from a single sign-on one."""

    def authenticate(self, request: HttpRequest | None, **kwargs: Any) -> None:
        return None

    def get_user(self, user_id: int) -> User | None:
        return User.objects.filter(pk=user_id, is_active=True).first()


@transaction.atomic
def reseal_client_secrets() -> tuple[int, list[str]]:
    """Seal every organisation's client secret again under the newest key (``rotate_connector_keys``):
    how many were, and the organisations whose secret no configured key opens."""
    done, unreadable = 0, []
    for sso in SingleSignOn.objects.select_for_update().select_related("org"):
        try:
            sso.sealed_client_secret = reseal(sso.sealed_client_secret)
        except CredentialsUnreadable:
            unreadable.append(sso.org.slug)
            continue
        sso.save(update_fields=["sealed_client_secret"])
        done += 1
    return done, unreadable
