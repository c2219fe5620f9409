"""Documents: saving, versions, parsing, chunking, ingestion and who may read them."""
