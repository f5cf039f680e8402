"""From conversations to knowledge: feedback, thread summaries, the graph map, distillation, consolidation."""

HARVEST_META = "hybrid-memory/harvest"
"""The ``_meta`` key of a captured remember_thread: true asks the host to draw notes, entities and the
session's digest from its turns. Here, with no import, so the hooks read it without loading the service."""
