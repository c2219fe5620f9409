"""The Add knowledge page: ``views`` and ``urls``; files received under the count and size limits
(``files``) and kept as sent (``adding``); read into documents by a worker under the reading
budget (``reading``, in a process of its own: ``reader``); each item's status in words (``status``);
a file attached to what a source brought in (a mail's), read the same way (``attachments``)."""
