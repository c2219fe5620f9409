"""HTML to markdown-ish text, for pages, email bodies and API uploads.

The tree is walked with explicit stacks, never recursion, and every character is read once, so
a page nested 50,000 elements deep converts like any other (see memory/tests/test_hostile_files.py).
"""

from __future__ import annotations

import re

from bs4 import BeautifulSoup, NavigableString, PageElement, Tag
from bs4.element import PreformattedString

_DROPPED_TAGS = ["script", "style", "nav", "footer", "noscript", "template", "iframe", "svg", "head"]
_MAX_INDENT = 8
_BLOCK_TAGS = {
    "h1", "h2", "h3", "h4", "h5", "h6", "p", "ul", "ol", "table", "pre", "html", "body", "main", "article",
    "section", "div", "header", "aside", "blockquote", "figure", "figcaption", "form", "fieldset", "details",
    "summary", "dl", "dt", "dd", "address", "center", "li", "tbody", "thead", "tr", "td", "th",
}  # fmt: skip


def html_to_markdown(html: str) -> str:
    """HTML text (a page, an email body, an API upload) as markdown-ish text."""
    return soup_to_markdown(BeautifulSoup(html, "html.parser"))


def soup_to_markdown(soup: BeautifulSoup) -> str:
    """A parsed page as markdown-ish text: headings, paragraphs, lists and tables kept, scripts and chrome dropped."""
    for tag in soup.find_all(_DROPPED_TAGS):
        tag.decompose()
    for br in soup.find_all("br"):
        br.replace_with("\n")
    return "\n\n".join(_blocks(soup))


def _blocks(root: Tag) -> list[str]:
    # An explicit stack rather than recursion: HTML nested 50,000 divs deep is still one page.
    blocks: list[str] = []
    run: list[PageElement] = []  # consecutive inline content forms one paragraph
    stack = [iter(root.children)]
    while stack:
        child = next(stack[-1], None)
        if child is not None and not (isinstance(child, Tag) and child.name in _BLOCK_TAGS):
            run.append(child)
            continue
        blocks.append(_inline(run))  # a block starts or a container ends: the paragraph so far is done
        run = []
        if child is None:
            stack.pop()
        elif (own := _block(child)) is not None:
            blocks += own
        else:
            stack.append(iter(child.children))
    return [block for block in blocks if block.strip()]


def _block(tag: Tag) -> list[str] | None:
    """The blocks of a tag with a shape of its own; None for a container such as a div."""
    if re.fullmatch(r"h[1-6]", tag.name):
        return [f"{'#' * int(tag.name[1])} {text}"] if (text := _inline([tag])) else []
    if tag.name == "p":
        return [_inline([tag])]
    if tag.name in ("ul", "ol"):
        return ["\n".join(_list_lines(tag))]
    if tag.name == "table":
        rows = [[_inline([cell]) for cell in row.find_all(["td", "th"], recursive=False)] for row in _rows(tag)]
        return [_table([cells for cells in rows if any(cells)])]
    if tag.name == "pre":
        return [f"```\n{tag.get_text().strip(chr(10))}\n```"] if tag.get_text().strip() else []
    return None


def _table(rows: list[list[str]]) -> str:
    """Rows as a markdown table, the first row its header, so the table is read as one (its rows
    records under their header) and not as lines of text with bars in them. A table of one row or
    one column lays a page out rather than holding records: its cells stay lines of text."""
    width = max((len(cells) for cells in rows), default=0)
    if len(rows) < 2 or width < 2:
        return "\n".join(" | ".join(cells) for cells in rows)

    def line(cells: list[str]) -> str:
        cells = [cell.replace("|", "\\|") for cell in cells] + [""] * (width - len(cells))
        return "| " + " | ".join(cells) + " |"

    return "\n".join([line(rows[0]), "|" + " --- |" * width, *(line(cells) for cells in rows[1:])])


def _rows(table: Tag) -> list[Tag]:
    # Only this table's own rows: a table nested in a cell is part of that cell's text, so each
    # character is read once however deep tables nest.
    sections = [table, *_tags(table, ["thead", "tbody", "tfoot"], recursive=False)]
    return [row for section in sections for row in _tags(section, "tr", recursive=False)]


def _tags(node: Tag, name: str | list[str], recursive: bool = True) -> list[Tag]:
    return [tag for tag in node.find_all(name, recursive=recursive) if isinstance(tag, Tag)]


def _inline(nodes: list[PageElement]) -> str:
    parts: list[str] = []
    for node in nodes:
        if isinstance(node, Tag):
            parts.append(node.get_text(" " if node.name in ("td", "th") else ""))
        elif isinstance(node, NavigableString) and not isinstance(node, PreformattedString):
            parts.append(str(node))  # comments and doctypes are PreformattedStrings
    return " ".join("".join(parts).split())


def _list_lines(top: Tag) -> list[str]:
    # Depth-first with an explicit stack; indentation stops growing at _MAX_INDENT so a list
    # nested thousands deep does not turn into megabytes of spaces.
    lines: list[str] = []
    stack = [(top, 0, iter(enumerate(_tags(top, "li", recursive=False), start=1)))]
    while stack:
        tag, depth, items = stack[-1]
        step = next(items, None)
        if step is None:
            stack.pop()
            continue
        number, item = step
        nested = [child for child in item.children if isinstance(child, Tag) and child.name in ("ul", "ol")]
        text = _inline([child for child in item.children if all(child is not sub for sub in nested)])
        lines.append(f"{'  ' * min(depth, _MAX_INDENT)}{f'{number}.' if tag.name == 'ol' else '-'} {text}")
        stack += [
            (sub, depth + 1, iter(enumerate(_tags(sub, "li", recursive=False), start=1))) for sub in reversed(nested)
        ]
    return lines
