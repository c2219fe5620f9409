"""The index under every search: embedding, vector serving, the candidate retrievers, fusion and
the per-organisation vector indexes. Writers (documents, graph) and readers (search) both use it."""
