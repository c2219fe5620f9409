"""The admins' overview page, at the top of the stack: it reads every app (documents, the month's
usage, what waits for people, the last 30 days) and owns no data.

- ``selectors``: the page's figures and who may see them;
- ``charts``: its SVG charts, pure functions;
- ``views`` and ``urls``: the page and its retry button, at ``/overview/``;
- ``context_processors``: the menu's link to it and the work waiting for the reader.
"""
