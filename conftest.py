"""Shared fixtures: organisations, members, actors and tokens on the real test database."""

from __future__ import annotations

import itertools
import tempfile
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from hypothesis.configuration import set_hypothesis_home_dir

from brain.actors import Actor
from brain.models import Membership, Organisation
from brain.services import IssuedToken, add_member, create_organisation, create_token

_seq = itertools.count(1)

# Fuzz runs store no examples (database=None); Hypothesis's own caches go outside the checkout.
set_hypothesis_home_dir(Path(tempfile.gettempdir()) / "brain-hypothesis")


def make_org(slug: str | None = None, language: str = "en") -> Organisation:
    n = next(_seq)
    return create_organisation(slug=slug or f"org-{n}", name=f"Org {n}", language=language)


def make_user(org: Organisation | None = None, role: str = Membership.MEMBER, **extra: str) -> User:
    n = next(_seq)
    user = User.objects.create_user(
        username=extra.pop("username", f"user{n}"),
        email=extra.pop("email", f"user{n}@example.com"),
        password=extra.pop("password", "correct horse battery"),
        **extra,
    )
    if org is not None:
        add_member(org=org, user=user, role=role)
    return user


def make_actor(org: Organisation, user: User | None = None, scopes: str = "read,write", via: str = "mcp") -> Actor:
    user = user or make_user(org)
    membership = Membership.objects.get(org=org, user=user)
    return Actor(org=org, user=user, scopes=frozenset(scopes.split(",")), via=via, role=membership.role)


def make_token(org: Organisation, user: User | None = None, scopes: str = "read,write", **kw: object) -> IssuedToken:
    return create_token(org=org, user=user or make_user(org), scopes=scopes.split(","), **kw)  # type: ignore[arg-type]


@pytest.fixture
def org(db: None) -> Organisation:
    return make_org()


@pytest.fixture
def other_org(db: None) -> Organisation:
    return make_org()


@pytest.fixture
def actor(org: Organisation) -> Actor:
    return make_actor(org)


@pytest.fixture
def other_org_actor(other_org: Organisation) -> Actor:
    return make_actor(other_org)
