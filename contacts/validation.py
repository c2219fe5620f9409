"""What a contact needs before Brain may reach them on a channel: the address each channel uses,
and what a phone number must look like. The admin form, the model and the transports all ask here."""

from __future__ import annotations

import re
from collections.abc import Iterable

# Which of the contact's address fields each channel sends to.
ADDRESS_FIELD = {"email": "email", "slack": "slack", "call": "phone", "whatsapp": "phone"}
# E.164: a plus sign, a country code that does not start with 0, at most 15 digits in all.
_E164 = re.compile(r"\+[1-9][0-9]{1,14}")
# What people type inside a phone number and Brain may drop: spaces, dashes, dots and brackets.
_PHONE_PUNCTUATION = re.compile(r"[\s\-.()]")
PHONE_FORM = "a plus sign, the country code and the number, e.g. +34600111222"


def is_e164(number: str) -> bool:
    """Whether ``number`` is an E.164 phone number such as ``+14155550100`` (no spaces or dashes)."""
    return _E164.fullmatch(number) is not None


def normalise_phone(number: str) -> str:
    """``number`` without the spaces, dashes, dots and brackets people write in phone numbers."""
    return _PHONE_PUNCTUATION.sub("", number)


def channel_problems(*, channels: Iterable[str], email: str, slack: str, phone: str) -> dict[str, str]:
    """Why these addresses do not fit these channels, by field; empty when they do.

    Every chosen channel needs its address, and a phone number, when there is one, must be E.164
    (Brain refuses to call or message anything else).
    """
    addresses = {"email": email.strip(), "slack": slack.strip(), "phone": phone.strip()}
    problems: dict[str, str] = {}
    unknown = [c for c in channels if c not in ADDRESS_FIELD]
    if unknown:
        problems["channels"] = f"Unknown channel {unknown[0]!r}; choose among {', '.join(ADDRESS_FIELD)}."
    chosen = [c for c in channels if c in ADDRESS_FIELD]
    if "email" in chosen and not addresses["email"]:
        problems["email"] = "The email channel needs an email address."
    if "slack" in chosen and not addresses["slack"]:
        problems["slack"] = "The Slack channel needs a Slack incoming-webhook URL, or a user or channel id."
    if addresses["phone"] and not is_e164(addresses["phone"]):
        problems["phone"] = f"This is not a phone number Brain can use: write it in E.164 form, {PHONE_FORM}."
    elif not addresses["phone"] and ("call" in chosen or "whatsapp" in chosen):
        problems["phone"] = f"Phone calls and WhatsApp need a phone number: {PHONE_FORM}."
    return problems
