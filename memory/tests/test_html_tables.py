"""A table written in HTML inside a markdown page (real handbooks keep their version tables so) is
read as a markdown table is: each row a record said as one sentence, no tag in any fact, and the
cells of a comments column no entities."""

import pytest

from memory.extraction import Kind, read_blocks
from memory.models import Entity, Fact
from memory.tests.factories import save

pytestmark = pytest.mark.django_db

PAGE = """# Asset Management Policy

**Policy Owner**: Tech Ops

Assets shall be recorded in the inventory.

<table>
  <tr>
    <th>Version</th>
    <th>Date</th>
    <th>Comments</th>
    <th>Author</th>
  </tr>
  <tr>
    <td>1.0</td>
    <td>2022-03-15</td>
    <td>First Version</td>
    <td>Nicky Van Maanen</td>
  </tr>
  <tr>
    <td>1.1</td>
    <td>2023-05-31</td>
    <td>Annual Review</td>
    <td>Dora Neumeier</td>
  </tr>
</table>
"""


def test_each_row_of_an_html_table_is_a_row_block_at_its_own_place():
    blocks = read_blocks(PAGE, markdown=True)
    rows = [b for b in blocks if b.kind == Kind.ROW]
    assert [b.cells for b in rows] == [
        ("1.0", "2022-03-15", "First Version", "Nicky Van Maanen"),
        ("1.1", "2023-05-31", "Annual Review", "Dora Neumeier"),
    ]
    assert all(b.header == ("Version", "Date", "Comments", "Author") for b in rows)
    assert [PAGE[b.start : b.end].split()[0] for b in rows] == ["<tr>", "<tr>"]
    assert "Dora" in PAGE[rows[1].start : rows[1].end]
    assert rows[0].sentence() == "1.0: Date: 2022-03-15; Comments: First Version; Author: Nicky Van Maanen."


def test_a_row_is_one_fact_without_tags_and_its_comments_are_no_entities(actor):
    save(actor, "Asset Management Policy", PAGE, content_type="text/markdown")
    statements = list(Fact.objects.values_list("statement", flat=True))
    assert "1.1: Date: 2023-05-31; Comments: Annual Review; Author: Dora Neumeier." in statements
    assert not any("<" in s or "Author 1.0" in s for s in statements)
    names = set(Entity.objects.values_list("name", flat=True))
    assert {"Nicky Van Maanen", "Dora Neumeier"} <= names
    assert not names & {"First Version", "Annual Review"}


def test_only_a_whole_cell_of_everyday_words_in_an_untyped_column_is_no_name():
    from memory.extraction import everyday_cells

    header = ("Release", "Notes", "Owner", "Tool")
    assert everyday_cells(header, ("Spring Launch", "Annual Review", "Dora Neumeier", "Slack"), 0) == {"annual review"}
    assert everyday_cells(header, ("1.2", "Slack", "Head Office", "Big Data"), 0) == set()  # one word; typed columns
    assert everyday_cells(header, ("1.3", "Moved to Jamf", "", ""), 0) == set()  # a name among the words
