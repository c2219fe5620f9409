"""Brain's memory: documents and their passages, the temporal graph, and the tools that read them.

Layers, lowest first; a layer imports only those below it (``tests/import_direction.py`` checks):

- ``limits``: how much a save may hold (a document's text, its fields, its metadata, an uploaded
  file), written once for every way in; it imports nothing. ``models``: Document, Chunk,
  DocumentBlock, Entity, Fact, Value, Mention, their columns' lengths from ``limits``.
- ``access``: who may see a row, what was believed as of a day, and which rows share an audience,
  in ORM and SQL form.
- ``index``: what both writers and search stand on: the embedders (``embedding``), the vectors a
  write stores and a question is read with, during a switch of models too (``serving``), the
  vector and BM25 retrievers (``candidates``), ``fusion``, retrievers run on connections of their
  own (``side_by_side``) and each large organisation's vector index (``org_indexes``).
- ``extraction``: reading sources, without a database: file formats (``files``, ``parsed``,
  ``markup``, ``mail``, ``slack``, ``transcripts``, ``whatsapp``), a source read as typed blocks
  (``blocks``, with the shapes of mail lines in ``lines``), what a name plainly is (``names``) and
  which everyday words are none (``ordinary``), and
  the rules that read sentences and records into entities, facts, dates and values (``sentences``,
  ``dates``, ``values``, ``kinds``, ``topics``, ``shapes``), ``linking`` of names to known entities
  and the words of the graph (``vocabulary``). Outside code imports the package's public names.
- ``documents``: saving and versions (``saving``), what a source says of itself: its moment,
  speakers and header fields (``source``), its blocks kept as read at ingestion (``block_rows``),
  the ingest lanes and organisations' turns (``lanes``),
  ingestion with claims, leases and sweeps and the ``READY`` seam that runs the graph's step
  (``ingestion``), what a retry can mend (``failures``), conversation order (``turns``),
  ``chunking``, access changes and deleting (``placement``), the trash, restores and the nightly
  purge (``trash``), document reads (``selectors``), who keeps a document correct and what is
  stale (``stewardship``), and the records
  sources write on documents (a commit, a pull request, an error, a mail...), their shapes, readers
  and filters (``records``).
- ``graph``: facts written (``writes``), the time rules (``supersession``), one fact said in two
  documents (``twins``), remember and forget (``memories``), entities linked (``entities``) and
  shown (``entity_views``), graph reads (``reads``) and reads from the graph back to its documents
  (``provenance``), the extraction step of ingestion (``document_facts``) with its state, retries
  and sweep (``learning``), the optional ``llm``, and admins' fixes: merging entities, their type,
  flagging broken facts (``fixes``; in the admin through ``admin_fixes``).
- ``search``: passage search (``passages``) and what it may be narrowed to (``filters``), where
  its list ends (``relevance``), the answer card (``answer``), the part of a passage a snippet
  shows (``snippets``), the evidence for ask (``evidence``), people behind a
  role (``expansion``), speakers a question names (``speakers``), the time it speaks of
  (``when``), times named by an event (``anchors``) and neighbouring turns (``rerank``); beside
  it ``code_history``: git ingestion (``git``), ``why``, and ``across`` (synced items from other systems).
- ``maintenance``: re-embedding and switches of model (``reembedding``), with the ``ELSEWHERE``
  seam for vectors other apps keep.
- The ways in: ``mcp_tools`` (every tool and prompt of the memory: ``documents``, ``ask``,
  ``graph``, ``memories``, ``code``, ``prompts``, their shared ``shapes``, and ``answers``: the
  seams through which other apps add to answers), the REST views (``api``), the admin (``admin``),
  the Celery tasks (``tasks``; their names are part of queued messages, so they stay here),
  ``health``, ``urls``, ``apps`` (where the seams are plugged), the commands (``management``:
  ``ingesting``, ``command_log``, ``commands``), and the Add knowledge page (``upload``: ``views``,
  ``adding``, ``files``, ``reading``, ``sandboxed``, ``status``, and ``attachments``: a file attached to
  what a source brought in, read as an upload is).
- ``web``: the members' pages (``search``, ``documents``, ``entities``, ``memories``, the
  library of documents and entities (``library``), a member's changes to their own documents
  (``changes``), the Trash page with Restore (``trash``) and the review of what they look after
  (``reviews``), with ``facts``, ``graph_svg``, ``highlight``, ``common``), running the tools.
"""
