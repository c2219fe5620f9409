"""OAuth 2.1 for the MCP endpoint, on django-oauth-toolkit (docs/connect.md).

- ``connections``: a connected app is an ApiToken row made on the consent page; every access
  token issued to that app for that person acts as the row, so an OAuth caller is the same actor
  as a ``brn_`` token of the same person and access.
- ``validator``: the toolkit's request validator, with tokens bound to this server's MCP URL, and
  no refresh for a person who left the organisation or was deactivated (their token family ends).
- ``fetcher``: client metadata documents, fetched under the operator's address and host rules.
- ``clients``: the rules a client's redirect addresses must follow, for both ways of registering.
- ``codes``: a code works once; a failed exchange ends it, and a replay ends the tokens its first
  exchange began.
- ``registrations``: how many apps one address may register in an hour, counted in the database.
- ``views``: discovery metadata, registration, the consent page and the connected-apps page.
"""
