from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from brain.core.errors import InvalidArgument, NotFound
from brain.core.services import authenticate_token, create_token, hash_token, revoke_token
from brain.models import ApiToken, AuditRecord, Membership
from conftest import make_actor, make_org, make_token, make_user

pytestmark = pytest.mark.django_db


def test_it_stores_only_a_hash_and_a_readable_prefix(org):
    issued = make_token(org)
    token = ApiToken.objects.get(pk=issued.token.pk)
    assert issued.plaintext.startswith(f"brn_{token.prefix}_")
    assert token.hashed == hash_token(issued.plaintext)
    assert issued.plaintext not in str(ApiToken.objects.filter(pk=token.pk).values().get())


def test_it_authenticates_an_active_token_and_records_the_use(org):
    issued = make_token(org)
    token = authenticate_token(issued.plaintext)
    assert token is not None
    assert token.pk == issued.token.pk
    assert ApiToken.objects.get(pk=token.pk).last_used_at is not None


@pytest.mark.parametrize("value", ["", "brn_", "not-a-token", "brn_" + "x" * 300])
def test_it_rejects_garbage(org, value):
    make_token(org)
    assert authenticate_token(value) is None


def test_it_rejects_revoked_and_expired_tokens(org):
    revoked = make_token(org)
    revoke_token(actor=make_actor(org, revoked.token.user), token_id=revoked.token.pk)
    expired = make_token(org)
    ApiToken.objects.filter(pk=expired.token.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert authenticate_token(revoked.plaintext) is None
    assert authenticate_token(expired.plaintext) is None


def test_it_rejects_tokens_of_deactivated_users(org):
    issued = make_token(org)
    issued.token.user.is_active = False
    issued.token.user.save()
    assert authenticate_token(issued.plaintext) is None


def test_write_scope_implies_read_and_personal_implies_write(org):
    assert make_token(org, scopes="write").token.scopes == ["read", "write"]
    assert make_token(org, scopes="personal").token.scopes == ["personal", "read", "write"]


@pytest.mark.parametrize("scopes", [[], ["admin"], ["read", "delete"]])
def test_it_refuses_unknown_scopes(org, scopes):
    with pytest.raises(InvalidArgument):
        create_token(org=org, user=make_user(org), scopes=scopes)


def test_it_refuses_tokens_for_non_members(org, other_org):
    outsider = make_user(other_org)
    with pytest.raises(NotFound):
        create_token(org=org, user=outsider, scopes=["read"])


def test_it_sets_an_expiry_and_refuses_absurd_ones(org):
    issued = make_token(org, expires_in_days=30)
    assert issued.token.expires_at is not None
    assert timedelta(days=29) < issued.token.expires_at - timezone.now() <= timedelta(days=30)
    with pytest.raises(InvalidArgument):
        make_token(org, expires_in_days=0)


def test_members_revoke_only_their_own_tokens_and_admins_any_in_their_org(org):
    mine, theirs = make_token(org), make_token(org)
    member = make_actor(org, mine.token.user)
    with pytest.raises(NotFound):
        revoke_token(actor=member, token_id=theirs.token.pk)
    admin = make_actor(org, make_user(org, role="admin"))
    revoke_token(actor=admin, token_id=theirs.token.pk)
    assert authenticate_token(theirs.plaintext) is None


def test_an_admin_cannot_revoke_another_organisations_token(org):
    elsewhere = make_token(make_org())
    admin = make_actor(org, make_user(org, role="admin"))
    with pytest.raises(NotFound):
        revoke_token(actor=admin, token_id=elsewhere.token.pk)
    assert authenticate_token(elsewhere.plaintext) is not None


def test_issuing_and_revoking_tokens_leaves_audit_records(org):
    member = make_user(org)
    issued = create_token(org=org, user=member, scopes=["read"], via="web")
    by_operator = create_token(org=org, user=member, scopes=["read"])
    revoke_token(actor=make_actor(org, member, via="web"), token_id=issued.token.pk)
    records = AuditRecord.objects.filter(org=org).order_by("pk")
    assert [(r.action, r.user, r.via) for r in records] == [
        ("token.created", member, "web"),
        ("token.created", None, "command"),
        ("token.revoked", member, "web"),
    ]
    assert records[1].target == f"token brn_{by_operator.token.prefix}"


def test_a_user_who_left_the_organisation_can_still_revoke_their_token_on_the_connect_page(org):
    issued = make_token(org)
    Membership.objects.filter(org=org, user=issued.token.user).delete()
    client = Client()
    client.force_login(issued.token.user)
    page = client.post(f"/connect/tokens/{issued.token.pk}/revoke/", {"confirm": "yes"}, follow=True)
    assert page.status_code == 200
    assert "revoked" in page.content.decode()
    assert ApiToken.objects.get(pk=issued.token.pk).revoked_at is not None
