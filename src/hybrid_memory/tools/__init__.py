"""The MCP tools: module-level functions that validate, call MemoryService, and return typed results.

They are listed, once, in :mod:`~hybrid_memory.tools.registry`. This package imports
nothing itself, so the server's handshake path (:mod:`.context`, :mod:`.protocol`,
:mod:`.prompts`) does not pull in every tool and the models they declare.
"""
