"""The glossary: the organisation's own words, found in its text and defined by people."""
