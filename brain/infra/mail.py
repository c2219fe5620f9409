"""Whether this Brain can send mail: one answer for every message it sends to a person.

A fresh install has no mail server: ``EMAIL_HOST`` is empty. Senders then do not try (there is
nothing to reach), and each page that would have relied on the mail says so in words and offers
the next step instead: the link to pass on, the page to read the report on. Any backend other
than SMTP counts as set up (an operator chose it: the console or a file while trying Brain out),
except Django's dummy backend, which sends nothing.
"""

from __future__ import annotations

from django.conf import settings

SMTP = "django.core.mail.backends.smtp.EmailBackend"
DUMMY = "django.core.mail.backends.dummy.EmailBackend"
NOT_SET_UP = "No mail server is set up"
HOW_TO_SET_UP = "an operator sets one up with EMAIL_HOST (docs/configuration.md)"


def unmailed(whom: str) -> str:
    """A sentence to add where a page says a message went out: "" when there is a mail server,
    else that ``whom`` was not emailed and what to do instead."""
    return "" if mail_is_set_up() else f" {NOT_SET_UP}, so {whom} was not emailed: tell them yourself."


def mail_is_set_up() -> bool:
    """Whether Brain has somewhere to send mail; see the module docstring."""
    backend = str(settings.EMAIL_BACKEND)
    if backend == DUMMY:
        return False
    if backend == SMTP:
        return bool(str(settings.EMAIL_HOST).strip())
    return True
