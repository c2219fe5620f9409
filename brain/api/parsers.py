"""JSON bodies for the REST API: DRF's parser, with nesting too deep for Python answered as a 400."""

from __future__ import annotations

from typing import Any

from rest_framework import parsers
from rest_framework.exceptions import ParseError

from brain.core.inputs import MAX_DEPTH


class JSONParser(parsers.JSONParser):
    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        try:
            return super().parse(stream, media_type, parser_context)
        except RecursionError:  # json.load gives up about 1,000 levels down; DRF only catches ValueError
            raise ParseError(f"JSON parse error - nested too deeply; Brain takes at most {MAX_DEPTH} levels.") from None
