"""Connectors: live sync from the systems where a company works (docs/connectors.md).

- ``models``: a connection (kind, encrypted credentials, what to sync, into which category, its
  state and cursor) and the items it brought in, by the source's own ids.
- ``sealing``: credentials encrypted at rest with rotatable keys (MultiFernet).
- ``kinds``: what a connector is (the pages of items it reads from a cursor, the tools it offers)
  and the registry.
- ``github`` (with ``github_history``): GitHub's issues and pull requests, commits, releases and
  deployments, over its REST API.
- ``slack``: Slack channels' threads and days, over its Web API; private channels read by their members.
- ``sentry``: Sentry's issues with their first and latest events, and releases, over its web API.
- ``listing``: walking a paged listing from a saved position, resumable between pages.
- ``hooks``: the sources' webhooks (GitHub, Slack's Events API).
- ``imap``: the messages of a mailbox's folders, with their attachments, over IMAP.
- ``sync``: one sync of one connection: leased so two workers never run it at once, resumable
  page by page, idempotent by source id, errors kept in words.
- ``selectors``: the connection an admin manages, fetched for a change.
- ``grants``, ``mcp_tools``, ``github_live``, ``slack_live``: the ``<kind>_<tool>`` tools a
  connection gives assistants, asked live within what the caller reads, and the admins' grants of
  the ACTION tools among them.
- ``tasks``, ``views``: the beat sweep and the Connectors page.
"""
