"""Measuring what Brain derives from labelled documents (the ``eval_extraction`` command): reading a
set (``sets``), saving it through the production path and reading back what was derived
(``deriving``), matching output to labels (``matching``), the checks beside the labels (``checks``)
and the counts and figures (``scoring``)."""
