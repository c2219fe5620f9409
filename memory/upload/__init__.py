"""The Add knowledge page: ``views`` and ``urls``; uploaded files read under limits (``files``),
saved through ``add_document`` (``adding``); each item's ingestion status in words (``status``)."""
