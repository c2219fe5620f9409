"""Single sign-on with each organisation's OpenID Connect provider.

- ``provider``: the provider's metadata, read from its discovery document, and the client that
  trades a code for tokens and checks the ID token (mozilla-django-oidc's backend, per
  organisation), with the session backend a signed-in person is kept under;
- ``provisioning``: who a provider may sign in and what they become (membership, role, groups);
- ``passwords``: when the password form is refused, and the break-glass path;
- ``views`` and ``urls``: the sign-in button's address and the one callback;
- ``admin``: the settings' page in the admin, where the client secret is sealed.
"""
