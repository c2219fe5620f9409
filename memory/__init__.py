"""Brain's memory: documents and their passages, the temporal graph, and the tools that read them.

Where things live:

- ``models``: Document, Chunk, Entity, Fact, Value, Mention.
- ``access``: who may see a row and what was believed as of a day, in ORM and SQL form.
- ``documents``: saving and versions (``saving``), what a source says of itself: its moment,
  speakers and header fields (``source``), the one document limit (``limits``), the
  ingest lanes and organisations' turns (``lanes``), ingestion with claims, leases and sweeps
  (``ingestion``), the extraction step's state and sweep (``extracting``, ``failures``), file
  formats (``parsers``, ``parsing``, ``markup``, ``mail``, ``slack``),
  ``chunking``, access changes (``placement``) and document reads (``selectors``).
- ``retrieval``: the embedders (``embedding``), the two retrievers (``candidates``), ``fusion``,
  passage search (``passages``) and model switches (``reembedding``).
- ``graph``: facts written (``writes``), the time rules (``supersession``), one fact said in two
  documents (``twins``), remember and forget (``memories``), entities linked (``entities``) and
  shown (``entity_views``), graph reads (``reads``) and reads from the graph back to its
  documents (``provenance``), the extraction step of ingestion (``document_facts``) with
  ``extraction`` (times, values, kinds, topics), ``linking`` and the optional ``llm``, the words
  of the graph (``vocabulary``), and admins' fixes: merging entities, their type, flagging broken
  facts (``fixes``; in the admin through ``memory.admin_fixes``).
- ``code_history``: git ingestion (``git``) and ``why``.
- ``upload``: the Add knowledge page (files and pasted text, and their ingestion status); files
  are stored, then read by a worker in a process under a budget (``reading``, ``reader``).
- ``mcp_tools``: every tool and prompt of the memory, their shared output ``shapes``.
- ``web``: the members' pages (search, a document, an entity, their memories), running the tools.
- ``tasks``: the Celery tasks (their names are part of queued messages, so they stay here).
"""
