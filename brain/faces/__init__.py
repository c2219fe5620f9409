"""What every app's pages and admin build on: the organisation, actor and payment of a page
(``web``), the organisation-scoped admin (``admin_base``), Markdown and times as pages show them
(``markdown``, ``times``), and how the login pages throttle failures (``login_throttle``). The core's
own pages and tools are ``brain.views`` and ``brain.mcp_tools``, where every app keeps its own; the
other ways in are packages of their own: ``brain.mcp``, ``brain.api``, ``brain.oauth``."""
