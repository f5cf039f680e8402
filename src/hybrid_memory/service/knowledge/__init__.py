"""From conversations to knowledge: capture/ (notes drawn from a session, with statements/, the
statement finder), feedback, thread summaries, the graph map, distillation."""

HARVEST_META = "hybrid-memory/harvest"
"""The ``_meta`` key of a captured remember_thread: true asks the host to draw notes, entities and the
session's digest from its turns. Here, with no import, so the hooks read it without loading the service."""
