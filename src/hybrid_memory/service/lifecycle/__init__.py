"""A memory's life after it is written: limits, eviction, summaries, usage, retention, forgetting, moves."""
