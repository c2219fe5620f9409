"""Work on what memory already holds: re-embedding passages and facts for a new model."""
