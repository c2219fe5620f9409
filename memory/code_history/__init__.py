"""Code history: git ingestion and why_code."""
