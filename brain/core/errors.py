"""One error hierarchy for every interface. MCP, REST, admin and commands translate it.

``Outage`` is apart from it: not a refusal but a model or service Brain needs that did not answer.
The modules that call such a model raise their own subclass; tool runs answer it as ``Unavailable``."""

from __future__ import annotations


class DomainError(Exception):
    """A refusal a person or a model can act on. ``message`` says what to do next."""

    code: str = "invalid"
    status: int = 400
    retryable: bool = False

    def __init__(self, message: str, **details: object) -> None:
        super().__init__(message)
        self.message = message
        self.details = details


class InvalidArgument(DomainError):
    code, status = "invalid_argument", 400


class NotFound(DomainError):
    code, status = "not_found", 404


class PermissionDenied(DomainError):
    code, status = "permission_denied", 403


class Unavailable(DomainError):
    code, status, retryable = "unavailable", 503, True


class Outage(Exception):  # noqa: N818 -- not a refusal: something Brain depends on did not answer
    """A model or service Brain needs could not be used right now. ``dependency`` names it for people."""

    dependency: str = "a service it depends on"
