"""Settings helpers that read the environment and fail loudly on a bad value."""

from __future__ import annotations

import ipaddress
import os
import re

from django.core.exceptions import ImproperlyConfigured

TRUE = {"1", "true", "yes", "on"}
FALSE = {"0", "false", "no", "off", ""}


def env_str(name: str, default: str = "") -> str:
    return os.environ.get(name, default).strip()


def env_bool(name: str, default: bool = False) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in TRUE:
        return True
    if value in FALSE:
        return False
    raise ImproperlyConfigured(f"{name} must be one of 1/0, true/false, yes/no, on/off; got {raw!r}")


def env_int(name: str, default: int, *, minimum: int | None = None, maximum: int | None = None) -> int:
    raw = os.environ.get(name)
    if raw is None or not raw.strip():
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be a whole number; got {raw!r}") from None
    if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
        raise ImproperlyConfigured(f"{name} must be between {minimum} and {maximum}; got {value}")
    return value


def env_list(name: str, default: list[str] | None = None) -> list[str]:
    raw = os.environ.get(name)
    if raw is None:
        return list(default or [])
    return [part.strip() for part in raw.split(",") if part.strip()]


def env_file_values(path: str) -> dict[str, str]:
    """Values from a KEY=VALUE file (the launcher's services.env), or nothing."""
    values: dict[str, str] = {}
    try:
        with open(path) as handle:
            for line in handle:
                key, _, value = line.partition("=")
                if key.strip() and value.strip():
                    values[key.strip()] = value.strip()
    except FileNotFoundError:
        pass
    return values


LABEL = r"[A-Za-z0-9_](?:[A-Za-z0-9_-]*[A-Za-z0-9_])?"
HOST_PATTERN = re.compile(rf"\.?{LABEL}(?:\.{LABEL})*")


def env_hosts_and_networks(name: str, default: list[str] | None = None) -> list[str]:
    """A comma-separated list of host names (``imap.example.com``, or ``.example.com`` for a domain
    and every name under it) and addresses or networks (``10.0.0.0/8``, ``::1``, ``[fd00::]/8``)."""
    entries = env_list(name, default)
    for entry in entries:
        try:
            ipaddress.ip_network(entry.replace("[", "").replace("]", ""), strict=False)
        except ValueError:
            if not HOST_PATTERN.fullmatch(entry) or entry.replace(".", "").isdigit():
                raise ImproperlyConfigured(
                    f"{name} lists host names, addresses and networks (imap.example.com, .example.com, "
                    f"10.0.0.0/8, ::1); {entry!r} is none of them"
                ) from None
    return entries
