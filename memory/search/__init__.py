"""Search and ask: passages, evidence, role expansion, speakers, dates, anchors and reranking,
above the index, the documents and the graph."""
