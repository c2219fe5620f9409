"""Fixtures shared by the memory tests."""

from memory.tests.embedding_stub import stub_url  # noqa: F401 (a fixture)
