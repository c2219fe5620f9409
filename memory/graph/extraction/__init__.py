"""Extraction of entities, facts, dates and values from text, deterministic by default."""
