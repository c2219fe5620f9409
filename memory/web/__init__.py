"""The memory in the browser, for logged-in members: search, a document, an entity, and what the
member remembered. Every page acts as the viewer (``brain.faces.web.web_actor``) and shows only what
their own token would see: tools run through ``brain.mcp.invoke.execute`` (the same validation,
limits, metering and call record as MCP), the rest through the memory's selectors.

- ``search``, ``documents``, ``entities``, ``memories``: the views, one module a page.
- ``reviews``: a document's steward and "Still correct", and the To review page.
- ``facts``: facts as rows of a page, grouped by relation, and their timeline.
- ``graph_svg``: an entity's neighbourhood drawn as SVG on the server.
- ``highlight``: snippets around a query's words, escaped and marked.
- ``common``: running a tool, the message page, days, links.
"""
