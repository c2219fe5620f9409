"""The side-by-side comparison a reviewer reads before approving a skill version: the fields
(name, description, tags, categories) and the content."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from skills.models import SkillVersion

# HtmlDiff closes every marked stretch with a plain </span> and never nests them, so each marked
# stretch can become an element that says what it is: inserted, deleted, or changed.
_MARKS = [
    (re.compile(r'<span class="diff_add">(.*?)</span>', re.S), r'<ins class="diff_add">\1</ins>'),
    (re.compile(r'<span class="diff_sub">(.*?)</span>', re.S), r'<del class="diff_sub">\1</del>'),
    (re.compile(r'<span class="diff_chg">(.*?)</span>', re.S), r'<mark class="diff_chg">\1</mark>'),
]
_TABLE_OPEN = re.compile(r"(<table\b[^>]*>)")
# The jump links in the narrow columns read only "f", "n" or "t"; give them names people can hear.
_JUMP = re.compile(r'(<a href="#difflib_chg_[^"]*")>([fnt])</a>')
_JUMP_NAMES = {"f": "First change", "n": "Next change", "t": "Back to the top of the comparison"}
_WORDS = re.compile(r"(\s+)")
NONE = '<span class="skill-none">(none)</span>'


@dataclass(frozen=True)
class FieldChange:
    """One field of the version beside the same field of the version in use."""

    label: str
    before: SafeString
    after: SafeString
    changed: bool


def content_diff(version: SkillVersion, against: SkillVersion | None) -> SafeString:
    """An HTML table comparing ``against`` (the version in use, if any) with ``version``.

    Only changed stretches and three lines around each are shown. HtmlDiff escapes the compared
    text itself but not the column titles, so those are escaped here. Its table does not wrap
    (no-break spaces, ``nowrap`` cells), which would push a long line out of the page; here the
    spaces are plain again and the page's stylesheet wraps each cell (keeping indentation).
    """
    before = against.content.splitlines() if against is not None else []
    after = version.content.splitlines()
    from_title = f"In use: version {against.version}" if against is not None else "Nothing approved yet"
    to_title = f"This version: {version.version} ({version.get_status_display().lower()})"
    table = difflib.HtmlDiff().make_table(before, after, escape(from_title), escape(to_title), context=True, numlines=3)
    table = table.replace(' nowrap="nowrap"', "").replace("&nbsp;", " ")
    for pattern, replacement in _MARKS:
        table = pattern.sub(replacement, table)
    table = _JUMP.sub(_named_jump, table)
    caption = f"<caption>Left: {escape(from_title)}. Right: {escape(to_title)}.</caption>"
    table = _TABLE_OPEN.sub(lambda match: match.group(1) + caption, table, count=1)
    return mark_safe(table)  # noqa: S308 (every piece of text in it was escaped above or by HtmlDiff)


def field_changes(version: SkillVersion, against: SkillVersion | None) -> list[FieldChange]:
    """Name, description, tags and categories of ``against`` (the version in use; none: all empty)
    beside ``version``'s: removed words or items struck through on the left, added ones
    underlined on the right."""
    old_categories = sorted(against.categories.values_list("slug", flat=True)) if against is not None else []
    new_categories = sorted(version.categories.values_list("slug", flat=True))
    return [
        _text_change("Name", against.name if against is not None else "", version.name),
        _text_change("Description", against.description if against is not None else "", version.description),
        _list_change("Tags", list(against.tags) if against is not None else [], list(version.tags)),
        _list_change("Categories", old_categories, new_categories),
    ]


def _text_change(label: str, before: str, after: str) -> FieldChange:
    old, new = _WORDS.split(before), _WORDS.split(after)
    left: list[str] = []
    right: list[str] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes():
        removed, added = escape("".join(old[i1:i2])), escape("".join(new[j1:j2]))
        if op == "equal":
            left.append(removed)
            right.append(added)
            continue
        if removed:
            left.append(f'<del class="diff_sub">{removed}</del>')
        if added:
            right.append(f'<ins class="diff_add">{added}</ins>')
    return FieldChange(
        label, _shown("".join(left) if before else ""), _shown("".join(right) if after else ""), before != after
    )


def _list_change(label: str, before: list[str], after: list[str]) -> FieldChange:
    left = [escape(item) if item in after else f'<del class="diff_sub">{escape(item)}</del>' for item in before]
    right = [escape(item) if item in before else f'<ins class="diff_add">{escape(item)}</ins>' for item in after]
    return FieldChange(label, _shown(", ".join(left)), _shown(", ".join(right)), set(before) != set(after))


def _shown(html: str) -> SafeString:
    return mark_safe(html or NONE)  # noqa: S308 (built only from escaped text and fixed markup)


def _named_jump(match: re.Match[str]) -> str:
    name = _JUMP_NAMES[match.group(2)]
    return f'{match.group(1)} title="{name}" aria-label="{name}">{match.group(2)}</a>'
