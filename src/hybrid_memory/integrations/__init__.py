"""Agents that fill and use the memory by themselves: the Claude Code plugin's hooks, transcript readers.

Clients of the running host (:mod:`hybrid_memory.host.serve`) over its socket; their
fast path imports neither the MCP SDK nor pydantic.
"""
