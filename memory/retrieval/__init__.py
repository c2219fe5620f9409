"""Retrieval: embedding, the passage retrievers, fusion and re-embedding."""
