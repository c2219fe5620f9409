"""The side-by-side comparison a reviewer reads before approving a skill version."""

from __future__ import annotations

import difflib
import re

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


def content_diff(version: SkillVersion, against: SkillVersion | None) -> SafeString:
    """An HTML table comparing ``against`` (the version in use, if any) with ``version``.

    Only changed stretches and three lines around each are shown. HtmlDiff escapes the compared
    text itself but not the column titles, so those are escaped here.
    """
    before = against.content.splitlines() if against is not None else []
    after = version.content.splitlines()
    from_title = f"In use: version {against.version}" if against is not None else "Nothing approved yet"
    to_title = f"This version: {version.version} ({version.get_status_display().lower()})"
    table = difflib.HtmlDiff(wrapcolumn=80).make_table(
        before, after, escape(from_title), escape(to_title), context=True, numlines=3
    )
    for pattern, replacement in _MARKS:
        table = pattern.sub(replacement, table)
    table = _JUMP.sub(_named_jump, table)
    caption = f"<caption>Left: {escape(from_title)}. Right: {escape(to_title)}.</caption>"
    table = _TABLE_OPEN.sub(lambda match: match.group(1) + caption, table, count=1)
    return mark_safe(table)  # noqa: S308 (every piece of text in it was escaped above or by HtmlDiff)


def _named_jump(match: re.Match[str]) -> str:
    name = _JUMP_NAMES[match.group(2)]
    return f'{match.group(1)} title="{name}" aria-label="{name}">{match.group(2)}</a>'
