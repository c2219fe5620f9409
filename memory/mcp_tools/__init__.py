"""The memory's MCP tools and prompts. Brain's app registry imports this package (``mcp_tools``
of every app), and importing it registers each tool module below with ``brain.mcp.registry``."""

from memory.mcp_tools import ask, code, documents, graph, memories, prompts

__all__ = ["ask", "code", "documents", "graph", "memories", "prompts"]
