"""A memory's life after it is written: limits, eviction and its summaries, retention, forgetting."""
