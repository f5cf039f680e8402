"""Writes: threads, notes, tasks, drafts, their validation, and the indexer every write goes through."""
