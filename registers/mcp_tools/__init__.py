"""The registers' tools, one module a register; each appears only while its switch is on."""

from registers.mcp_tools import commitments, contradictions, glossary

__all__ = ["commitments", "contradictions", "glossary"]
