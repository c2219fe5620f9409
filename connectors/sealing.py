"""Connection credentials are sealed with the project's one sealing rule, ``brain.infra.sealing``."""

from brain.infra.sealing import CredentialsUnreadable, reseal, seal, seal_secret, unseal, unseal_secret

__all__ = ["CredentialsUnreadable", "reseal", "seal", "seal_secret", "unseal", "unseal_secret"]
