"""The ID token checks Brain adds to mozilla-django-oidc's (signature, algorithm and nonce): the
issuer, the audience and the expiry. A real provider never gets them wrong, so they are tested
here with tokens signed by a key the test holds."""

from __future__ import annotations

import time
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from django.core.exceptions import SuspiciousOperation

from brain.models import SingleSignOn
from brain.sso.provider import Metadata, OrganisationClient

ISSUER = "https://id.acme.test"
KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)
PUBLIC = KEY.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)


def client() -> OrganisationClient:
    metadata = Metadata(
        issuer=ISSUER,
        authorization_endpoint=f"{ISSUER}/auth",
        token_endpoint=f"{ISSUER}/token",
        userinfo_endpoint=f"{ISSUER}/me",
        jwks_uri=f"{ISSUER}/jwks",
        signing_alg="RS256",
        basic_auth=True,
    )
    made = OrganisationClient(SingleSignOn(label="Acme ID", issuer=ISSUER, client_id="brain"), metadata)
    made.OIDC_RP_IDP_SIGN_KEY = PUBLIC  # in place of the provider's key set
    return made


def token(**changes: Any) -> str:
    claims = {"iss": ISSUER, "aud": "brain", "sub": "alice", "nonce": "n1", "exp": int(time.time()) + 300}
    claims.update(changes)
    return jwt.encode({key: value for key, value in claims.items() if value is not None}, KEY, algorithm="RS256")


def test_a_token_for_brain_from_its_issuer_passes():
    assert client().verify_token(token(), nonce="n1")["sub"] == "alice"
    assert client().verify_token(token(aud=["brain", "other"], azp="brain"), nonce="n1")["sub"] == "alice"


@pytest.mark.parametrize(
    ("changes", "nonce"),
    [
        ({"iss": "https://evil.test"}, "n1"),  # another issuer's
        ({"aud": "another-app"}, "n1"),  # meant for another client of the same provider
        ({"aud": ["another-app", "brain"]}, "n1"),  # several audiences, Brain not the authorised party
        ({"exp": None}, "n1"),  # never expires
        ({"exp": int(time.time()) - 60}, "n1"),  # expired
        ({}, "n2"),  # another sign-in's nonce
    ],
)
def test_a_token_brain_should_not_trust_is_refused(changes, nonce):
    with pytest.raises((SuspiciousOperation, jwt.InvalidTokenError)):
        client().verify_token(token(**changes), nonce=nonce)
